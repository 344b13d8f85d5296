/* What a lesson is: a name, its problem (an op: the convolution of conv_op.h made from
 * the lesson's kernel variants, or an op of its own) and the one call its main() makes.
 * The harness does everything else: flags, inputs, their conversion to each variant's
 * dtype and layout, the gold check, timing, the library rows of the same precision and
 * layout, the table and the CSV. */
#ifndef LESSON_H
#define LESSON_H

#include "op.h"

#ifdef __cplusplus
extern "C" {
#endif

struct lesson {
    const char *name;  /* the folder name, e.g. "04_shared_tiling" */
    const char *title; /* one line */
    const char *default_preset;
    int min_compute_capability; /* e.g. 75 for sm_75; a lesson of CPU variants needs none */
    const struct op *op;
};

/* Runs the lesson as the command line asks, then releases its op (op.release). Returns
 * the process exit code: 0 all passed, 1 a check failed or runtime error, 2 usage or
 * input error, 77 no usable GPU. */
int lesson_main(const struct lesson *lesson, int argc, char **argv);

#ifdef __cplusplus
}
#endif

#endif
