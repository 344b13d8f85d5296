/* How many GPUs one of lesson 12's extra programs runs on. */
#ifndef SEVERAL_GPUS_H
#define SEVERAL_GPUS_H

#define EXIT_SKIP 77

/* `asked` is the program's --gpus (0: every one). Returns 0 with *gpus (2 or more),
 * else the exit code after one line: EXIT_SKIP when the machine has fewer than 2 GPUs,
 * EXIT_USAGE (int_flags.h) when --gpus asks for more than it has, or for 1. */
int several_gpus(const char *program, int asked, int *gpus);

#endif
