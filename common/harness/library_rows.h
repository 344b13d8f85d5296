/* The library rows (cuDNN's) of a run: each row the variants that will run are compared
 * with, once, however many variants share it, and for each variant the fastest of its
 * rows, the time its vs cuDNN ratio is taken against. */
#ifndef LIBRARY_ROWS_H
#define LIBRARY_ROWS_H

#include "op.h"

#ifdef __cplusplus
extern "C" {
#endif

struct library_rows {
    struct op_baseline row[OP_MAX_BASELINES];
    double ms[OP_MAX_BASELINES]; /* the row's median time; NAN until it ran */
    int count;
};

/* Adds the rows variant v is compared with (v NULL: those the op times whatever runs),
 * each once; the op must declare baselines. */
void library_rows_add(struct library_rows *l, const struct op *op, const struct op_variant *v);
/* The fastest row variant v is compared with that ran; NAN when none did. */
double library_rows_fastest(const struct library_rows *l, const struct op *op,
                            const struct op_variant *v);

#ifdef __cplusplus
}
#endif

#endif
