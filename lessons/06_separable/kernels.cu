/* Lesson 06: separable filters. A filter that is an outer product column x row is
 * applied as a row pass and then a column pass: 2k multiply-adds per output instead
 * of k^2. Two launches through an intermediate image cost a second trip through
 * memory; the fused kernels keep the intermediate on the chip.
 *
 *   build/bin/06_separable --preset big7 --filter gaussian   (or --ksize 15, ...)
 */
#include <stdint.h>
#include <stdlib.h>

#include "conv_args.h"
#include "conv_problem.h"
#include "cuda_check.h"
#include "grid_chunks.cuh"
#include "kernels.h"
#include "row_span.cuh"
#include "separable_factors.h"

/* A warp covers one row: 32 threads side by side, each with its own outputs. */
#define BLOCK_W 32
#define BLOCK_H 4
#define BLOCK_THREADS (BLOCK_W * BLOCK_H)
/* Radii with unrolled instantiations: the common filter sizes 1..15. */
#define MAX_UNROLLED_RADIUS 7
/* Row pass: outputs per thread along a row (lesson 05's row8_vec4). */
#define ROW_OUTS 8
/* Column pass: one float4 of columns per thread, COLUMN_ROWS rows down, so each
 * intermediate row it loads serves up to COLUMN_ROWS outputs. */
#define COLUMN_OUTS 4
#define COLUMN_ROWS 8
/* fused_smem: 32 x 8 threads make a tile 128 columns wide and 64 rows tall. */
#define TILE_THREADS_H 8
#define TILE_THREADS (BLOCK_W * TILE_THREADS_H)
#define TILE_W (BLOCK_W * COLUMN_OUTS)
#define TILE_H (TILE_THREADS_H * COLUMN_ROWS)
/* Register budgets (__launch_bounds__' minimum blocks per SM), read off ptxas -v:
 * left to itself (0), ptxas spills a few bytes in these two kernels. */
#define FUSED_SMEM_MIN_BLOCKS 2
__host__ __device__ constexpr int column_pass_min_blocks(bool wide)
{
    return wide ? 4 : 0;
}
/* fused_registers: a thread's patch, 4 columns (one float4) by fused_rows(R) rows. */
#define FUSED_OUTS 4

/* The factors of the filter: w[i][j] = column_taps[i] * row_taps[j]. */
static __constant__ float row_taps[MAX_KSIZE];
static __constant__ float column_taps[MAX_KSIZE];
static __constant__ float filter_bias;

/* The intermediate image of two_pass (and of the fallback above ksize 15) lives in
 * the scratch memory the harness allocates before the untimed setup, so that run()
 * allocates nothing. */
static float *intermediate_of(const struct conv_args *a)
{
    return (float *)a->scratch;
}

/* The 1-D row filter on a span already in registers: output m reads span floats
 * m .. m + 2R after the (SPAN - OUTS) / 2 - R it skips (the halo rounding). */
template <int R, int OUTS, int SPAN>
__device__ __forceinline__ void filter_row(const float (&v)[SPAN], float (&out)[OUTS])
{
    constexpr int SKIP = (SPAN - OUTS) / 2 - R;
#pragma unroll
    for (int m = 0; m < OUTS; ++m) {
        out[m] = 0.0f;
#pragma unroll
        for (int j = 0; j < 2 * R + 1; ++j)
            out[m] = fmaf(v[SKIP + m + j], row_taps[j], out[m]);
    }
}

/* The 1-D column filter, one input row at a time: row t of the ROWS + 2R rows a
 * thread walks down feeds its output row o with column tap t - o. An output row
 * starts with the bias at tap 0 and is stored after tap 2R. */
template <int R, int ROWS, int OUTS, bool WIDE>
__device__ __forceinline__ void filter_column_step(int t, const float (&v)[OUTS],
                                                   float (&acc)[ROWS][OUTS], float *plane, int y0,
                                                   int x0, int h, int w)
{
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
}

/* two_pass, first launch: each thread filters ROW_OUTS outputs of one row. */
template <int R, bool WIDE>
__global__ void __launch_bounds__(BLOCK_THREADS)
    row_pass(const float *__restrict__ in, float *__restrict__ mid, int n, int h, int w,
             int tiles_x)
{
    constexpr int HALO = WIDE ? (R + VEC - 1) / VEC * VEC : R;
    constexpr int SPAN = ROW_OUTS + 2 * HALO;
    const int x0 = ((int)(blockIdx.x % tiles_x) * BLOCK_W + (int)threadIdx.x) * ROW_OUTS;
    const int y = (int)(blockIdx.x / tiles_x) * BLOCK_H + (int)threadIdx.y;
    if (x0 >= w || y >= h)
        return;
    for (int p = blockIdx.y; p < n; p += gridDim.y) {
        float v[SPAN], filtered[ROW_OUTS];
        load_span<SPAN, WIDE>(v, in + (size_t)p * h * w, y, x0 - HALO, h, w);
        filter_row<R>(v, filtered);
        store_span<ROW_OUTS, WIDE>(filtered, mid + (size_t)p * h * w, y, x0, h, w);
    }
}

/* two_pass, second launch: each thread filters COLUMN_OUTS columns down
 * COLUMN_ROWS rows of the intermediate image. */
template <int R, bool WIDE>
__global__ void __launch_bounds__(BLOCK_THREADS, column_pass_min_blocks(WIDE))
    column_pass(const float *__restrict__ mid, float *__restrict__ out, int n, int h, int w,
                int tiles_x)
{
    const int x0 = ((int)(blockIdx.x % tiles_x) * BLOCK_W + (int)threadIdx.x) * COLUMN_OUTS;
    const int y0 = ((int)(blockIdx.x / tiles_x) * BLOCK_H + (int)threadIdx.y) * COLUMN_ROWS;
    if (x0 >= w || y0 >= h)
        return;
    for (int p = blockIdx.y; p < n; p += gridDim.y) {
        float acc[COLUMN_ROWS][COLUMN_OUTS];
#pragma unroll
        for (int t = 0; t < COLUMN_ROWS + 2 * R; ++t) {
            float v[COLUMN_OUTS];
            load_span<COLUMN_OUTS, WIDE>(v, mid + (size_t)p * h * w, y0 - R + t, x0, h, w);
            filter_column_step<R, COLUMN_ROWS, COLUMN_OUTS, WIDE>(
                t, v, acc, out + (size_t)p * h * w, y0, x0, h, w);
        }
    }
}

/* fused_smem: a block's tile in one kernel. First the row pass of the tile's
 * TILE_H rows and the R rows above and below it, each thread one float4 of columns
 * per row, into shared memory; then, after the barrier, the column pass out of
 * shared memory, each thread COLUMN_ROWS rows of its float4 of columns. The
 * intermediate never goes to DRAM. */
template <int R, bool WIDE>
__global__ void __launch_bounds__(TILE_THREADS, FUSED_SMEM_MIN_BLOCKS)
    conv2d_fused_smem(const float *__restrict__ in, float *__restrict__ out, int n, int h, int w,
                      int tiles_x)
{
    constexpr int HALO = WIDE ? (R + VEC - 1) / VEC * VEC : R;
    constexpr int SPAN = COLUMN_OUTS + 2 * HALO;
    constexpr int MID_ROWS = TILE_H + 2 * R;
    /* One float4 per thread per row: a warp reads or writes 512 contiguous bytes,
     * free of bank conflicts. */
    __shared__ float4 mid[MID_ROWS][BLOCK_W];

    const int tx = threadIdx.x, ty = threadIdx.y;
    const int x0 = (int)(blockIdx.x % tiles_x) * TILE_W + tx * COLUMN_OUTS;
    const int tile_y0 = (int)(blockIdx.x / tiles_x) * TILE_H;
    for (int p = blockIdx.y; p < n; p += gridDim.y) {
        const float *src = in + (size_t)p * h * w;
#pragma unroll
        for (int k = 0; k < ceil_div(MID_ROWS, TILE_THREADS_H); ++k) {
            const int row = ty + k * TILE_THREADS_H;
            if (row < MID_ROWS) {
                float v[SPAN], filtered[COLUMN_OUTS];
                load_span<SPAN, WIDE>(v, src, tile_y0 - R + row, x0 - HALO, h, w);
                filter_row<R>(v, filtered);
                mid[row][tx] = make_float4(filtered[0], filtered[1], filtered[2], filtered[3]);
            }
        }
        __syncthreads();
        const int first = ty * COLUMN_ROWS;
        float acc[COLUMN_ROWS][COLUMN_OUTS];
#pragma unroll
        for (int t = 0; t < COLUMN_ROWS + 2 * R; ++t) {
            const float4 q = mid[first + t][tx];
            const float v[COLUMN_OUTS] = {q.x, q.y, q.z, q.w};
            filter_column_step<R, COLUMN_ROWS, COLUMN_OUTS, WIDE>(
                t, v, acc, out + (size_t)p * h * w, tile_y0 + first, x0, h, w);
        }
        /* The next plane's row pass overwrites mid. */
        __syncthreads();
    }
}

/* Rows of a fused_registers patch. The unrolled code holds all rows + 2R input
 * rows of it; beyond radius 4, 8 rows need more than 255 registers (ptxas -v shows
 * the spills), so larger filters get 4. */
__host__ __device__ constexpr int fused_rows(int r)
{
    return r <= 4 ? 8 : 4;
}

/* fused_registers: no shared memory and no barrier. Each thread walks down the
 * ROWS + 2R input rows of its patch, filters each along the row into
 * registers and feeds the result straight into the column filter; the row pass
 * of the 2R halo rows is recomputed by the thread above or below. */
template <int R, bool WIDE>
__global__ void __launch_bounds__(BLOCK_THREADS)
    conv2d_fused_registers(const float *__restrict__ in, float *__restrict__ out, int n, int h,
                           int w, int tiles_x)
{
    constexpr int HALO = WIDE ? (R + VEC - 1) / VEC * VEC : R;
    constexpr int SPAN = FUSED_OUTS + 2 * HALO;
    constexpr int ROWS = fused_rows(R);
    const int x0 = ((int)(blockIdx.x % tiles_x) * BLOCK_W + (int)threadIdx.x) * FUSED_OUTS;
    const int y0 = ((int)(blockIdx.x / tiles_x) * BLOCK_H + (int)threadIdx.y) * ROWS;
    if (x0 >= w || y0 >= h)
        return;
    for (int p = blockIdx.y; p < n; p += gridDim.y) {
        const float *src = in + (size_t)p * h * w;
        float acc[ROWS][FUSED_OUTS];
#pragma unroll
        for (int t = 0; t < ROWS + 2 * R; ++t) {
            float v[SPAN], filtered[FUSED_OUTS];
            load_span<SPAN, WIDE>(v, src, y0 - R + t, x0 - HALO, h, w);
            filter_row<R>(v, filtered);
            filter_column_step<R, ROWS, FUSED_OUTS, WIDE>(t, filtered, acc, out + (size_t)p * h * w,
                                                          y0, x0, h, w);
        }
    }
}

/* Filters larger than 15x15: the same two passes with a run-time radius, one output
 * per thread. */
__global__ void __launch_bounds__(BLOCK_THREADS)
    row_pass_any_radius(const float *__restrict__ in, float *__restrict__ mid, int n, int h, int w,
                        int r, int tiles_x)
{
    const int x = (int)(blockIdx.x % tiles_x) * BLOCK_W + (int)threadIdx.x;
    const int y = (int)(blockIdx.x / tiles_x) * BLOCK_H + (int)threadIdx.y;
    if (x >= w || y >= h)
        return;
    for (int p = blockIdx.y; p < n; p += gridDim.y) {
        const float *row = in + (size_t)p * h * w + (size_t)y * w;
        float acc = 0.0f;
        for (int j = 0; j <= 2 * r; ++j) {
            const int c = x - r + j;
            if ((unsigned)c < (unsigned)w)
                acc = fmaf(__ldg(row + c), row_taps[j], acc);
        }
        mid[(size_t)p * h * w + (size_t)y * w + x] = acc;
    }
}

__global__ void __launch_bounds__(BLOCK_THREADS)
    column_pass_any_radius(const float *__restrict__ mid, float *__restrict__ out, int n, int h,
                           int w, int r, int tiles_x)
{
    const int x = (int)(blockIdx.x % tiles_x) * BLOCK_W + (int)threadIdx.x;
    const int y = (int)(blockIdx.x / tiles_x) * BLOCK_H + (int)threadIdx.y;
    if (x >= w || y >= h)
        return;
    for (int p = blockIdx.y; p < n; p += gridDim.y) {
        const float *plane = mid + (size_t)p * h * w;
        float acc = filter_bias;
        for (int i = 0; i <= 2 * r; ++i) {
            const int in_y = y - r + i;
            if ((unsigned)in_y < (unsigned)h)
                acc = fmaf(__ldg(plane + (size_t)in_y * w + x), column_taps[i], acc);
        }
        out[(size_t)p * h * w + (size_t)y * w + x] = acc;
    }
}

/* A grid of tiles_x x tiles_y tiles in blockIdx.x (no 65535 limit on rows) and the
 * planes in blockIdx.y. */
static dim3 grid_of(const struct conv_shape *s, int tiles_x, int tile_h)
{
    return dim3(tiles_x * ceil_div(s->h, tile_h), grid_planes(s->n));
}

static void launch_two_pass_any_radius(const struct conv_args *a)
{
    const struct conv_shape *s = &a->shape;
    const int tiles_x = ceil_div(s->w, BLOCK_W);
    const dim3 grid = grid_of(s, tiles_x, BLOCK_H), block(BLOCK_W, BLOCK_H);
    row_pass_any_radius<<<grid, block, 0, a->stream>>>(input_f32(a), intermediate_of(a), s->n, s->h,
                                                       s->w, s->ksize / 2, tiles_x);
    CUDA_CHECK_LAUNCH();
    column_pass_any_radius<<<grid, block, 0, a->stream>>>(intermediate_of(a), output_f32(a), s->n,
                                                          s->h, s->w, s->ksize / 2, tiles_x);
    CUDA_CHECK_LAUNCH();
}

/* 16-byte loads need every row to start on 16 bytes: a width that is a multiple of
 * 4 floats and buffers that start on 16 bytes. Otherwise the scalar-load kernels. */
static bool rows_are_16_byte_aligned(const struct conv_args *a)
{
    const size_t bytes = VEC * sizeof(float);
    return a->shape.w % VEC == 0 && (uintptr_t)input_f32(a) % bytes == 0 &&
           (uintptr_t)output_f32(a) % bytes == 0 && (uintptr_t)intermediate_of(a) % bytes == 0;
}

template <int R, bool WIDE> static void launch_two_pass_with(const struct conv_args *a)
{
    const struct conv_shape *s = &a->shape;
    const dim3 block(BLOCK_W, BLOCK_H);
    const int row_tiles_x = ceil_div(s->w, BLOCK_W * ROW_OUTS);
    row_pass<R, WIDE><<<grid_of(s, row_tiles_x, BLOCK_H), block, 0, a->stream>>>(
        input_f32(a), intermediate_of(a), s->n, s->h, s->w, row_tiles_x);
    CUDA_CHECK_LAUNCH();
    const int column_tiles_x = ceil_div(s->w, BLOCK_W * COLUMN_OUTS);
    column_pass<R, WIDE>
        <<<grid_of(s, column_tiles_x, BLOCK_H * COLUMN_ROWS), block, 0, a->stream>>>(
            intermediate_of(a), output_f32(a), s->n, s->h, s->w, column_tiles_x);
    CUDA_CHECK_LAUNCH();
}

template <int R, bool WIDE> static void launch_fused_smem_with(const struct conv_args *a)
{
    const struct conv_shape *s = &a->shape;
    const int tiles_x = ceil_div(s->w, TILE_W);
    conv2d_fused_smem<R, WIDE>
        <<<grid_of(s, tiles_x, TILE_H), dim3(BLOCK_W, TILE_THREADS_H), 0, a->stream>>>(
            input_f32(a), output_f32(a), s->n, s->h, s->w, tiles_x);
    CUDA_CHECK_LAUNCH();
}

template <int R, bool WIDE> static void launch_fused_registers_with(const struct conv_args *a)
{
    const struct conv_shape *s = &a->shape;
    const int tiles_x = ceil_div(s->w, BLOCK_W * FUSED_OUTS);
    conv2d_fused_registers<R, WIDE>
        <<<grid_of(s, tiles_x, BLOCK_H * fused_rows(R)), dim3(BLOCK_W, BLOCK_H), 0, a->stream>>>(
            input_f32(a), output_f32(a), s->n, s->h, s->w, tiles_x);
    CUDA_CHECK_LAUNCH();
}

/* The variants for a compile-time radius R, each with and without 16-byte loads. */
template <int R> struct two_pass {
    static void launch(const struct conv_args *a)
    {
        if (rows_are_16_byte_aligned(a))
            launch_two_pass_with<R, true>(a);
        else
            launch_two_pass_with<R, false>(a);
    }
};
template <int R> struct fused_smem {
    static void launch(const struct conv_args *a)
    {
        if (rows_are_16_byte_aligned(a))
            launch_fused_smem_with<R, true>(a);
        else
            launch_fused_smem_with<R, false>(a);
    }
};
template <int R> struct fused_registers {
    static void launch(const struct conv_args *a)
    {
        if (rows_are_16_byte_aligned(a))
            launch_fused_registers_with<R, true>(a);
        else
            launch_fused_registers_with<R, false>(a);
    }
};

/* The radius becomes a template argument here; beyond the table, the run-time
 * two-pass kernels. */
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
    default: launch_two_pass_any_radius(a); break;
    }
}

static size_t intermediate_bytes(const struct conv_shape *s)
{
    return (size_t)s->n * s->h * s->w * sizeof(float);
}

extern "C" size_t two_pass_scratch_bytes(const struct conv_shape *s)
{
    return intermediate_bytes(s);
}

extern "C" size_t fused_scratch_bytes(const struct conv_shape *s)
{
    return s->ksize / 2 > MAX_UNROLLED_RADIUS ? intermediate_bytes(s) : 0;
}

/* The filter's factors, computed on the host from a copy of the device taps, into
 * __constant__ memory; the bias beside them. */
static void upload_factors(const struct conv_args *a)
{
    const int k = a->shape.ksize;
    float taps[MAX_KSIZE * MAX_KSIZE], column[MAX_KSIZE], row[MAX_KSIZE];
    CUDA_CHECK(
        cudaMemcpy(taps, weights_f32(a), (size_t)k * k * sizeof(float), cudaMemcpyDeviceToHost));
    separable_factors(taps, k, column, row);
    CUDA_CHECK(cudaMemcpyToSymbol(column_taps, column, (size_t)k * sizeof(float)));
    CUDA_CHECK(cudaMemcpyToSymbol(row_taps, row, (size_t)k * sizeof(float)));
    if (a->shape.bias) {
        CUDA_CHECK(
            cudaMemcpyToSymbol(filter_bias, a->bias, sizeof(float), 0, cudaMemcpyDeviceToDevice));
    } else {
        const float no_bias = 0.0f;
        CUDA_CHECK(cudaMemcpyToSymbol(filter_bias, &no_bias, sizeof no_bias));
    }
}

extern "C" void setup_factors(const struct conv_args *a)
{
    upload_factors(a);
}

extern "C" void launch_two_pass(const struct conv_args *a)
{
    launch_for_radius<two_pass>(a);
}

extern "C" void launch_fused_smem(const struct conv_args *a)
{
    launch_for_radius<fused_smem>(a);
}

extern "C" void launch_fused_registers(const struct conv_args *a)
{
    launch_for_radius<fused_registers>(a);
}
