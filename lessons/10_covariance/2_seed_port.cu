/* Lesson 10, variant seed_port: seed 001's final Numba kernel written in CUDA C.
 * One thread per batch element walks every output pair (i0, j0, i0', j0'), sums the
 * Ci * k^2 window terms, and adds c[c0] times the sum into each output channel's
 * diagonal block, on the full 7-D tensors. The seed added with cuda.atomic.add; no two
 * threads share an element here (each owns its batch element), so a plain += does the
 * same. A batch of B launches B threads on a GPU that holds tens of thousands: the
 * lesson's page works out what that costs. */
#include "cuda_check.h"
#include "kernels.h"

#define SEED_BLOCK 128

/* No __launch_bounds__: with it, ptxas 13.0 caps sm_90 at 48 registers and spills. */
__global__ void
    cov_seed_port(float *__restrict__ out, const float *__restrict__ gamma,
                  const float *__restrict__ mu, const float *__restrict__ c, struct conv_shape s)
{
    const int ho = cov_out_h(&s), wo = cov_out_w(&s);
    /* The seed's grid-stride loop over the batch. */
    /* [page: seed-port-loops] */
    for (int b = blockIdx.x * blockDim.x + threadIdx.x; b < s.n; b += gridDim.x * blockDim.x)
        for (int i0 = 0; i0 < ho; i0++)
            for (int j0 = 0; j0 < wo; j0++)
                for (int i1 = 0; i1 < ho; i1++)
                    for (int j1 = 0; j1 < wo; j1++) {
                        float v = 0.0f;
                        for (int ci = 0; ci < s.cin; ci++)
                            for (int ii = 0; ii < s.ksize; ii++)
                                for (int ji = 0; ji < s.ksize; ji++) {
                                    const size_t p = (size_t)(i0 + ii) * s.w + (j0 + ji);
                                    const size_t p2 = (size_t)(i1 + ii) * s.w + (j1 + ji);
                                    v += mu[cov_mu_at(&s, b, ci, p)] * mu[cov_mu_at(&s, b, ci, p2)] +
                                         gamma[cov_gamma_full_at(&s, b, ci, p, ci, p2)];
                                }
                        const size_t q = (size_t)i0 * wo + j0, q2 = (size_t)i1 * wo + j1;
                        for (int c0 = 0; c0 < s.cout; c0++)
                            out[cov_out_full_at(&s, b, c0, q, c0, q2)] += v * c[c0];
                    }
    /* [/page: seed-port-loops] */
}

extern "C" double covariance_seed_port_iterations(const struct conv_shape *s)
{
    const double q = (double)cov_out_positions(s);
    return q * q * s->cin * s->ksize * s->ksize;
}

extern "C" void covariance_seed_port(const struct cov_args *a)
{
    const unsigned blocks = (unsigned)((a->shape.n + SEED_BLOCK - 1) / SEED_BLOCK);
    cov_seed_port<<<blocks, SEED_BLOCK, 0, a->stream>>>(a->out, a->gamma, a->mu, a->c, a->shape);
    CUDA_CHECK_LAUNCH();
}
