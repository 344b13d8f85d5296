/* The command lines of lesson 12's extra programs: flags that each take one whole
 * number in a range, `--name value`, and --help. */
#ifndef INT_FLAGS_H
#define INT_FLAGS_H

#include <stdbool.h>

#define EXIT_USAGE 2

struct int_flag {
    const char *name; /* with its dashes: "--reps" */
    const char *help;
    long long lo, hi;
    long long value; /* the default, then the command line's */
};

/* Reads argv into flags. --help prints `usage` and a line per flag (its range and
 * default) and sets *done. Returns 0, or EXIT_USAGE after one error line that names
 * the flag. */
int int_flags_parse(int argc, char **argv, const char *usage, struct int_flag *flags, int count,
                    bool *done);

#endif
