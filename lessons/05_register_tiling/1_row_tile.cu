/* Lesson 05: register tiling. Each thread computes several outputs and keeps the
 * inputs it has loaded in registers, so one load feeds many multiply-adds; with
 * 16-byte loads, a strip of rows per thread, and the rows on their way held in a
 * shared-memory ring instead of registers, small filters run near the speed of
 * memory and large ones near the FMA peak. Step 1: outputs side by side along a row.
 *
 *   build/bin/05_register_tiling --preset big5      (or --preset big7, --ksize 11, ...)
 */
#include "kernels.h"
#include "register_tiling.cuh"

/* One output row per thread, OUTS outputs side by side: for each filter row i the
 * thread loads the OUTS + 2*HALO inputs it needs into registers once, and output m
 * reads floats m .. m + 2R of them (the horizontal register window). The loops
 * unroll, so every array lives in registers and every tap has a constant address
 * in the constant bank. With OUTS = 1 it is the step's baseline: lesson 03's work per
 * output, in blocks of 32x4 and each filter row's inputs loaded first. */
template <int R, int OUTS, bool WIDE>
__global__ void __launch_bounds__(BLOCK_THREADS)
    conv2d_row_tile(const float *__restrict__ in, float *__restrict__ out, int n, int h, int w,
                    int tiles_x)
{
    /* [page: row-tile-span] */
    constexpr int K = 2 * R + 1;
    /* 16-byte loads start on a multiple of 4 columns: the halo is rounded up to 4. */
    constexpr int HALO = WIDE ? (R + VEC - 1) / VEC * VEC : R;
    constexpr int SPAN = OUTS + 2 * HALO;
    /* [/page: row-tile-span] */
    static_assert(!WIDE || OUTS % VEC == 0, "16-byte stores need whole float4s of outputs");

    const int x0 = ((int)(blockIdx.x % tiles_x) * BLOCK_W + (int)threadIdx.x) * OUTS;
    const int y = (int)(blockIdx.x / tiles_x) * BLOCK_H + (int)threadIdx.y;
    if (x0 >= w || y >= h)
        return;
    for (int p = blockIdx.y; p < n; p += gridDim.y) {
        const float *src = in + (size_t)p * h * w;
        /* [page: row-tile-body] */
        float acc[OUTS];
#pragma unroll
        for (int m = 0; m < OUTS; ++m)
            acc[m] = filter_bias;
#pragma unroll
        for (int i = 0; i < K; ++i) {
            float v[SPAN];
            load_span<SPAN, WIDE>(v, src, y - R + i, x0 - HALO, h, w);
#pragma unroll
            for (int j = 0; j < K; ++j)
#pragma unroll
                for (int m = 0; m < OUTS; ++m)
                    acc[m] = fmaf(v[HALO - R + m + j], filter_taps[i * K + j], acc[m]);
        }
        store_span<OUTS, WIDE>(acc, out + (size_t)p * h * w, y, x0, h, w);
        /* [/page: row-tile-body] */
    }
}

template <int R, int OUTS, bool WIDE> static void launch_row_tile(const struct conv_args *a)
{
    const struct conv_shape *s = &a->shape;
    const int tiles_x = ceil_div(s->w, BLOCK_W * OUTS);
    const int tiles_y = ceil_div(s->h, BLOCK_H);
    const dim3 grid(tiles_x * tiles_y, grid_planes(s->n));
    conv2d_row_tile<R, OUTS, WIDE><<<grid, dim3(BLOCK_W, BLOCK_H), 0, a->stream>>>(
        input_f32(a), output_f32(a), s->n, s->h, s->w, tiles_x);
    CUDA_CHECK_LAUNCH();
}

/* one_per_thread, row4, row8 and row8_vec4: OUTS outputs per thread, with VEC4 in
 * 16-byte loads where the rows allow them. */
template <int OUTS, bool VEC4> struct row_tile {
    template <int R> static void launch(const struct conv_args *a)
    {
        /* WIDE = VEC4, not true: a variant without 16-byte loads never instantiates them. */
        if (VEC4 && rows_are_16_byte_aligned(a))
            launch_row_tile<R, OUTS, VEC4>(a);
        else
            launch_row_tile<R, OUTS, false>(a);
    }
};

/* This file's copy of the filter, and the run-time-radius kernel's. */
extern "C" void setup_row_tile(const struct conv_args *a)
{
    upload_filter(a);
    setup_any_radius(a);
}

extern "C" void launch_one_per_thread(const struct conv_args *a)
{
    launch_for_filter<row_tile<1, false>>(a);
}

extern "C" void launch_row4(const struct conv_args *a)
{
    launch_for_filter<row_tile<4, false>>(a);
}

extern "C" void launch_row8(const struct conv_args *a)
{
    launch_for_filter<row_tile<WIDE_OUTS, false>>(a);
}

extern "C" void launch_row8_vec4(const struct conv_args *a)
{
    launch_for_filter<row_tile<WIDE_OUTS, true>>(a);
}
