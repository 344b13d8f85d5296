/* Lesson 10, variants channels_summed and channels_summed_factored: the sum over input
 * channels first. S(b,q,q') sums Ci*k^2 terms, but the window sum and the channel sum
 * commute: with
 *     G[b][p][p'] = sum_ci gd[b][ci][p][p'] + mu[b][ci][p] * mu[b][ci][p']
 * S is a k x k box sum along G's diagonals, S(q, q') = sum_{di,dj} G[p(q)+d][p(q')+d].
 * Pass 1 streams every gamma block once, Ci loads in flight per thread, and writes G
 * (B*P^2 floats: Ci times smaller than gamma, it stays in L2). Pass 2 reads k^2 values
 * of G per output from L2 and adds c[c0] * S into each output block, or S once into the
 * factored layout. Both passes walk their elements with consecutive threads on
 * consecutive p' (q'): every global access of a warp is coalesced, in the compact and
 * in the seed's full 7-D layout alike, which differ only in strides. */
#include <limits.h>

#include "cuda_check.h"
#include "kernels.h"

#define SUM_BLOCK 256
/* Blocks per SM the grid-stride launches ask for: enough loads in flight. */
#define SUM_BLOCKS_PER_SM 8
/* Output blocks updated together in pass 2: their loads are issued before any store,
 * so a thread waits for one round trip per group instead of one per block. */
#define C0_GROUP 8

/* Both passes split a flat element index into (b, row, column) with divisions, which
 * are several times cheaper in 32 bits: Index is unsigned when the count fits. */

/* Pass 1: G from the diagonal blocks of gamma; full is the seed's 7-D layout. */
template <typename Index>
__global__ void __launch_bounds__(SUM_BLOCK)
    cov_sum_channels(float *__restrict__ g, const float *__restrict__ gamma,
                     const float *__restrict__ mu, struct conv_shape s, bool full)
{
    const Index P = (Index)cov_in_positions(&s);
    const Index count = (Index)s.n * P * P;
    /* Distance between channel ci and ci+1 of one element: a whole block in the
     * compact layout, a block row plus one P-row step along the diagonal in the full one. */
    const size_t ci_stride = full ? P * ((size_t)s.cin * P + 1) : P * P;
    for (Index e = blockIdx.x * blockDim.x + threadIdx.x; e < count; e += gridDim.x * blockDim.x) {
        const Index p2 = e % P, p = e / P % P;
        const int b = (int)(e / (P * P));
        const float *gm = gamma + (full ? cov_gamma_full_at(&s, b, 0, p, 0, p2)
                                        : cov_gamma_diag_at(&s, b, 0, p, p2));
        const float *m = mu + cov_mu_at(&s, b, 0, 0);
        float sum = 0.0f;
#pragma unroll 16
        for (int ci = 0; ci < s.cin; ci++)
            sum += fmaf(m[(size_t)ci * P + p], m[(size_t)ci * P + p2], gm[ci * ci_stride]);
        g[e] = sum;
    }
}

/* Output element (b, c0, q, q') in the compact blocks or the seed's full layout. */
static __device__ float *block_at(float *out, const struct conv_shape &s, enum cov_layout layout,
                                  int b, int c0, size_t q, size_t q2)
{
    return out + (layout == COV_FULL ? cov_out_full_at(&s, b, c0, q, c0, q2)
                                     : cov_out_blocks_at(&s, b, c0, q, q2));
}

/* Pass 2: the k x k box sum of G for every (b, q, q'), added into the output. */
template <typename Index>
__global__ void __launch_bounds__(SUM_BLOCK)
    cov_box_taps(float *__restrict__ out, const float *__restrict__ g,
                 const float *__restrict__ c, struct conv_shape s, enum cov_layout layout)
{
    const size_t P = cov_in_positions(&s);
    const Index Q = (Index)cov_out_positions(&s);
    const int wo = cov_out_w(&s);
    const Index count = (Index)s.n * Q * Q;
    for (Index e = blockIdx.x * blockDim.x + threadIdx.x; e < count; e += gridDim.x * blockDim.x) {
        const Index q2 = e % Q, q = e / Q % Q;
        const int b = (int)(e / (Q * Q));
        const int i0 = (int)(q / wo), j0 = (int)(q % wo), i1 = (int)(q2 / wo), j1 = (int)(q2 % wo);
        const float *gb = g + (size_t)b * P * P;
        float sum = 0.0f;
        for (int di = 0; di < s.ksize; di++) {
            const float *row = gb + ((size_t)(i0 + di) * s.w + j0) * P + (size_t)(i1 + di) * s.w + j1;
            for (int dj = 0; dj < s.ksize; dj++)
                sum += row[(size_t)dj * (P + 1)];
        }
        if (layout == COV_FACTORED) {
            out[cov_out_factored_at(&s, b, q, q2)] += sum;
            continue;
        }
        for (int c0 = 0; c0 < s.cout; c0 += C0_GROUP) {
            const int n = min(C0_GROUP, s.cout - c0);
            float was[C0_GROUP];
#pragma unroll
            for (int m = 0; m < C0_GROUP; m++)
                if (m < n)
                    was[m] = *block_at(out, s, layout, b, c0 + m, q, q2);
#pragma unroll
            for (int m = 0; m < C0_GROUP; m++)
                if (m < n)
                    *block_at(out, s, layout, b, c0 + m, q, q2) = fmaf(c[c0 + m], sum, was[m]);
        }
    }
}

static unsigned grid_for(size_t count)
{
    int device, sms;
    CUDA_CHECK(cudaGetDevice(&device));
    CUDA_CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device));
    const size_t wanted = (count + SUM_BLOCK - 1) / SUM_BLOCK;
    const size_t most = (size_t)sms * SUM_BLOCKS_PER_SM;
    return (unsigned)(wanted < most ? wanted : most);
}

extern "C" size_t covariance_channels_summed_scratch(const struct conv_shape *s)
{
    return (size_t)s->n * cov_in_positions(s) * cov_in_positions(s) * sizeof(float);
}

extern "C" void covariance_channels_summed(const struct cov_args *a, enum cov_layout layout)
{
    const struct conv_shape *s = &a->shape;
    const size_t P = cov_in_positions(s), Q = cov_out_positions(s);
    float *g = (float *)a->scratch;
    const size_t g_count = s->n * P * P, out_count = s->n * Q * Q;
    const bool small = g_count <= UINT_MAX / 2 && out_count <= UINT_MAX / 2;
    if (small)
        cov_sum_channels<unsigned><<<grid_for(g_count), SUM_BLOCK, 0, a->stream>>>(
            g, a->gamma, a->mu, *s, layout == COV_FULL);
    else
        cov_sum_channels<size_t><<<grid_for(g_count), SUM_BLOCK, 0, a->stream>>>(
            g, a->gamma, a->mu, *s, layout == COV_FULL);
    CUDA_CHECK_LAUNCH();
    if (small)
        cov_box_taps<unsigned><<<grid_for(out_count), SUM_BLOCK, 0, a->stream>>>(a->out, g, a->c,
                                                                                 *s, layout);
    else
        cov_box_taps<size_t><<<grid_for(out_count), SUM_BLOCK, 0, a->stream>>>(a->out, g, a->c,
                                                                               *s, layout);
    CUDA_CHECK_LAUNCH();
}
