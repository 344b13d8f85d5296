/* Lesson 05, step 2: a strip of output rows per thread, each input row loaded once
 * and added into every output row it touches (the vertical register window).
 *
 *   build/bin/05_register_tiling --preset big5 --variant strip
 */
#include "kernels.h"
#include "register_tiling.cuh"

/* strip_prefetch asks L2 for the input row this many rows ahead of the one it
 * loads: a DRAM latency is worth a few rows of work. */
#define PREFETCH_ROWS 4
/* FMAs in one unrolled group of the sliding window (see group_steps). */
#define MAX_GROUP_FMAS 4096

/* Asks for the line holding p to be brought into L2, without waiting for it and
 * without a register to receive it. */
__device__ __forceinline__ void prefetch_l2(const float *p)
{
    asm volatile("prefetch.global.L2 [%0];" ::"l"(p));
}

/* Input rows per unrolled group in conv2d_sliding_window. A group's code holds
 * steps * K^2 * OUTS FMAs: MAX_GROUP_FMAS (16 bytes each) stays in the instruction
 * cache. A group of K rows needs no register moves between rows; smaller groups
 * shift the window's K - 1 live rows once per group. */
__host__ __device__ constexpr int group_steps(int k, int outs)
{
    const int steps = MAX_GROUP_FMAS / (k * k * outs);
    return steps < 1 ? 1 : steps > k ? k : steps;
}

/* A strip of strip_rows x OUTS outputs per thread. The thread walks down the
 * strip_rows + 2R input rows once, loading each into registers, and adds it into
 * every output row it touches: input row t meets output row u with filter row t - u
 * (the vertical register window). With AHEAD the next row is loaded while the
 * current one is used; without, each row is loaded just before its FMAs, which then
 * wait for it. Slot e of acc holds output row t0 - 2R + e of the current group; an
 * output row starts at filter row 0 with the bias and is stored after filter row
 * K - 1. Slots outside the strip are skipped: the test is the same for the whole
 * warp, so it costs a branch, not divergence. */
template <int R, int OUTS, bool WIDE, bool AHEAD, bool PREFETCH>
__global__ void __launch_bounds__(BLOCK_THREADS)
    conv2d_sliding_window(const float *__restrict__ in, float *__restrict__ out, int n, int h,
                          int w, int tiles_x, int strip_rows)
{
    constexpr int K = 2 * R + 1;
    constexpr int HALO = WIDE ? (R + VEC - 1) / VEC * VEC : R;
    constexpr int SPAN = OUTS + 2 * HALO;
    constexpr int STEPS = group_steps(K, OUTS);
    constexpr int SLOTS = K + STEPS - 1;
    static_assert(!WIDE || OUTS % VEC == 0, "16-byte stores need whole float4s of outputs");

    const int x0 = ((int)(blockIdx.x % tiles_x) * BLOCK_W + (int)threadIdx.x) * OUTS;
    const int y0 = ((int)(blockIdx.x / tiles_x) * BLOCK_H + (int)threadIdx.y) * strip_rows;
    if (x0 >= w || y0 >= h)
        return;
    const int rows = min(strip_rows, h - y0);
    const int steps = rows + 2 * R;
    for (int p = blockIdx.y; p < n; p += gridDim.y) {
        const float *src = in + (size_t)p * h * w;
        float *dst = out + (size_t)p * h * w;
        float acc[SLOTS][OUTS];
        float v[SPAN];
        if constexpr (AHEAD)
            load_span<SPAN, WIDE>(v, src, y0 - R, x0 - HALO, h, w);
#pragma unroll 1
        for (int t0 = 0; t0 < steps; t0 += STEPS) {
            const int first = 2 * R - t0, last = rows - 1 + 2 * R - t0;
#pragma unroll
            for (int s = 0; s < STEPS; ++s) {
                if (t0 + s >= steps)
                    break;
                /* [page: sliding-window-row] */
                const int y = y0 - R + t0 + s;
                float next[SPAN];
                if constexpr (AHEAD)
                    load_span<SPAN, WIDE>(next, src, y + 1, x0 - HALO, h, w);
                else
                    load_span<SPAN, WIDE>(v, src, y, x0 - HALO, h, w);
                if (PREFETCH && (unsigned)(y + PREFETCH_ROWS) < (unsigned)h)
                    prefetch_l2(src + ((y + PREFETCH_ROWS) * w + x0));
#pragma unroll
                for (int e = s; e < s + K; ++e) {
                    if (e < first || e > last)
                        continue;
                    const int i = s + 2 * R - e;
                    if (i == 0)
#pragma unroll
                        for (int m = 0; m < OUTS; ++m)
                            acc[e][m] = filter_bias;
#pragma unroll
                    for (int j = 0; j < K; ++j)
#pragma unroll
                        for (int m = 0; m < OUTS; ++m)
                            acc[e][m] =
                                fmaf(v[HALO - R + m + j], filter_taps[i * K + j], acc[e][m]);
                    if (i == K - 1)
                        store_span<OUTS, WIDE>(acc[e], dst, y0 + t0 - 2 * R + e, x0, h, w);
                }
                /* [/page: sliding-window-row] */
                if constexpr (AHEAD)
#pragma unroll
                    for (int c = 0; c < SPAN; ++c)
                        v[c] = next[c];
            }
#pragma unroll
            for (int e = 0; e < K - 1; ++e)
#pragma unroll
                for (int m = 0; m < OUTS; ++m)
                    acc[e][m] = acc[e + STEPS][m];
        }
    }
}

template <int R, int OUTS, bool WIDE, bool AHEAD, bool PREFETCH>
static void launch_sliding_window(const struct conv_args *a, enum strip_height height)
{
    const struct conv_shape *s = &a->shape;
    const int tiles_x = ceil_div(s->w, BLOCK_W * OUTS);
    const int rows = height == FIXED_ROWS ? MAX_STRIP_ROWS : strip_rows_for(s, tiles_x, BLOCK_H);
    const int tiles_y = ceil_div(s->h, BLOCK_H * rows);
    const dim3 grid(tiles_x * tiles_y, grid_planes(s->n));
    conv2d_sliding_window<R, OUTS, WIDE, AHEAD, PREFETCH>
        <<<grid, dim3(BLOCK_W, BLOCK_H), 0, a->stream>>>(input_f32(a), output_f32(a), s->n, s->h,
                                                         s->w, tiles_x, rows);
    CUDA_CHECK_LAUNCH();
}

/* strip32, strip32_ahead, strip and strip_prefetch: WIDE_OUTS outputs per thread, in
 * 16-byte loads where the rows allow them. */
template <bool AHEAD, bool PREFETCH, strip_height HEIGHT> struct sliding_window {
    template <int R> static void launch(const struct conv_args *a)
    {
        if (rows_are_16_byte_aligned(a))
            launch_sliding_window<R, WIDE_OUTS, true, AHEAD, PREFETCH>(a, HEIGHT);
        else
            launch_sliding_window<R, WIDE_OUTS, false, AHEAD, PREFETCH>(a, HEIGHT);
    }
};

/* This file's copy of the filter, and the run-time-radius kernel's. */
extern "C" void setup_sliding_window(const struct conv_args *a)
{
    upload_filter(a);
    setup_any_radius(a);
}

extern "C" void launch_strip32(const struct conv_args *a)
{
    launch_for_filter<sliding_window<false, false, FIXED_ROWS>>(a);
}

extern "C" void launch_strip32_ahead(const struct conv_args *a)
{
    launch_for_filter<sliding_window<true, false, FIXED_ROWS>>(a);
}

extern "C" void launch_strip(const struct conv_args *a)
{
    launch_for_filter<sliding_window<true, false, FILL_SMS>>(a);
}

extern "C" void launch_strip_prefetch(const struct conv_args *a)
{
    launch_for_filter<sliding_window<true, true, FILL_SMS>>(a);
}
