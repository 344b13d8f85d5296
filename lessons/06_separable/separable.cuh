/* What lesson 06's steps share: the block shape, the filter's factors in __constant__
 * memory, the intermediate image, the 1-D row and column filters, the 16-byte
 * alignment test and the choice of a kernel instantiation. */
#ifndef LESSON06_SEPARABLE_CUH
#define LESSON06_SEPARABLE_CUH

#include <stdint.h>

#include "constant_bias.cuh"
#include "conv_args.h"
#include "conv_problem.h"
#include "cuda_check.h"
#include "grid_chunks.cuh"
#include "row_span.cuh"
#include "separable_factors.h"
#include "unrolled_radius.cuh"

/* A warp covers one row: 32 threads side by side, each with its own outputs. */
#define BLOCK_W 32
#define BLOCK_H 4
#define BLOCK_THREADS (BLOCK_W * BLOCK_H)
/* Column pass: one float4 of columns per thread, COLUMN_ROWS rows down, so each
 * intermediate row it loads serves up to COLUMN_ROWS outputs (two_pass, fused_smem). */
#define COLUMN_OUTS 4
#define COLUMN_ROWS 8

/* The factors of the filter: w[i][j] = column_taps[i] * row_taps[j]. A __constant__
 * variable belongs to the .cu file that defines it (the kernels are not relocatable
 * device code), so each step file has its own copy, and its setup fills it. */
static __constant__ float row_taps[MAX_KSIZE];
static __constant__ float column_taps[MAX_KSIZE];
static __constant__ float filter_bias;

/* The filter's factors, computed on the host from a copy of the device taps, into
 * __constant__ memory; the bias beside them. */
static inline void upload_factors(const struct conv_args *a)
{
    const int k = a->shape.ksize;
    float taps[MAX_KSIZE * MAX_KSIZE], column[MAX_KSIZE], row[MAX_KSIZE];
    CUDA_CHECK(
        cudaMemcpy(taps, weights_f32(a), (size_t)k * k * sizeof(float), cudaMemcpyDeviceToHost));
    separable_factors(taps, k, column, row);
    CUDA_CHECK(cudaMemcpyToSymbol(column_taps, column, (size_t)k * sizeof(float)));
    CUDA_CHECK(cudaMemcpyToSymbol(row_taps, row, (size_t)k * sizeof(float)));
    copy_bias_to_constant(filter_bias, a->bias);
}

/* Filters larger than 15x15, in every variant: step 1's two passes with a run-time
 * radius (1_two_pass.cu), which read step 1's copy of the factors. */
void launch_two_pass_any_radius(const struct conv_args *a);

/* The intermediate image of two_pass (and of the fallback above ksize 15) lives in
 * the scratch memory the harness allocates before the untimed setup, so that run()
 * allocates nothing. */
static inline float *intermediate_of(const struct conv_args *a)
{
    return (float *)a->scratch;
}

/* The 1-D row filter on a span already in registers: output m reads span floats
 * m .. m + 2R after the (SPAN - OUTS) / 2 - R it skips (the halo rounding). */
template <int R, int OUTS, int SPAN>
__device__ __forceinline__ void filter_row(const float (&v)[SPAN], float (&out)[OUTS])
{
    /* [page: row-filter] */
    constexpr int SKIP = (SPAN - OUTS) / 2 - R;
#pragma unroll
    for (int m = 0; m < OUTS; ++m) {
        out[m] = 0.0f;
#pragma unroll
        for (int j = 0; j < 2 * R + 1; ++j)
            out[m] = fmaf(v[SKIP + m + j], row_taps[j], out[m]);
    }
    /* [/page: row-filter] */
}

/* The 1-D column filter, one input row at a time: row t of the ROWS + 2R rows a
 * thread walks down feeds its output row o with column tap t - o. An output row
 * starts with the bias at tap 0 and is stored after tap 2R. */
template <int R, int ROWS, int OUTS, bool WIDE>
__device__ __forceinline__ void filter_column_step(int t, const float (&v)[OUTS],
                                                   float (&acc)[ROWS][OUTS], float *plane, int y0,
                                                   int x0, int h, int w)
{
    /* [page: column-step] */
#pragma unroll
    for (int o = 0; o < ROWS; ++o) {
        const int i = t - o;
        if (i < 0 || i > 2 * R)
            continue;
        if (i == 0)
#pragma unroll
            for (int m = 0; m < OUTS; ++m)
                acc[o][m] = filter_bias;
#pragma unroll
        for (int m = 0; m < OUTS; ++m)
            acc[o][m] = fmaf(v[m], column_taps[i], acc[o][m]);
        if (i == 2 * R)
            store_span<OUTS, WIDE>(acc[o], plane, y0 + o, x0, h, w);
    }
    /* [/page: column-step] */
}

/* A grid of tiles_x x tiles_y tiles in blockIdx.x (no 65535 limit on rows) and the
 * planes in blockIdx.y. */
static inline dim3 grid_of(const struct conv_shape *s, int tiles_x, int tile_h)
{
    return dim3(tiles_x * ceil_div(s->h, tile_h), grid_planes(s->n));
}

/* 16-byte loads need every row to start on 16 bytes: a width that is a multiple of
 * 4 floats and buffers that start on 16 bytes. Otherwise the scalar-load kernels. */
static inline bool rows_are_16_byte_aligned(const struct conv_args *a)
{
    const size_t bytes = VEC * sizeof(float);
    return a->shape.w % VEC == 0 && (uintptr_t)input_f32(a) % bytes == 0 &&
           (uintptr_t)output_f32(a) % bytes == 0 && (uintptr_t)intermediate_of(a) % bytes == 0;
}

/* Variant::launch<R, WIDE> for launch_for_radius: with 16-byte loads (WIDE) where the
 * rows allow them. */
template <typename Variant> struct wide_where_aligned {
    template <int R> static void launch(const struct conv_args *a)
    {
        if (rows_are_16_byte_aligned(a))
            Variant::template launch<R, true>(a);
        else
            Variant::template launch<R, false>(a);
    }
};

/* Variant::launch<R, WIDE> with R the filter's radius (common/device/unrolled_radius.cuh)
 * and 16-byte loads where the rows allow them; past the unrolled radii, step 1's two
 * passes with a run-time radius. */
template <typename Variant> void launch_for_filter(const struct conv_args *a)
{
    launch_for_radius<wide_where_aligned<Variant>>(a->shape.ksize / 2, a,
                                                   launch_two_pass_any_radius);
}

#endif
