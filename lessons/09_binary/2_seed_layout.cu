/* Lesson 09, variant "seed_layout": the design of seed 002's kernel, in CUDA C, made
 * correct for "same" padding and any channel count. A block is one output pixel and
 * its threads are the output channels; each thread loops over the packed input words
 * of the pixel's window and XORs them with its own channel's weights, straight from
 * global memory. Its faults, each measured against the next variant:
 *   - the 32 threads of a warp read weights taps*words words apart: 32 separate
 *     sectors per load instead of one line;
 *   - nothing is reused: every block reads all the weights of the layer (for
 *     bnn-b16c256s28, 73.7 KB per pixel, 925 MB in all from L2) for one pixel;
 *   - (in the seed) the output was NCHW, so a warp's 32 stores landed h*w floats
 *     apart; here the harness hands every binary variant an NHWC output, and the
 *     stores of this kernel are coalesced (docs/09_binary.md counts what the seed's
 *     cost).
 *
 *   build/bin/09_binary --preset bnn-b16c256s28 --variant seed_layout
 */
#include "binary_ops.cuh"
#include "cuda_check.h"
#include "kernels.h"

#define SEED_MAX_BLOCK 1024 /* the seed launched cout threads; more than this cannot */
#define WARP 32

__global__ void conv2d_seed_layout(const uint32_t *__restrict__ input,
                                   const uint32_t *__restrict__ weights,
                                   const float *__restrict__ alpha, const float *__restrict__ bias,
                                   float *__restrict__ output, struct conv_shape s)
{
    const int pixel = blockIdx.x; /* the seed's grid (b, x, y), flattened */
    const int x = pixel % s.w, y = pixel / s.w % s.h, n = pixel / (s.w * s.h);
    const int words = WORDS_PER_PIXEL(s.cin), taps = s.ksize * s.ksize, r = s.ksize / 2;
    const struct tap_window t = tap_window_at(y, x, &s);
    /* [page: seed-loop] */
    for (int k = threadIdx.x; k < s.cout; k += blockDim.x) {
        int mismatches = 0;
        for (int word = 0; word < words; word++)
            for (int i = t.i0; i < t.i1; i++)
                for (int j = t.j0; j < t.j1; j++) {
                    const int src = (n * s.h + y + i - r) * s.w + x + j - r;
                    mismatches +=
                        __popc(input[(size_t)src * words + word] ^
                               weights[((size_t)k * taps + i * s.ksize + j) * words + word]);
                }
        output[(size_t)pixel * s.cout + k] =
            binary_output(alpha, bias, k, sum_from_mismatches(s.cin, valid_taps(t), mismatches));
    }
    /* [/page: seed-loop] */
}

extern "C" void launch_conv2d_seed_layout(const struct conv_args *a)
{
    const struct conv_shape *s = &a->shape;
    const int rounded = (s->cout + WARP - 1) / WARP * WARP;
    const int threads = rounded < SEED_MAX_BLOCK ? rounded : SEED_MAX_BLOCK;
    conv2d_seed_layout<<<s->n * s->h * s->w, threads, 0, a->stream>>>(
        (const uint32_t *)a->input, (const uint32_t *)a->weights, a->scale, a->bias, output_f32(a),
        *s);
    CUDA_CHECK_LAUNCH();
}
