/* Lesson 03: the filter moves to __constant__ memory, where one read serves a whole
 * warp (every thread wants the same tap at the same time), and a compile-time radius
 * lets the compiler unroll the loops, so every tap's address is a constant.
 *
 *   build/bin/03_constant_memory --preset big3      (or --preset big7, --ksize 21, ...)
 */
#include "conv_args.h"
#include "conv_problem.h"
#include "cuda_check.h"
#include "grid_chunks.cuh"
#include "kernels.h"

/* Lesson 02's best block shape: a warp covers one 128-byte row segment. */
#define BLOCK_W 32
#define BLOCK_H 8
#define BLOCK_THREADS (BLOCK_W * BLOCK_H)
/* Radii with an unrolled instantiation; the common filter sizes 1..15. */
#define MAX_UNROLLED_RADIUS 7

/* 31 x 31 floats = 3844 bytes of the 64 KB constant bank, whatever ksize is. */
__constant__ float filter_const[MAX_KSIZE * MAX_KSIZE];

typedef void (*const_kernel)(const float *in, const float *bias, float *out, int h, int w,
                             int ksize, int first_row);

/* Lesson 02's kernel with the filter read from constant memory. */
__global__ void __launch_bounds__(BLOCK_THREADS)
    conv2d_const(const float *in, const float *bias, float *out, int h, int w, int ksize,
                 int first_row)
{
    const int x = blockIdx.x * BLOCK_W + threadIdx.x;
    const int y = first_row + blockIdx.y * BLOCK_H + threadIdx.y;
    if (x >= w || y >= h)
        return;
    const size_t plane = (size_t)blockIdx.z * h * w;
    const int r = ksize / 2;
    float acc = 0.0f;
    for (int i = 0; i < ksize; ++i) {
        const int in_y = y + i - r;
        if (in_y < 0 || in_y >= h)
            continue;
        for (int j = 0; j < ksize; ++j) {
            const int in_x = x + j - r;
            if (in_x >= 0 && in_x < w)
                acc += in[plane + in_y * w + in_x] * filter_const[i * ksize + j];
        }
    }
    out[plane + y * w + x] = (bias ? bias[0] : 0.0f) + acc;
}

/* The same kernel with the radius a template parameter: the trip counts are known,
 * so both loops unroll, the loop counters disappear, each filter tap and each
 * neighbour in a row is an immediate offset, and a row's loads can all be in
 * flight before its first FMA. */
template <int R>
__global__ void __launch_bounds__(BLOCK_THREADS)
    conv2d_const_unrolled(const float *in, const float *bias, float *out, int h, int w,
                          int /* ksize: 2R + 1 */, int first_row)
{
    constexpr int K = 2 * R + 1;
    const int x = blockIdx.x * BLOCK_W + threadIdx.x;
    const int y = first_row + blockIdx.y * BLOCK_H + threadIdx.y;
    if (x >= w || y >= h)
        return;
    const size_t plane = (size_t)blockIdx.z * h * w;
    float acc = 0.0f;
#pragma unroll
    for (int i = 0; i < K; ++i) {
        const int in_y = y + i - R;
        if (in_y < 0 || in_y >= h)
            continue;
#pragma unroll
        for (int j = 0; j < K; ++j) {
            const int in_x = x + j - R;
            if (in_x >= 0 && in_x < w)
                acc += in[plane + in_y * w + in_x] * filter_const[i * K + j];
        }
    }
    out[plane + y * w + x] = (bias ? bias[0] : 0.0f) + acc;
}

/* One launch per grid chunk (common/ops/conv/kernel/grid_chunks.cuh): one in practice. */
static void launch_over_image(const_kernel kernel, const struct conv_args *a)
{
    const struct conv_shape *s = &a->shape;
    for_each_grid_chunk(s, BLOCK_W, BLOCK_H, [&](dim3 grid, int plane, int first_row) {
        const size_t offset = (size_t)plane * s->h * s->w;
        kernel<<<grid, dim3(BLOCK_W, BLOCK_H), 0, a->stream>>>(input_f32(a) + offset, a->bias,
                                                               output_f32(a) + offset, s->h, s->w,
                                                               s->ksize, first_row);
        CUDA_CHECK_LAUNCH();
    });
}

/* Each instantiation is a separate kernel in the binary; radii beyond the table
 * take the run-time loop rather than growing the binary further. */
static const_kernel const_unrolled_for(int radius)
{
    switch (radius) {
    case 0: return conv2d_const_unrolled<0>;
    case 1: return conv2d_const_unrolled<1>;
    case 2: return conv2d_const_unrolled<2>;
    case 3: return conv2d_const_unrolled<3>;
    case 4: return conv2d_const_unrolled<4>;
    case 5: return conv2d_const_unrolled<5>;
    case 6: return conv2d_const_unrolled<6>;
    case 7: return conv2d_const_unrolled<7>;
    default: return conv2d_const;
    }
}

extern "C" void copy_filter_to_constant(const struct conv_args *a)
{
    const size_t bytes = (size_t)a->shape.ksize * a->shape.ksize * sizeof(float);
    CUDA_CHECK(
        cudaMemcpyToSymbol(filter_const, weights_f32(a), bytes, 0, cudaMemcpyDeviceToDevice));
}

extern "C" void launch_conv2d_const(const struct conv_args *a)
{
    launch_over_image(conv2d_const, a);
}

extern "C" void launch_conv2d_const_unrolled(const struct conv_args *a)
{
    launch_over_image(const_unrolled_for(a->shape.ksize / 2), a);
}
