/* Lesson 07, variant "direct": one thread per output value, looping over input
 * channels and filter taps with every operand read from global memory. It is
 * lesson 02's kernel with two more loops (channels, and the output channel in the
 * thread index), and the yardstick for every other variant in this lesson.
 *
 *   build/bin/07_multichannel --preset unet-128x128 --variant direct
 */
#include "cuda_check.h"
#include "kernels.h"

#define DIRECT_BLOCK 256

/* Consecutive threads take consecutive x, so a warp reads one input row segment
 * (coalesced) and, apart from warps that straddle two planes, a single weight
 * address per tap (one broadcast transaction). */
__global__ void __launch_bounds__(DIRECT_BLOCK)
    conv2d_direct(const float *__restrict__ input, const float *__restrict__ weights,
                  const float *__restrict__ bias, float *__restrict__ output, struct conv_shape s)
{
    /* Unsigned: the last block may reach past INT_MAX when the output nearly fills
     * 32-bit indexing. */
    const unsigned flat = blockIdx.x * blockDim.x + threadIdx.x;
    if (flat >= (unsigned)(s.n * s.cout * s.h * s.w))
        return;
    const int at = (int)flat;
    const int x = at % s.w;
    const int y = at / s.w % s.h;
    const int k = at / (s.w * s.h) % s.cout;
    const int n = at / (s.w * s.h * s.cout);
    const int pad = s.ksize / 2;
    const int plane = s.h * s.w;

    /* [page: direct-sum] */
    float sum = bias ? bias[k] : 0.0f;
    for (int c = 0; c < s.cin; c++) {
        const float *in_c = input + (n * s.cin + c) * plane;
        const float *w_kc = weights + (k * s.cin + c) * s.ksize * s.ksize;
        for (int i = 0; i < s.ksize; i++) {
            const int iy = y + i - pad;
            if (iy < 0 || iy >= s.h)
                continue;
            for (int j = 0; j < s.ksize; j++) {
                const int ix = x + j - pad;
                if (ix >= 0 && ix < s.w)
                    sum = fmaf(in_c[iy * s.w + ix], w_kc[i * s.ksize + j], sum);
            }
        }
    }
    output[at] = sum;
    /* [/page: direct-sum] */
}

extern "C" void launch_conv2d_direct(const struct conv_args *a)
{
    const struct conv_shape *s = &a->shape;
    const long long total = (long long)s->n * s->cout * s->h * s->w;
    const unsigned blocks = (unsigned)((total + DIRECT_BLOCK - 1) / DIRECT_BLOCK);
    conv2d_direct<<<blocks, DIRECT_BLOCK, 0, a->stream>>>(input_f32(a), weights_f32(a), a->bias,
                                                          output_f32(a), *s);
    CUDA_CHECK_LAUNCH();
}
