/* Lesson 10, variant factored: out = c (x) S is rank 1 in c0, so keep it factored:
 * write S once (B x Q x Q) instead of c[c0] * S into Co blocks, cutting the output
 * traffic by Co. The box filter is box_tile.cuh's. factored_symmetric also uses
 * S(q, q') = S(q', q), which holds because every gamma block is a covariance: it
 * computes the lags i0' >= i0 only (about half the gamma reads and half the blocks)
 * and writes each result twice, the mirrored copy through a transposed shared tile. */
#include "box_tile.cuh"

extern "C" void covariance_factored(const struct cov_args *a)
{
    launch_cov_box<BOX_FACTORED>(a);
}

extern "C" void covariance_factored_symmetric(const struct cov_args *a)
{
    launch_cov_box<BOX_FACTORED_SYMMETRIC>(a);
}
