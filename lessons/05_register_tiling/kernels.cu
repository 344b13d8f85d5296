/* Lesson 05: register tiling. Each thread computes several outputs and keeps the
 * inputs it has loaded in registers, so one load feeds many multiply-adds; with
 * 16-byte loads, a strip of rows per thread, and the rows on their way held in a
 * shared-memory ring instead of registers, small filters run near the speed of
 * memory and large ones near the FMA peak.
 *
 *   build/bin/05_register_tiling --preset big5      (or --preset big7, --ksize 11, ...)
 */
#include <math.h>
#include <stdint.h>

#include "conv_args.h"
#include "conv_problem.h"
#include "cp_async.cuh"
#include "cuda_check.h"
#include "grid_chunks.cuh"
#include "kernels.h"
#include "row_span.cuh"

/* A warp covers one row: 32 threads side by side, each with its own outputs. */
#define BLOCK_W 32
#define BLOCK_H 4
#define BLOCK_THREADS (BLOCK_W * BLOCK_H)
/* Radii with unrolled instantiations: the common filter sizes 1..15. */
#define MAX_UNROLLED_RADIUS 7
/* Outputs per thread along a row in row8, row8_vec4 and strip. */
#define WIDE_OUTS 8
/* Outputs per thread of the run-time-radius kernel. */
#define ANY_RADIUS_OUTS 4
/* Tallest strip of output rows per thread in the strip variants. */
#define MAX_STRIP_ROWS 32
/* Blocks per SM below which strips get shorter: with 3 to 5 blocks resident per SM
 * that is 3 or more waves of blocks, so the last, partial wave costs little. */
#define MIN_BLOCKS_PER_SM 16
/* strip_prefetch asks L2 for the input row this many rows ahead of the one it
 * loads: a DRAM latency is worth a few rows of work. */
#define PREFETCH_ROWS 4
/* FMAs in one unrolled group of the sliding window (see group_steps). */
#define MAX_GROUP_FMAS 4096
/* Outputs across one block of the ring variants: 256 threads x 4 or 128 x 8. */
#define RING_TILE_W 1024
/* Input rows in a ring-variant block's shared ring: one being read, the rest on
 * their way (4 x 1032 floats, 16.5 KB, for filters up to 9x9). */
#define RING_STAGES 4
/* Registers a ring-variant thread needs besides its window (addresses, counters):
 * the launch bound leaves it this many, so the compiler fits as many blocks per SM
 * as the window allows instead of spending registers on precomputed addresses. */
#define RING_OTHER_REGS 24
/* The smallest per-SM limits from sm_75 up (sm_75 holds 1024 threads; sm_86/89 1536;
 * sm_80/90 2048, so there the bound is cautious) and 64K registers. */
#define SM_THREADS 1024
#define SM_REGISTERS 65536

/* 31 x 31 floats = 3844 bytes of the 64 KB constant bank, whatever ksize is. */
static __constant__ float filter_taps[MAX_KSIZE * MAX_KSIZE];
static __constant__ float filter_bias;

/* One output row per thread, OUTS outputs side by side: for each filter row i the
 * thread loads the OUTS + 2*HALO inputs it needs into registers once, and output m
 * reads floats m .. m + 2R of them (the horizontal register window). The loops
 * unroll, so every array lives in registers and every tap has a constant address
 * in the constant bank. With OUTS = 1 this is lesson 03's unrolled kernel. */
template <int R, int OUTS, bool WIDE>
__global__ void __launch_bounds__(BLOCK_THREADS)
    conv2d_row_tile(const float *__restrict__ in, float *__restrict__ out, int n, int h, int w,
                    int tiles_x)
{
    constexpr int K = 2 * R + 1;
    /* 16-byte loads start on a multiple of 4 columns: the halo is rounded up to 4. */
    constexpr int HALO = WIDE ? (R + VEC - 1) / VEC * VEC : R;
    constexpr int SPAN = OUTS + 2 * HALO;
    static_assert(!WIDE || OUTS % VEC == 0, "16-byte stores need whole float4s of outputs");

    const int x0 = ((int)(blockIdx.x % tiles_x) * BLOCK_W + (int)threadIdx.x) * OUTS;
    const int y = (int)(blockIdx.x / tiles_x) * BLOCK_H + (int)threadIdx.y;
    if (x0 >= w || y >= h)
        return;
    for (int p = blockIdx.y; p < n; p += gridDim.y) {
        const float *src = in + (size_t)p * h * w;
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
    }
}

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

/* Row y, columns x .. x + LEN - 1 of one plane into the shared row dst, zeros outside
 * the image, the block's THREADS threads side by side. With WIDE, x and w are
 * multiples of 4 and the plane starts on 16 bytes: each 16-byte copy lies wholly
 * inside or outside the image. */
template <int LEN, int THREADS, bool WIDE>
__device__ __forceinline__ void copy_row_async(float *dst, const float *__restrict__ plane, int y,
                                               int x, int h, int w)
{
    constexpr int UNIT = WIDE ? VEC : 1;
    constexpr int UNITS = LEN / UNIT;
    const bool row_inside = (unsigned)y < (unsigned)h;
#pragma unroll
    for (int k = 0; k < (UNITS + THREADS - 1) / THREADS; ++k) {
        const int e = (int)threadIdx.x + k * THREADS;
        if (UNITS % THREADS != 0 && e >= UNITS)
            break;
        const int c = x + e * UNIT;
        const bool inside = row_inside && (unsigned)c < (unsigned)w;
        const float *src = inside ? plane + (y * w + c) : plane;
        if (WIDE)
            copy_16_async(dst + e * UNIT, src, inside);
        else
            copy_4_async(dst + e * UNIT, src, inside);
    }
}

/* Floats of a LEN-float row that one of THREADS threads copies in copy_row_async. */
__host__ __device__ constexpr int row_share(int len, int threads, bool wide)
{
    return (len / (wide ? VEC : 1) + threads - 1) / threads * (wide ? VEC : 1);
}

/* copy_row_async's copies of this thread as ordinary loads into its registers (zeros
 * outside the image), for store_row_share to write into the shared row later. */
template <int LEN, int THREADS, bool WIDE>
__device__ __forceinline__ void load_row_share(float (&share)[row_share(LEN, THREADS, WIDE)],
                                               const float *__restrict__ plane, int y, int x, int h,
                                               int w)
{
    constexpr int UNIT = WIDE ? VEC : 1;
    constexpr int UNITS = LEN / UNIT;
    const bool row_inside = (unsigned)y < (unsigned)h;
#pragma unroll
    for (int k = 0; k < (UNITS + THREADS - 1) / THREADS; ++k) {
        const int e = (int)threadIdx.x + k * THREADS;
        if (UNITS % THREADS != 0 && e >= UNITS)
            break;
        const int c = x + e * UNIT;
        const bool inside = row_inside && (unsigned)c < (unsigned)w;
        if constexpr (WIDE) {
            float4 f = make_float4(0.0f, 0.0f, 0.0f, 0.0f);
            if (inside)
                f = __ldg(reinterpret_cast<const float4 *>(plane + (y * w + c)));
            share[k * VEC + 0] = f.x;
            share[k * VEC + 1] = f.y;
            share[k * VEC + 2] = f.z;
            share[k * VEC + 3] = f.w;
        } else {
            share[k] = inside ? __ldg(plane + (y * w + c)) : 0.0f;
        }
    }
}

/* The registers load_row_share filled, into the shared row dst. */
template <int LEN, int THREADS, bool WIDE>
__device__ __forceinline__ void store_row_share(float *dst,
                                                const float (&share)[row_share(LEN, THREADS, WIDE)])
{
    constexpr int UNIT = WIDE ? VEC : 1;
    constexpr int UNITS = LEN / UNIT;
#pragma unroll
    for (int k = 0; k < (UNITS + THREADS - 1) / THREADS; ++k) {
        const int e = (int)threadIdx.x + k * THREADS;
        if (UNITS % THREADS != 0 && e >= UNITS)
            break;
        if constexpr (WIDE)
            *reinterpret_cast<float4 *>(dst + e * VEC) = make_float4(
                share[k * VEC], share[k * VEC + 1], share[k * VEC + 2], share[k * VEC + 3]);
        else
            dst[e] = share[k];
    }
}

/* Filter row i applied to one input row v, added into OUTS outputs side by side:
 * output m reads v[HALO - R + m .. HALO + R + m]. */
template <int R, int OUTS, int HALO, int SPAN>
__device__ __forceinline__ void add_filter_row(float (&acc)[OUTS], const float (&v)[SPAN], int i)
{
    constexpr int K = 2 * R + 1;
#pragma unroll
    for (int j = 0; j < K; ++j)
#pragma unroll
        for (int m = 0; m < OUTS; ++m)
            acc[m] = fmaf(v[HALO - R + m + j], filter_taps[i * K + j], acc[m]);
}

/* Blocks per SM that conv2d_ring_window with BOUND asks the compiler to fit (its launch bound):
 * registers for the K x OUTS accumulators, the SPAN floats of one input row and
 * RING_OTHER_REGS, at most SM_THREADS threads. */
__host__ __device__ constexpr int ring_min_blocks(int r, int outs)
{
    const int threads = RING_TILE_W / outs;
    const int span = outs + 2 * ((r + VEC - 1) / VEC * VEC);
    const int blocks = SM_REGISTERS / (threads * ((2 * r + 1) * outs + span + RING_OTHER_REGS));
    return blocks < 1 ? 1 : blocks > SM_THREADS / threads ? SM_THREADS / threads : blocks;
}

/* conv2d_sliding_window's vertical window, with the input rows moved out of each
 * thread's registers into a ring of RING_STAGES shared rows that the whole block
 * fills. A block owns a tile RING_TILE_W outputs wide, OUTS per thread, and walks
 * down strip_rows output rows of it. With ASYNC the ring is filled by cp.async: while
 * the threads compute with input row t, rows t + 1 .. t + RING_STAGES - 1 are on their
 * way, and those bytes in flight hold no registers. Without it each thread loads its
 * share of row t + RING_STAGES - 1 into registers before the FMAs of row t and stores
 * it into the ring after them: one row in flight, held in registers. A thread reads
 * its SPAN floats of row t from shared memory in 16-byte loads. acc[e] holds output
 * row t - 2R + e, which meets input row t with filter row 2R - e: a row starts in
 * acc[K - 1] with the bias, leaves from acc[0], and the window shifts by one row (the
 * compiler turns most of the shift into register renaming). Rows above or below the
 * strip collect sums that are never stored: cheaper than a test per row. Every thread
 * takes part in the copies and the barriers, also those whose outputs lie past the
 * image's right edge. BOUND adds ring_min_blocks to the launch bound (0 asks for no
 * minimum, as if the argument were left out). */
template <int R, int OUTS, bool WIDE, bool ASYNC, bool BOUND>
__global__ void __launch_bounds__(RING_TILE_W / OUTS, BOUND ? ring_min_blocks(R, OUTS) : 0)
    conv2d_ring_window(const float *__restrict__ in, float *__restrict__ out, int n, int h, int w,
                       int tiles_x, int strip_rows)
{
    constexpr int K = 2 * R + 1;
    constexpr int THREADS = RING_TILE_W / OUTS;
    /* A shared row starts 16-byte aligned, on a multiple of 4 columns: the halo is
     * rounded up to 4. */
    constexpr int HALO = (R + VEC - 1) / VEC * VEC;
    constexpr int SPAN = OUTS + 2 * HALO;
    constexpr int ROW = RING_TILE_W + 2 * HALO;
    static_assert(RING_TILE_W % OUTS == 0 && OUTS % VEC == 0, "whole float4s per thread");
    static_assert((RING_STAGES & (RING_STAGES - 1)) == 0 && RING_STAGES >= 2,
                  "a power-of-two ring");
    __shared__ __align__(16) float ring[RING_STAGES][ROW];
    /* Without ASYNC: this thread's share of the row on its way. */
    float share[row_share(ROW, THREADS, WIDE)];

    const int tile_x = (int)(blockIdx.x % tiles_x) * RING_TILE_W;
    const int y0 = (int)(blockIdx.x / tiles_x) * strip_rows;
    const int x0 = tile_x + (int)threadIdx.x * OUTS;
    const int rows = min(strip_rows, h - y0);
    /* Input row t of the walk is image row y0 - R + t. */
    const int steps = rows + 2 * R;
    for (int p = blockIdx.y; p < n; p += gridDim.y) {
        const float *src = in + (size_t)p * h * w;
        float *dst = out + (size_t)p * h * w;
        /* Every thread is done with the previous plane's ring. */
        __syncthreads();
        /* Not unrolled: the compiler would precompute every row's addresses at once. */
#pragma unroll 1
        for (int q = 0; q < RING_STAGES - 1; ++q) {
            if (q < steps) {
                if constexpr (ASYNC) {
                    copy_row_async<ROW, THREADS, WIDE>(ring[q], src, y0 - R + q, tile_x - HALO, h,
                                                       w);
                } else {
                    load_row_share<ROW, THREADS, WIDE>(share, src, y0 - R + q, tile_x - HALO, h, w);
                    store_row_share<ROW, THREADS, WIDE>(ring[q], share);
                }
            }
            if constexpr (ASYNC)
                commit_copies();
        }
        float acc[K][OUTS];
#pragma unroll
        for (int e = 0; e < K; ++e)
#pragma unroll
            for (int m = 0; m < OUTS; ++m)
                acc[e][m] = 0.0f;
#pragma unroll 1
        for (int t = 0; t < steps; ++t) {
            /* Row t has landed (the rows after it may still be in flight)... */
            if constexpr (ASYNC)
                wait_copies<RING_STAGES - 2>();
            __syncthreads();
            /* ...and every thread is done with row t - 1: its buffer takes a new row. */
            const int q = t + RING_STAGES - 1;
            if (q < steps) {
                if constexpr (ASYNC)
                    copy_row_async<ROW, THREADS, WIDE>(ring[q % RING_STAGES], src, y0 - R + q,
                                                       tile_x - HALO, h, w);
                else
                    load_row_share<ROW, THREADS, WIDE>(share, src, y0 - R + q, tile_x - HALO, h, w);
            }
            if constexpr (ASYNC)
                commit_copies();
            float v[SPAN];
            const float4 *row =
                reinterpret_cast<const float4 *>(ring[t % RING_STAGES] + threadIdx.x * OUTS);
#pragma unroll
            for (int c = 0; c < SPAN / VEC; ++c) {
                const float4 f = row[c];
                v[c * VEC + 0] = f.x;
                v[c * VEC + 1] = f.y;
                v[c * VEC + 2] = f.z;
                v[c * VEC + 3] = f.w;
            }
#pragma unroll
            for (int m = 0; m < OUTS; ++m)
                acc[K - 1][m] = filter_bias;
#pragma unroll
            for (int e = 0; e < K; ++e)
                add_filter_row<R, OUTS, HALO, SPAN>(acc[e], v, 2 * R - e);
            if (t >= 2 * R)
                store_span<OUTS, WIDE>(acc[0], dst, y0 + t - 2 * R, x0, h, w);
#pragma unroll
            for (int e = 0; e < K - 1; ++e)
#pragma unroll
                for (int m = 0; m < OUTS; ++m)
                    acc[e][m] = acc[e + 1][m];
            if constexpr (!ASYNC) {
                if (q < steps)
                    store_row_share<ROW, THREADS, WIDE>(ring[q % RING_STAGES], share);
            }
        }
    }
}

/* Filters larger than 15x15. With a run-time radius no loop over the filter can
 * unroll, and a register array indexed by a run-time value is spilled to local
 * memory, so the only arrays here are indexed by the unrolled m: input column
 * x0 - r + t streams past the ANY_RADIUS_OUTS accumulators, meeting output m at
 * filter column t - m, read from the constant bank at a run-time address. */
__global__ void __launch_bounds__(BLOCK_THREADS)
    conv2d_any_radius(const float *__restrict__ in, float *__restrict__ out, int n, int h, int w,
                      int r, int tiles_x)
{
    const int k = 2 * r + 1;
    const int x0 = ((int)(blockIdx.x % tiles_x) * BLOCK_W + (int)threadIdx.x) * ANY_RADIUS_OUTS;
    const int y = (int)(blockIdx.x / tiles_x) * BLOCK_H + (int)threadIdx.y;
    if (x0 >= w || y >= h)
        return;
    for (int p = blockIdx.y; p < n; p += gridDim.y) {
        const float *src = in + (size_t)p * h * w;
        float acc[ANY_RADIUS_OUTS];
#pragma unroll
        for (int m = 0; m < ANY_RADIUS_OUTS; ++m)
            acc[m] = filter_bias;
        for (int i = 0; i < k; ++i) {
            const int in_y = y - r + i;
            if ((unsigned)in_y >= (unsigned)h)
                continue;
            const float *row = src + (size_t)in_y * w;
            for (int t = 0; t < k + ANY_RADIUS_OUTS - 1; ++t) {
                const int c = x0 - r + t;
                const float x = (unsigned)c < (unsigned)w ? __ldg(row + c) : 0.0f;
#pragma unroll
                for (int m = 0; m < ANY_RADIUS_OUTS; ++m) {
                    const int j = t - m;
                    if (j >= 0 && j < k)
                        acc[m] = fmaf(x, filter_taps[i * k + j], acc[m]);
                }
            }
        }
        float *row = out + (size_t)p * h * w + (size_t)y * w;
#pragma unroll
        for (int m = 0; m < ANY_RADIUS_OUTS; ++m)
            if (x0 + m < w)
                row[x0 + m] = acc[m];
    }
}

static void launch_any_radius(const struct conv_args *a)
{
    const struct conv_shape *s = &a->shape;
    const int tiles_x = ceil_div(s->w, BLOCK_W * ANY_RADIUS_OUTS);
    const int tiles_y = ceil_div(s->h, BLOCK_H);
    const dim3 grid(tiles_x * tiles_y, grid_planes(s->n));
    conv2d_any_radius<<<grid, dim3(BLOCK_W, BLOCK_H), 0, a->stream>>>(
        input_f32(a), output_f32(a), s->n, s->h, s->w, s->ksize / 2, tiles_x);
    CUDA_CHECK_LAUNCH();
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

static int sm_count(void)
{
    static int count;
    if (count == 0) {
        int device;
        CUDA_CHECK(cudaGetDevice(&device));
        CUDA_CHECK(cudaDeviceGetAttribute(&count, cudaDevAttrMultiProcessorCount, device));
    }
    return count;
}

/* The tallest strip (the fewest halo rows loaded twice) that still gives every SM
 * MIN_BLOCKS_PER_SM blocks, so the last, partly filled wave of blocks is short; a
 * block holds block_strips strips one above the other. */
static int strip_rows_for(const struct conv_shape *s, int tiles_x, int block_strips)
{
    const double planes = grid_planes(s->n);
    int rows = MAX_STRIP_ROWS;
    while (rows > 1 && (double)tiles_x * ceil_div(s->h, block_strips * rows) * planes <
                           (double)sm_count() * MIN_BLOCKS_PER_SM)
        rows /= 2;
    return rows;
}

/* How a launcher picks the strip height: always MAX_STRIP_ROWS (strip32), by
 * strip_rows_for, or (the ring kernels) one wave of resident blocks. */
enum strip_height { FIXED_ROWS, FILL_SMS, ONE_WAVE };

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

/* Blocks of this instantiation resident on the whole GPU at once. */
template <int R, int OUTS, bool WIDE, bool ASYNC, bool BOUND> static int ring_resident_blocks(void)
{
    static int blocks;
    if (blocks == 0) {
        int per_sm;
        CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(
            &per_sm, conv2d_ring_window<R, OUTS, WIDE, ASYNC, BOUND>, RING_TILE_W / OUTS, 0));
        blocks = per_sm * sm_count();
    }
    return blocks;
}

/* ONE_WAVE: strips as tall as they can be while the blocks still fill every resident
 * slot: one wave, the fewest halo rows loaded twice, and no last wave that leaves SMs
 * idle. FILL_SMS: strip_rows_for's strips, one per block. */
template <int R, int OUTS, bool WIDE, bool ASYNC, bool BOUND>
static void launch_ring_window(const struct conv_args *a, enum strip_height height)
{
    const struct conv_shape *s = &a->shape;
    const int tiles_x = ceil_div(s->w, RING_TILE_W);
    const int planes = grid_planes(s->n);
    int rows;
    if (height == ONE_WAVE) {
        const double columns = (double)tiles_x * planes;
        const double resident = ring_resident_blocks<R, OUTS, WIDE, ASYNC, BOUND>();
        const int strips = columns >= resident ? 1 : (int)ceil(resident / columns);
        rows = ceil_div(s->h, strips);
    } else {
        rows = strip_rows_for(s, tiles_x, 1);
    }
    const int tiles_y = ceil_div(s->h, rows);
    const dim3 grid(tiles_x * tiles_y, planes);
    conv2d_ring_window<R, OUTS, WIDE, ASYNC, BOUND><<<grid, RING_TILE_W / OUTS, 0, a->stream>>>(
        input_f32(a), output_f32(a), s->n, s->h, s->w, tiles_x, rows);
    CUDA_CHECK_LAUNCH();
}

/* 16-byte loads need every row to start on 16 bytes: a width that is a multiple of
 * 4 floats and buffers that start on 16 bytes (cudaMalloc's do, a view into the middle
 * of one may not). Otherwise the same kernel runs with scalar loads. */
static bool rows_are_16_byte_aligned(const struct conv_args *a)
{
    return a->shape.w % VEC == 0 && (uintptr_t)input_f32(a) % (VEC * sizeof(float)) == 0 &&
           (uintptr_t)output_f32(a) % (VEC * sizeof(float)) == 0;
}

/* The variants, each a choice of tile and load width for a compile-time radius R. */
/* The 16-byte-load instantiation where every row start is 16-byte aligned, else the
 * scalar-load one: the same choice for every strip variant. */
template <int R, int OUTS, bool AHEAD, bool PREFETCH>
static void launch_sliding_window_aligned(const struct conv_args *a, enum strip_height height)
{
    if (rows_are_16_byte_aligned(a))
        launch_sliding_window<R, OUTS, true, AHEAD, PREFETCH>(a, height);
    else
        launch_sliding_window<R, OUTS, false, AHEAD, PREFETCH>(a, height);
}
template <int R, int OUTS, bool ASYNC, bool BOUND>
static void launch_ring_window_aligned(const struct conv_args *a, enum strip_height height)
{
    if (rows_are_16_byte_aligned(a))
        launch_ring_window<R, OUTS, true, ASYNC, BOUND>(a, height);
    else
        launch_ring_window<R, OUTS, false, ASYNC, BOUND>(a, height);
}

template <int R> struct one_per_thread {
    static void launch(const struct conv_args *a)
    {
        launch_row_tile<R, 1, false>(a);
    }
};
template <int R> struct row4 {
    static void launch(const struct conv_args *a)
    {
        launch_row_tile<R, 4, false>(a);
    }
};
template <int R> struct row8 {
    static void launch(const struct conv_args *a)
    {
        launch_row_tile<R, WIDE_OUTS, false>(a);
    }
};
template <int R> struct row8_vec4 {
    static void launch(const struct conv_args *a)
    {
        if (rows_are_16_byte_aligned(a))
            launch_row_tile<R, WIDE_OUTS, true>(a);
        else
            launch_row_tile<R, WIDE_OUTS, false>(a);
    }
};
template <int R> struct strip32 {
    static void launch(const struct conv_args *a)
    {
        launch_sliding_window_aligned<R, WIDE_OUTS, false, false>(a, FIXED_ROWS);
    }
};
template <int R> struct strip32_ahead {
    static void launch(const struct conv_args *a)
    {
        launch_sliding_window_aligned<R, WIDE_OUTS, true, false>(a, FIXED_ROWS);
    }
};
template <int R> struct strip {
    static void launch(const struct conv_args *a)
    {
        launch_sliding_window_aligned<R, WIDE_OUTS, true, false>(a, FILL_SMS);
    }
};
template <int R> struct strip_prefetch {
    static void launch(const struct conv_args *a)
    {
        launch_sliding_window_aligned<R, WIDE_OUTS, true, true>(a, FILL_SMS);
    }
};

template <int R> struct ring8_regs {
    static void launch(const struct conv_args *a)
    {
        launch_ring_window_aligned<R, WIDE_OUTS, false, false>(a, FILL_SMS);
    }
};
template <int R> struct ring8_async {
    static void launch(const struct conv_args *a)
    {
        launch_ring_window_aligned<R, WIDE_OUTS, true, false>(a, FILL_SMS);
    }
};
template <int R> struct ring8_wave {
    static void launch(const struct conv_args *a)
    {
        launch_ring_window_aligned<R, WIDE_OUTS, true, false>(a, ONE_WAVE);
    }
};
template <int R> struct strip_ring8 {
    static void launch(const struct conv_args *a)
    {
        launch_ring_window_aligned<R, WIDE_OUTS, true, true>(a, ONE_WAVE);
    }
};
template <int R> struct strip_ring {
    static void launch(const struct conv_args *a)
    {
        launch_ring_window_aligned<R, 4, true, true>(a, ONE_WAVE);
    }
};

/* The radius becomes a template argument here; beyond the table, the run-time kernel. */
template <template <int> class Variant> static void launch_for_radius(const struct conv_args *a)
{
    static_assert(MAX_UNROLLED_RADIUS == 7, "one case per unrolled radius");
    switch (a->shape.ksize / 2) {
    case 0: Variant<0>::launch(a); break;
    case 1: Variant<1>::launch(a); break;
    case 2: Variant<2>::launch(a); break;
    case 3: Variant<3>::launch(a); break;
    case 4: Variant<4>::launch(a); break;
    case 5: Variant<5>::launch(a); break;
    case 6: Variant<6>::launch(a); break;
    case 7: Variant<7>::launch(a); break;
    default: launch_any_radius(a); break;
    }
}

extern "C" void upload_filter(const struct conv_args *a)
{
    const size_t bytes = (size_t)a->shape.ksize * a->shape.ksize * sizeof(float);
    CUDA_CHECK(cudaMemcpyToSymbol(filter_taps, weights_f32(a), bytes, 0, cudaMemcpyDeviceToDevice));
    if (a->shape.bias) {
        CUDA_CHECK(
            cudaMemcpyToSymbol(filter_bias, a->bias, sizeof(float), 0, cudaMemcpyDeviceToDevice));
    } else {
        const float no_bias = 0.0f;
        CUDA_CHECK(cudaMemcpyToSymbol(filter_bias, &no_bias, sizeof no_bias));
    }
}

extern "C" void launch_one_per_thread(const struct conv_args *a)
{
    launch_for_radius<one_per_thread>(a);
}

extern "C" void launch_row4(const struct conv_args *a)
{
    launch_for_radius<row4>(a);
}

extern "C" void launch_row8(const struct conv_args *a)
{
    launch_for_radius<row8>(a);
}

extern "C" void launch_row8_vec4(const struct conv_args *a)
{
    launch_for_radius<row8_vec4>(a);
}

extern "C" void launch_strip32(const struct conv_args *a)
{
    launch_for_radius<strip32>(a);
}

extern "C" void launch_strip32_ahead(const struct conv_args *a)
{
    launch_for_radius<strip32_ahead>(a);
}

extern "C" void launch_strip(const struct conv_args *a)
{
    launch_for_radius<strip>(a);
}

extern "C" void launch_strip_prefetch(const struct conv_args *a)
{
    launch_for_radius<strip_prefetch>(a);
}

extern "C" void launch_ring8_regs(const struct conv_args *a)
{
    launch_for_radius<ring8_regs>(a);
}

extern "C" void launch_ring8_async(const struct conv_args *a)
{
    launch_for_radius<ring8_async>(a);
}

extern "C" void launch_ring8_wave(const struct conv_args *a)
{
    launch_for_radius<ring8_wave>(a);
}

extern "C" void launch_strip_ring8(const struct conv_args *a)
{
    launch_for_radius<strip_ring8>(a);
}

extern "C" void launch_strip_ring(const struct conv_args *a)
{
    launch_for_radius<strip_ring>(a);
}
