/* Lesson 05, step 3: the strip's input rows pass through a ring of shared rows that
 * the whole block fills, by cp.async at last, instead of each thread's registers.
 * A library of its own with any_radius.cu (ring_window.h): lesson 06 times
 * strip_ring8 beside its separable kernels.
 *
 *   build/bin/05_register_tiling --preset big5 --variant strip_ring
 */
#include <math.h>

#include "cp_async.cuh"
#include "register_tiling.cuh"
#include "ring_window.h"

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

/* The units of a LEN-float row (float4s with WIDE, else floats) that this thread of
 * THREADS copies, side by side with the others: f(k, e) for its k-th, unit e of the row.
 * The row copies below share this split, so each thread handles the same units. */
template <int LEN, int THREADS, bool WIDE, typename F>
__device__ __forceinline__ void for_each_row_unit(F f)
{
    constexpr int UNITS = LEN / (WIDE ? VEC : 1);
#pragma unroll
    for (int k = 0; k < (UNITS + THREADS - 1) / THREADS; ++k) {
        const int e = (int)threadIdx.x + k * THREADS;
        if (UNITS % THREADS != 0 && e >= UNITS)
            break;
        f(k, e);
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
    const bool row_inside = (unsigned)y < (unsigned)h;
    for_each_row_unit<LEN, THREADS, WIDE>([&](int k, int e) {
        const int c = x + e * UNIT;
        const bool inside = row_inside && (unsigned)c < (unsigned)w;
        const float *src = inside ? plane + (y * w + c) : plane;
        if (WIDE)
            copy_16_async(dst + e * UNIT, src, inside);
        else
            copy_4_async(dst + e * UNIT, src, inside);
    });
}

/* Units of a LEN-float row that one of THREADS threads copies in copy_row_async. */
__host__ __device__ constexpr int row_share_units(int len, int threads, bool wide)
{
    return (len / (wide ? VEC : 1) + threads - 1) / threads;
}

/* copy_row_async's copies of this thread as ordinary loads into its registers, unit k
 * into share[k] (zeros outside the image), for store_row_share to write into the shared
 * row later. The loop is for_each_row_unit's written out: through the lambda the
 * compiler assigns this kernel's registers differently, and the committed timings are
 * of this code. */
template <int LEN, int THREADS, bool WIDE>
__device__ __forceinline__ void
load_row_share(float (&share)[row_share_units(LEN, THREADS, WIDE)][WIDE ? VEC : 1],
               const float *__restrict__ plane, int y, int x, int h, int w)
{
    constexpr int UNIT = WIDE ? VEC : 1;
    constexpr int UNITS = LEN / UNIT;
#pragma unroll
    for (int k = 0; k < (UNITS + THREADS - 1) / THREADS; ++k) {
        const int e = (int)threadIdx.x + k * THREADS;
        if (UNITS % THREADS != 0 && e >= UNITS)
            break;
        load_span<UNIT, WIDE>(share[k], plane, y, x + e * UNIT, h, w);
    }
}

/* The registers load_row_share filled, into the shared row dst. */
template <int LEN, int THREADS, bool WIDE>
__device__ __forceinline__ void
store_row_share(float *dst,
                const float (&share)[row_share_units(LEN, THREADS, WIDE)][WIDE ? VEC : 1])
{
    for_each_row_unit<LEN, THREADS, WIDE>([&](int k, int e) {
        if constexpr (WIDE)
            *reinterpret_cast<float4 *>(dst + e * VEC) =
                make_float4(share[k][0], share[k][1], share[k][2], share[k][3]);
        else
            dst[e] = share[k][0];
    });
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
/* [page: ring-launch-bound] */
template <int R, int OUTS, bool WIDE, bool ASYNC, bool BOUND>
__global__ void __launch_bounds__(RING_TILE_W / OUTS, BOUND ? ring_min_blocks(R, OUTS) : 0)
/* [/page: ring-launch-bound] */
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
    float share[row_share_units(ROW, THREADS, WIDE)][WIDE ? VEC : 1];

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
            /* [page: ring-fill] */
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
            /* [/page: ring-fill] */
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
            /* [page: ring-compute] */
#pragma unroll
            for (int m = 0; m < OUTS; ++m)
                acc[K - 1][m] = filter_bias;
#pragma unroll
            for (int e = 0; e < K; ++e)
                add_filter_row<R, OUTS, HALO, SPAN>(acc[e], v, 2 * R - e);
            if (t >= 2 * R)
                store_span<OUTS, WIDE>(acc[0], dst, y0 + t - 2 * R, x0, h, w);
            /* [/page: ring-compute] */
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
    /* [page: ring-one-wave] */
    if (height == ONE_WAVE) {
        const double columns = (double)tiles_x * planes;
        const double resident = ring_resident_blocks<R, OUTS, WIDE, ASYNC, BOUND>();
        const int strips = columns >= resident ? 1 : (int)ceil(resident / columns);
        rows = ceil_div(s->h, strips);
    } else {
        rows = strip_rows_for(s, tiles_x, 1);
    }
    /* [/page: ring-one-wave] */
    const int tiles_y = ceil_div(s->h, rows);
    const dim3 grid(tiles_x * tiles_y, planes);
    conv2d_ring_window<R, OUTS, WIDE, ASYNC, BOUND><<<grid, RING_TILE_W / OUTS, 0, a->stream>>>(
        input_f32(a), output_f32(a), s->n, s->h, s->w, tiles_x, rows);
    CUDA_CHECK_LAUNCH();
}

/* ring8_regs, ring8_async, ring8_wave, strip_ring8 and strip_ring: OUTS outputs per
 * thread, in 16-byte loads where the rows allow them. */
template <int OUTS, bool ASYNC, bool BOUND, strip_height HEIGHT> struct ring_window {
    template <int R> static void launch(const struct conv_args *a)
    {
        if (rows_are_16_byte_aligned(a))
            launch_ring_window<R, OUTS, true, ASYNC, BOUND>(a, HEIGHT);
        else
            launch_ring_window<R, OUTS, false, ASYNC, BOUND>(a, HEIGHT);
    }
};

/* This file's copy of the filter, and the run-time-radius kernel's. */
extern "C" void setup_ring_window(const struct conv_args *a)
{
    upload_filter(a);
    setup_any_radius(a);
}

extern "C" void launch_ring8_regs(const struct conv_args *a)
{
    launch_for_filter<ring_window<WIDE_OUTS, false, false, FILL_SMS>>(a);
}

extern "C" void launch_ring8_async(const struct conv_args *a)
{
    launch_for_filter<ring_window<WIDE_OUTS, true, false, FILL_SMS>>(a);
}

extern "C" void launch_ring8_wave(const struct conv_args *a)
{
    launch_for_filter<ring_window<WIDE_OUTS, true, false, ONE_WAVE>>(a);
}

extern "C" void launch_strip_ring8(const struct conv_args *a)
{
    launch_for_filter<ring_window<WIDE_OUTS, true, true, ONE_WAVE>>(a);
}

extern "C" void launch_strip_ring(const struct conv_args *a)
{
    launch_for_filter<ring_window<4, true, true, ONE_WAVE>>(a);
}
