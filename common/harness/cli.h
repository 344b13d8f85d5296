/* The command line every lesson accepts (see --help), parsed and validated once,
 * before any GPU work. */
#ifndef CLI_H
#define CLI_H

#include <stdbool.h>
#include <stdint.h>

#include "lesson.h"
#include "options.h"

#ifdef __cplusplus
extern "C" {
#endif

#define DEFAULT_SEED 1
#define GPU_DEFAULT_REPS 50
#define GPU_DEFAULT_WARMUP 5
#define CPU_DEFAULT_REPS 3
#define CPU_DEFAULT_WARMUP 1
#define MAX_REPS 100000

enum cli_status { CLI_RUN, CLI_EXIT_OK, CLI_EXIT_USAGE };

/* On CLI_EXIT_USAGE one line naming the flag has been printed to stderr. */
enum cli_status parse_options(const struct lesson *lesson, int argc, char **argv,
                              struct options *o);

/* "HxW" with positive sizes; false on anything else. */
bool parse_size(const char *text, int *h, int *w);
/* A whole decimal number in [lo, hi]; false on anything else. */
bool parse_int_in(const char *text, long lo, long hi, long *value);

#ifdef __cplusplus
}
#endif

#endif
