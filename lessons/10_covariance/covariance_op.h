/* Lesson 10's problem as a harness op (op.h): its tensors in each layout, how they are
 * drawn, and the check of a result against the float64 gold (covariance.h). */
#ifndef COVARIANCE_OP_H
#define COVARIANCE_OP_H

#include "covariance.h"
#include "op.h"

/* op_args.tensor[] of every layout, in this order. */
enum cov_tensor { COV_MU, COV_GAMMA, COV_C, COV_OUT, COV_TENSOR_COUNT };

extern const char *const cov_layout_names[]; /* indexed by enum cov_layout */
#define COV_LAYOUT_COUNT 3

int cov_op_tensors(const struct conv_shape *s, int layout, struct op_tensor *t);
/* mu and the diagonal blocks of gamma uniform in [-1, 1), each block symmetric in
 * (p, p') as a covariance is; c in [0, 1); the output before the op uniform in
 * [-1, 1). In the full layouts every entry outside the diagonal blocks is NaN: a
 * kernel that reads one gets a NaN, a kernel that writes one is caught by the check. */
void cov_op_draw(const struct conv_shape *s, int layout, uint64_t seed, void *const *tensor);
/* Every element of the diagonal blocks against its gold while that costs at most
 * COV_CHECK_MAX_TERMS window terms, else the rows q of a sample (every q', every c0, the
 * first and last rows included); and in the full layout every entry outside the blocks
 * still NaN. */
struct check_result cov_op_check(const struct conv_shape *s, int layout, void *const *before,
                                 void *const *after);
double cov_op_min_bytes(const struct conv_shape *s, int layout);
double cov_op_flops(const struct conv_shape *s, int layout);

#define COV_CHECK_MAX_TERMS (1.0 * (1 << 28))

#endif
