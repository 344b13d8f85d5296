/* Lesson 10, variant thread_per_output: one thread per element (b, q, q') of the
 * diagonal blocks, on the compact layouts. Consecutive threads take consecutive q':
 * within an output row they read consecutive gamma columns (the window slides along
 * the same diagonal of gamma for every thread) and write consecutive outputs, so
 * every access of a warp is coalesced. The sum S does not depend on c0, so each
 * thread computes it once and adds c[c0] * S to all Co blocks. Each gamma value is
 * still fetched by the k^2 outputs whose windows cover it: from L1 or L2, not DRAM. */
#include "cuda_check.h"
#include "kernels.h"

#define TPO_BLOCK 256
/* Grid rows (one per q) and layers (one per b) the launch asks for at most; the
 * kernel strides over the rest, so any Q and B run. */
#define TPO_MAX_GRID_YZ 65535

/* No __launch_bounds__: with it, ptxas 13.0 caps sm_90 at 32 registers and spills. */
__global__ void
    cov_thread_per_output(float *__restrict__ out, const float *__restrict__ gamma,
                          const float *__restrict__ mu, const float *__restrict__ c,
                          struct conv_shape s)
{
    const int wo = cov_out_w(&s);
    const int q_count = cov_out_h(&s) * wo;
    /* [page: thread-per-output] */
    const int q2 = blockIdx.x * blockDim.x + threadIdx.x;
    if (q2 >= q_count)
        return;
    const int i1 = q2 / wo, j1 = q2 % wo;
    for (int b = blockIdx.z; b < s.n; b += gridDim.z)
        for (int q = blockIdx.y; q < q_count; q += gridDim.y) {
            const int i0 = q / wo, j0 = q % wo;
            float sum = 0.0f;
            for (int ci = 0; ci < s.cin; ci++) {
                const float *mu_c = mu + cov_mu_at(&s, b, ci, 0);
                const float *g_c = gamma + cov_gamma_diag_at(&s, b, ci, 0, 0);
                for (int di = 0; di < s.ksize; di++) {
                    const size_t p = (size_t)(i0 + di) * s.w + j0;
                    const size_t p2 = (size_t)(i1 + di) * s.w + j1;
                    const float *g_row = g_c + p * cov_in_positions(&s) + p2;
                    for (int dj = 0; dj < s.ksize; dj++) {
                        /* gd[p + dj][p2 + dj]: one step along gamma's diagonal. */
                        const float g = g_row[(size_t)dj * (cov_in_positions(&s) + 1)];
                        sum += fmaf(mu_c[p + dj], mu_c[p2 + dj], g);
                    }
                }
            }
            for (int c0 = 0; c0 < s.cout; c0++) {
                float *o = out + cov_out_blocks_at(&s, b, c0, q, q2);
                *o = fmaf(c[c0], sum, *o);
            }
        }
    /* [/page: thread-per-output] */
}

extern "C" void covariance_thread_per_output(const struct cov_args *a)
{
    const struct conv_shape *s = &a->shape;
    const int q_count = (int)cov_out_positions(s);
    const dim3 grid((unsigned)((q_count + TPO_BLOCK - 1) / TPO_BLOCK),
                    (unsigned)(q_count < TPO_MAX_GRID_YZ ? q_count : TPO_MAX_GRID_YZ),
                    (unsigned)(s->n < TPO_MAX_GRID_YZ ? s->n : TPO_MAX_GRID_YZ));
    cov_thread_per_output<<<grid, TPO_BLOCK, 0, a->stream>>>(a->out, a->gamma, a->mu, a->c, *s);
    CUDA_CHECK_LAUNCH();
}
