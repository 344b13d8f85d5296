/* Lesson 09: packing. A binary layer's input arrives as floats (the previous layer's
 * output); before an XOR or AND can work on it, 32 channels must become one word.
 * A warp reads 32 neighbouring channels of one pixel (one 128-byte line) and
 * __ballot_sync makes the word from their signs in one instruction: bit c set when
 * channel c is >= 0 (+1). Channels past C leave their bits clear, as the harness's
 * packing does, so padding bits never differ between input and weights. */
#include "binary_ops.cuh"
#include "cuda_check.h"
#include "kernels.h"

#define PACK_BLOCK 256
#define WARP 32

__global__ void __launch_bounds__(PACK_BLOCK)
    pack_signs(const float *__restrict__ rows, uint32_t *__restrict__ bits, long long pixels,
               int channels)
{
    const int words = WORDS_PER_PIXEL(channels);
    const long long word = ((long long)blockIdx.x * blockDim.x + threadIdx.x) / WARP;
    if (word >= pixels * words) /* whole warps leave together: the ballot below is warp-wide */
        return;
    /* [page: pack-ballot] */
    const int lane = threadIdx.x % WARP;
    const long long pixel = word / words;
    const int c = (int)(word % words) * WARP + lane;
    const bool plus = c < channels && rows[pixel * channels + c] >= 0.0f;
    const uint32_t packed = __ballot_sync(0xffffffffu, plus);
    if (lane == 0)
        bits[word] = packed;
    /* [/page: pack-ballot] */
}

extern "C" void enqueue_pack_signs(const float *rows, uint32_t *bits, long long pixels,
                                   int channels, cudaStream_t stream)
{
    const long long threads = pixels * WORDS_PER_PIXEL(channels) * WARP;
    const unsigned blocks = (unsigned)((threads + PACK_BLOCK - 1) / PACK_BLOCK);
    pack_signs<<<blocks, PACK_BLOCK, 0, stream>>>(rows, bits, pixels, channels);
    CUDA_CHECK_LAUNCH();
}
