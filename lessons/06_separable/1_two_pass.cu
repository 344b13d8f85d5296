/* Lesson 06: separable filters. A filter that is an outer product column x row is
 * applied as a row pass and then a column pass: 2k multiply-adds per output instead
 * of k^2. Two launches through an intermediate image cost a second trip through
 * memory; the fused kernels (steps 2 and 3) keep the intermediate on the chip.
 *
 *   build/bin/06_separable --preset big7 --filter gaussian   (or --ksize 15, ...)
 */
#include "kernels.h"
#include "separable.cuh"
#include "unrolled_radius.cuh"

/* Row pass: outputs per thread along a row (lesson 05's row8_vec4). */
#define ROW_OUTS 8
/* Register budget of column_pass (__launch_bounds__' minimum blocks per SM), read off
 * ptxas -v: left to itself (0), ptxas spills a few bytes. */
__host__ __device__ constexpr int column_pass_min_blocks(bool wide)
{
    return wide ? 4 : 0;
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

void launch_two_pass_any_radius(const struct conv_args *a)
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

/* two_pass for a compile-time radius R, with or without 16-byte loads. */
struct two_pass {
    template <int R, bool WIDE> static void launch(const struct conv_args *a)
    {
        const struct conv_shape *s = &a->shape;
        /* [page: two-launches] */
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
        /* [/page: two-launches] */
    }
};

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

extern "C" void setup_two_pass(const struct conv_args *a)
{
    upload_factors(a);
}

extern "C" void launch_two_pass(const struct conv_args *a)
{
    launch_for_filter<two_pass>(a);
}
