/* Lesson 10, variants channels_summed and channels_summed_factored: the sum over input
 * channels first. S(b,q,q') sums Ci*k^2 terms, but the window sum and the channel sum
 * commute: with
 *     G[b][p][p'] = sum_ci gd[b][ci][p][p'] + mu[b][ci][p] * mu[b][ci][p']
 * S is a k x k box sum along G's diagonals, S(q, q') = sum_{di,dj} G[p(q)+d][p(q')+d].
 * Pass 1 (here) streams every gamma block once and writes G (B*P^2 floats: Ci times
 * smaller than gamma, it stays in L2); pass 2 (channel_sum.cuh) reads k^2 values of G
 * per output from L2 and adds c[c0] * S into each output block, or S once into the
 * factored layout. Every global access of a warp is coalesced, in the compact and in
 * the seed's full 7-D layout alike, which differ only in strides. */
#include "channel_sum.cuh"

/* Input channels whose loads a thread issues together. */
#define CI_BATCH 4

/* Pass 1: G from the diagonal blocks of gamma; full is the seed's 7-D layout. Each
 * thread sums V consecutive columns p' of one row p over the channels. */
template <typename Index, int V>
__global__ void __launch_bounds__(SUM_BLOCK)
    cov_sum_channels(float *__restrict__ g, const float *__restrict__ gamma,
                     const float *__restrict__ mu, struct conv_shape s, bool full)
{
    let_dependent_grid_start();
    const Index P = (Index)cov_in_positions(&s);
    const Index count = (Index)s.n * P * P;
    /* Distance between channel ci and ci+1 of one element: a whole block in the
     * compact layout, a block row plus one P-row step along the diagonal in the full one. */
    const size_t ci_stride = full ? P * ((size_t)s.cin * P + 1) : P * P;
    const Index step = (Index)gridDim.x * blockDim.x * V;
    for (Index e = ((Index)blockIdx.x * blockDim.x + threadIdx.x) * V; e < count; e += step) {
        const Index p2 = e % P, p = e / P % P;
        const int b = (int)(e / (P * P));
        const float *gm = gamma + (full ? cov_gamma_full_at(&s, b, 0, p, 0, p2)
                                        : cov_gamma_diag_at(&s, b, 0, p, p2));
        float sum[V];
        channel_sums<CI_BATCH>(sum, gm, ci_stride, mu + cov_mu_at(&s, b, 0, 0), P, p, p2, s.cin);
        store_floats(g + e, sum);
    }
}

template <typename Index, int V> static void sum_channels(const struct cov_args *a, bool full)
{
    const struct conv_shape *s = &a->shape;
    const size_t count = s->n * cov_in_positions(s) * cov_in_positions(s);
    auto kernel = cov_sum_channels<Index, V>;
    kernel<<<resident_grid(kernel, count / V), SUM_BLOCK, 0, a->stream>>>(
        (float *)a->scratch, a->gamma, a->mu, *s, full);
    CUDA_CHECK_LAUNCH();
}

template <typename Index> static void both_passes(const struct cov_args *a, enum cov_layout layout)
{
    if (cov_in_positions(&a->shape) % 4 == 0)
        sum_channels<Index, 4>(a, layout == COV_FULL);
    else
        sum_channels<Index, 1>(a, layout == COV_FULL);
    box_taps<Index>(a, layout);
}

extern "C" size_t covariance_channels_summed_scratch(const struct conv_shape *s)
{
    return (size_t)s->n * cov_in_positions(s) * cov_in_positions(s) * sizeof(float);
}

extern "C" void covariance_channels_summed(const struct cov_args *a, enum cov_layout layout)
{
    if (counts_fit_32_bits(&a->shape))
        both_passes<unsigned>(a, layout);
    else
        both_passes<size_t>(a, layout);
}
