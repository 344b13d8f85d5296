/* What the channels_summed variants share: G in the scratch buffer,
 *     G[b][p][p'] = sum_ci gd[b][ci][p][p'] + mu[b][ci][p] * mu[b][ci][p']   (B x P x P),
 * written by a first pass (6_channels_summed.cu, 7_channels_summed_symmetric.cu), and the
 * second pass that turns it into the output: S(q, q') is a k x k box sum along G's
 * diagonals, S = sum_{di,dj} G[p(q)+d][p(q')+d], added as c[c0] * S into every output
 * block or once into the factored S.
 *
 * Both passes walk rows with consecutive threads on consecutive columns, V = 4 of them
 * per thread in one 16-byte load where the row length is a multiple of 4 (then every
 * row starts on 16 bytes), one otherwise. They split flat element indices into
 * (b, row, column) with divisions, several times cheaper in 32 bits: Index is unsigned
 * where the counts fit. The second pass is a dependent launch (dependent_launch.cuh):
 * it loads the output it will add to while the first pass still runs, and waits for G
 * only when it needs it. */
#ifndef CHANNEL_SUM_CUH
#define CHANNEL_SUM_CUH

#include <limits.h>

#include "cuda_check.h"
#include "dependent_launch.cuh"
#include "kernels.h"

#define SUM_BLOCK 256
/* Window taps whose loads the second pass issues together. */
#define TAP_BATCH 9
/* Output blocks the second pass loads before it stores any: one round trip to DRAM
 * per group instead of one per block. */
#define C0_GROUP 8

/* V consecutive floats in one load or store: a float4 when V is 4 (the address is
 * then a multiple of 16 bytes), one float when V is 1. */
template <int V> __device__ __forceinline__ void load_floats(float (&r)[V], const float *p)
{
    if constexpr (V == 4) {
        const float4 f = *reinterpret_cast<const float4 *>(p);
        r[0] = f.x, r[1] = f.y, r[2] = f.z, r[3] = f.w;
    } else {
        static_assert(V == 1, "rows are read one or four floats at a time");
        r[0] = *p;
    }
}

template <int V> __device__ __forceinline__ void store_floats(float *p, const float (&r)[V])
{
    if constexpr (V == 4)
        *reinterpret_cast<float4 *>(p) = make_float4(r[0], r[1], r[2], r[3]);
    else
        *p = r[0];
}

/* G at (p, p2 .. p2+V-1) of one image: gm points at gamma's element (ci = 0, p, p2),
 * channel ci+1 ci_stride floats after ci; m at the image's mu (ci = 0). BATCH
 * channels' loads are issued before the first is used. */
template <int BATCH, int V>
__device__ __forceinline__ void channel_sums(float (&sum)[V], const float *__restrict__ gm,
                                             size_t ci_stride, const float *__restrict__ m,
                                             size_t P, size_t p, size_t p2, int cin)
{
#pragma unroll
    for (int v = 0; v < V; v++)
        sum[v] = 0.0f;
    /* [page: channel-sums-batch] */
    for (int ci0 = 0; ci0 < cin; ci0 += BATCH) {
        float gv[BATCH][V], mv[BATCH][V], mp[BATCH];
#pragma unroll
        for (int j = 0; j < BATCH; j++)
            if (ci0 + j < cin) {
                const size_t at = (size_t)(ci0 + j) * P;
                load_floats(gv[j], gm + (ci0 + j) * ci_stride);
                load_floats(mv[j], m + at + p2);
                mp[j] = m[at + p];
            }
#pragma unroll
        for (int j = 0; j < BATCH; j++)
            if (ci0 + j < cin)
#pragma unroll
                for (int v = 0; v < V; v++)
                    sum[v] += fmaf(mp[j], mv[j][v], gv[j][v]);
    }
    /* [/page: channel-sums-batch] */
}

/* S for the V outputs (b, q, q2 .. q2+V-1) of one row: k^2 values of G along a
 * diagonal each. Tap (di, dj) is the same offset (di*W + dj)*(P + 1) from every
 * output's first tap; the loads of TAP_BATCH taps are issued before the first is
 * used, so a 3 x 3 window costs one round trip to L2, not nine. */
template <int V>
__device__ __forceinline__ void box_sums(float (&sum)[V], const float *__restrict__ gb,
                                         const struct conv_shape &s, size_t q, size_t q2)
{
    const size_t P = cov_in_positions(&s);
    const int wo = cov_out_w(&s);
    const int i0 = (int)(q / wo), j0 = (int)(q % wo);
    int i1 = (int)(q2 / wo), j1 = (int)(q2 % wo);
    const float *first[V];
#pragma unroll
    for (int v = 0; v < V; v++) {
        first[v] = gb + ((size_t)i0 * s.w + j0) * P + (size_t)i1 * s.w + j1;
        sum[v] = 0.0f;
        if (++j1 == wo)
            j1 = 0, i1++;
    }
    const int taps = s.ksize * s.ksize;
    for (int t0 = 0; t0 < taps; t0 += TAP_BATCH) {
        float x[TAP_BATCH][V];
#pragma unroll
        for (int j = 0; j < TAP_BATCH; j++)
            if (t0 + j < taps) {
                const int di = (t0 + j) / s.ksize, dj = (t0 + j) % s.ksize;
                const size_t tap = ((size_t)di * s.w + dj) * (P + 1);
#pragma unroll
                for (int v = 0; v < V; v++)
                    x[j][v] = first[v][tap];
            }
#pragma unroll
        for (int j = 0; j < TAP_BATCH; j++)
            if (t0 + j < taps)
#pragma unroll
                for (int v = 0; v < V; v++)
                    sum[v] += x[j][v];
    }
}

/* Output element (b, c0, q, q') in the compact blocks or the seed's full layout. */
static __device__ float *block_at(float *out, const struct conv_shape &s, enum cov_layout layout,
                                  int b, int c0, size_t q, size_t q2)
{
    return out + (layout == COV_FULL ? cov_out_full_at(&s, b, c0, q, c0, q2)
                                     : cov_out_blocks_at(&s, b, c0, q, q2));
}

/* The second pass: for every V outputs (b, q, q'..) S from G, added into the output:
 * once into the factored S (FACTORED), else c[c0] * S into each of the Co blocks of
 * `layout`. The output's loads come first, then the wait for the first pass. */
template <typename Index, int V, bool FACTORED>
__global__ void __launch_bounds__(SUM_BLOCK)
    cov_box_taps(float *__restrict__ out, const float *__restrict__ g, const float *__restrict__ c,
                 struct conv_shape s, enum cov_layout layout)
{
    const size_t P = cov_in_positions(&s);
    const Index Q = (Index)cov_out_positions(&s);
    const Index count = (Index)s.n * Q * Q;
    const Index step = (Index)gridDim.x * blockDim.x * V;
    for (Index e = ((Index)blockIdx.x * blockDim.x + threadIdx.x) * V; e < count; e += step) {
        const Index q2 = e % Q, q = e / Q % Q;
        const int b = (int)(e / (Q * Q));
        const float *gb = g + (size_t)b * P * P;
        float sum[V];
        if constexpr (FACTORED) {
            /* [page: box-taps-factored] */
            float *o = out + cov_out_factored_at(&s, b, q, q2);
            float was[V];
            load_floats(was, o);
            wait_for_previous_grid();
            box_sums(sum, gb, s, q, q2);
#pragma unroll
            for (int v = 0; v < V; v++)
                was[v] += sum[v];
            store_floats(o, was);
            /* [/page: box-taps-factored] */
        } else {
            for (int c0 = 0; c0 < s.cout; c0 += C0_GROUP) {
                const int n = min(C0_GROUP, s.cout - c0);
                float was[C0_GROUP][V];
#pragma unroll
                for (int m = 0; m < C0_GROUP; m++)
                    if (m < n)
                        load_floats(was[m], block_at(out, s, layout, b, c0 + m, q, q2));
                if (c0 == 0) {
                    wait_for_previous_grid();
                    box_sums(sum, gb, s, q, q2);
                }
#pragma unroll
                for (int m = 0; m < C0_GROUP; m++)
                    if (m < n) {
                        const float cm = c[c0 + m];
#pragma unroll
                        for (int v = 0; v < V; v++)
                            was[m][v] = fmaf(cm, sum[v], was[m][v]);
                        store_floats(block_at(out, s, layout, b, c0 + m, q, q2), was[m]);
                    }
            }
        }
    }
}

/* Blocks for one thread per `threads`, at most as many as are resident at once (the
 * kernels stride over the rest). */
template <typename Kernel> static unsigned resident_grid(Kernel kernel, size_t threads)
{
    int device, sms, per_sm;
    CUDA_CHECK(cudaGetDevice(&device));
    CUDA_CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device));
    CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, kernel, SUM_BLOCK, 0));
    const size_t wanted = (threads + SUM_BLOCK - 1) / SUM_BLOCK;
    const size_t most = (size_t)sms * per_sm;
    return (unsigned)(wanted < most ? wanted : most);
}

template <typename Index, int V, bool FACTORED>
static void launch_box_taps(const struct cov_args *a, enum cov_layout layout)
{
    const struct conv_shape *s = &a->shape;
    const size_t count = s->n * cov_out_positions(s) * cov_out_positions(s);
    auto kernel = cov_box_taps<Index, V, FACTORED>;
    launch_dependent(kernel, resident_grid(kernel, count / V), SUM_BLOCK, a->stream, a->out,
                     (const float *)a->scratch, a->c, *s, layout);
}

/* Whether the flat indices of a problem fit Index = unsigned (with room for one
 * grid-stride step past the end). */
static inline bool counts_fit_32_bits(const struct conv_shape *s)
{
    const size_t P = cov_in_positions(s), Q = cov_out_positions(s);
    return s->n * P * P <= UINT_MAX / 2 && s->n * Q * Q <= UINT_MAX / 2;
}

/* The second pass on a->scratch (G), queued behind the first on a->stream. */
template <typename Index> static void box_taps(const struct cov_args *a, enum cov_layout layout)
{
    const bool rows_of_four = cov_out_positions(&a->shape) % 4 == 0;
    if (layout == COV_FACTORED)
        rows_of_four ? launch_box_taps<Index, 4, true>(a, layout)
                     : launch_box_taps<Index, 1, true>(a, layout);
    else
        rows_of_four ? launch_box_taps<Index, 4, false>(a, layout)
                     : launch_box_taps<Index, 1, false>(a, layout);
}

#endif
