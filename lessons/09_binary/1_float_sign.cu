/* Lesson 09, variant "float_sign": binarise, but do not pack. The inputs and weights
 * are +1 and -1 stored as floats, and the layer runs on lesson 07's fastest fp32
 * kernel (implicit_gemm_async, linked from its library 07_implicit_gemm). A sum of
 * +1 and -1 products is an integer below 2^24, so the fp32 sum is exact; a second
 * kernel then applies alpha and the bias. The row shows what binarisation alone buys:
 * the same FLOPs, the same bytes, the same time as a float layer.
 *
 *   build/bin/09_binary --preset bnn-b16c256s28 --variant float_sign
 */
#include "binary_ops.cuh"
#include "cuda_check.h"
#include "implicit_gemm.h"
#include "kernels.h"

#define SCALE_BLOCK 256

/* out = alpha[k] * sum + bias[k] in place, NCHW. */
__global__ void __launch_bounds__(SCALE_BLOCK)
    scale_nchw(float *__restrict__ output, const float *__restrict__ alpha,
               const float *__restrict__ bias, struct conv_shape s)
{
    const long long at = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    const long long plane = (long long)s.h * s.w;
    if (at >= plane * s.cout * s.n)
        return;
    const int k = (int)(at / plane % s.cout);
    output[at] = binary_output(alpha, bias, k, (int)output[at]);
}

extern "C" size_t float_sign_scratch_bytes(const struct conv_shape *s)
{
    return implicit_gemm_scratch_bytes(s);
}

extern "C" void setup_conv2d_float_sign(const struct conv_args *a)
{
    setup_conv2d_implicit_gemm(a);
}

extern "C" void launch_conv2d_float_sign(const struct conv_args *a)
{
    /* [page: float-sign] */
    struct conv_args sums = *a;
    sums.bias = NULL;
    launch_conv2d_implicit_gemm_async(&sums);
    /* [/page: float-sign] */
    const struct conv_shape *s = &a->shape;
    const long long total = (long long)s->n * s->cout * s->h * s->w;
    const unsigned blocks = (unsigned)((total + SCALE_BLOCK - 1) / SCALE_BLOCK);
    scale_nchw<<<blocks, SCALE_BLOCK, 0, a->stream>>>(output_f32(a), a->scale, a->bias, *s);
    CUDA_CHECK_LAUNCH();
}
