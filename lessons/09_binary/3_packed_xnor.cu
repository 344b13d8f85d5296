/* Lesson 09, variant "packed_xnor": the seed's arithmetic (XOR + __popc on the CUDA
 * cores) with the reuse it lacked. A block owns 32 output channels x 64 pixels: lane
 * = output channel, so a warp's store of one pixel is one 128-byte line of the NHWC
 * output; each warp computes 8 pixels. Per filter tap the block stages its 32
 * channels' weight words in shared memory, transposed ([word][channel], padded to 33
 * so both the staging writes and the lanes' reads hit 32 different banks); each
 * weight word then serves 64 pixels, and each input word (read once per warp, the
 * same address for all lanes: a broadcast) serves 32 channels.
 *
 *   build/bin/09_binary --preset bnn-b16c256s28 --variant packed_xnor
 */
#include "binary_ops.cuh"
#include "cuda_check.h"
#include "kernels.h"

#define XN_CHANNELS 32 /* a warp's lanes */
#define XN_WARPS 8
#define XN_PIXELS 8 /* per warp */
#define XN_TILE_PIXELS (XN_WARPS * XN_PIXELS)
#define XN_CHUNK_WORDS 64 /* weight words staged per tap and pass: 8.4 KB */
#define XN_PITCH (XN_CHANNELS + 1)

__global__ void __launch_bounds__(XN_CHANNELS *XN_WARPS)
    conv2d_packed_xnor(const uint32_t *__restrict__ input, const uint32_t *__restrict__ weights,
                       const float *__restrict__ alpha, const float *__restrict__ bias,
                       float *__restrict__ output, struct conv_shape s)
{
    __shared__ uint32_t w_tile[XN_CHUNK_WORDS * XN_PITCH];
    const int lane = threadIdx.x, warp = threadIdx.y;
    const int tid = warp * XN_CHANNELS + lane;
    const int k0 = blockIdx.y * XN_CHANNELS, k = k0 + lane;
    const int words = WORDS_PER_PIXEL(s.cin), taps = s.ksize * s.ksize, r = s.ksize / 2;
    const int pixels = s.n * s.h * s.w;
    const int p0 = blockIdx.x * XN_TILE_PIXELS + warp * XN_PIXELS;

    int mismatches[XN_PIXELS] = {0};
    for (int tap = 0; tap < taps; tap++) {
        const int di = tap / s.ksize - r, dj = tap % s.ksize - r;
        /* Where each of the warp's pixels reads this tap; -1 outside the image (or past
         * the last pixel): the same for every lane, so no divergence. */
        int src[XN_PIXELS];
#pragma unroll
        for (int p = 0; p < XN_PIXELS; p++) {
            const int pixel = p0 + p, x = pixel % s.w, y = pixel / s.w % s.h;
            const bool inside =
                pixel < pixels && y + di >= 0 && y + di < s.h && x + dj >= 0 && x + dj < s.w;
            src[p] = inside ? pixel + di * s.w + dj : -1;
        }
        for (int w0 = 0; w0 < words; w0 += XN_CHUNK_WORDS) {
            const int chunk = min(XN_CHUNK_WORDS, words - w0);
            __syncthreads(); /* the previous chunk's readers are done */
            for (int i = tid; i < XN_CHANNELS * chunk; i += XN_CHANNELS * XN_WARPS) {
                const int c = i / chunk, word = i % chunk;
                w_tile[word * XN_PITCH + c] =
                    k0 + c < s.cout ? weights[((size_t)(k0 + c) * taps + tap) * words + w0 + word]
                                    : 0u;
            }
            __syncthreads();
            /* [page: xnor-chunk] */
            for (int word = 0; word < chunk; word++) {
                const uint32_t w = w_tile[word * XN_PITCH + lane];
#pragma unroll
                for (int p = 0; p < XN_PIXELS; p++)
                    if (src[p] >= 0)
                        mismatches[p] += __popc(input[(size_t)src[p] * words + w0 + word] ^ w);
            }
            /* [/page: xnor-chunk] */
        }
    }
    if (k >= s.cout)
        return;
#pragma unroll
    for (int p = 0; p < XN_PIXELS; p++) {
        const int pixel = p0 + p;
        if (pixel >= pixels)
            break;
        const struct tap_window t = tap_window_at(pixel / s.w % s.h, pixel % s.w, &s);
        output[(size_t)pixel * s.cout + k] =
            binary_output(alpha, bias, k, sum_from_mismatches(s.cin, valid_taps(t), mismatches[p]));
    }
}

extern "C" void launch_conv2d_packed_xnor(const struct conv_args *a)
{
    const struct conv_shape *s = &a->shape;
    const int pixels = s->n * s->h * s->w;
    const dim3 grid((pixels + XN_TILE_PIXELS - 1) / XN_TILE_PIXELS,
                    (s->cout + XN_CHANNELS - 1) / XN_CHANNELS);
    const dim3 block(XN_CHANNELS, XN_WARPS);
    conv2d_packed_xnor<<<grid, block, 0, a->stream>>>((const uint32_t *)a->input,
                                                      (const uint32_t *)a->weights, a->scale,
                                                      a->bias, output_f32(a), *s);
    CUDA_CHECK_LAUNCH();
}
