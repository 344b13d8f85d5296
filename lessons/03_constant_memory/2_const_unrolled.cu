/* Lesson 03, step 2: a compile-time radius lets the compiler unroll the loops, so
 * every tap's address is a constant.
 *
 *   build/bin/03_constant_memory --preset big3 --variant const_unrolled
 */
#include "constant_filter.cuh"
#include "kernels.h"
#include "unrolled_radius.cuh"

/* Step 1's kernel with the radius a template parameter: the trip counts are known,
 * so both loops unroll, the loop counters disappear, each filter tap and each
 * neighbour in a row is an immediate offset, and a row's loads can all be in
 * flight before its first FMA. */
/* [page: conv2d_const_unrolled] */
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
/* [/page: conv2d_const_unrolled] */

struct const_unrolled {
    template <int R> static void launch(const struct conv_args *a)
    {
        launch_over_image(conv2d_const_unrolled<R>, a);
    }
};

/* Radii past the table run step 1's kernel, which reads step 1's copy of the filter. */
extern "C" void setup_const_unrolled(const struct conv_args *a)
{
    copy_filter_to_constant(a);
    setup_const_runtime(a);
}

extern "C" void launch_conv2d_const_unrolled(const struct conv_args *a)
{
    launch_for_radius<const_unrolled>(a->shape.ksize / 2, a, launch_conv2d_const);
}
