/* Lesson 09, variant "bmma": the layer on the bit tensor cores, the first step of the
 * ladder to bmma_and (the kernel and its steps: bmma_tile.cuh). The XOR + popcount of
 * packed_xnor becomes one warp instruction per 16 pixels x 8 channels x 256 bits:
 *
 *   mma.sync.aligned.m16n8k256.row.col.s32.b1.b1.s32.and.popc
 *
 * sm_80 introduced this AND form (Hopper runs it natively and emulates the XOR form), so
 * the sum of x * w comes from popc(x XOR w) = popc(x) + popc(w) - 2 popc(x AND w) over
 * the taps inside the image (binary_ops.cuh, sum_from_and_popc): popc(x AND w) from the
 * mma, popc(x) from one more mma against a fragment of ones, and popc(w) over the inside
 * taps from a table setup counts once per layer (untimed, as a network would): the
 * popcount of every tap of every output channel's weights.
 *
 * Everything else is the straightforward version (BMMA_FIRST): a k-step is 256 bits of
 * one tap; each thread loads its chunks of the step's 128 input rows and 64 weight rows
 * and stores them into one shared buffer, a barrier, ldmatrix and the mma, a barrier.
 * The epilogue adds up, for every output, the weight counts of the taps inside the image
 * (tap_bases): up to 9 pairs of loads per output pair on a 3x3 filter. What each of the
 * next steps should buy is in its file.
 *
 *   build/bin/09_binary --preset bnn-b16c256s28 --variant bmma
 */
#include "bmma_tile.cuh"
#include "kernels.h"

#define POPS_BLOCK 256

static size_t tap_pops_ints(const struct conv_shape *s)
{
    return (size_t)s->ksize * s->ksize * padded_channels(s->cout);
}

/* One thread per (tap, channel): the popcount of the channel's weights at the tap (0 past
 * cout), pops[tap * kpad + channel], the table tap_bases reads. Untimed (setup). */
__global__ void count_tap_weights(const uint32_t *__restrict__ weights, int *__restrict__ pops,
                                  struct conv_shape s)
{
    const int kpad = padded_channels(s.cout), taps = s.ksize * s.ksize;
    const long long at = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    if (at >= (long long)taps * kpad)
        return;
    const int tap = (int)(at / kpad), k = (int)(at % kpad);
    const int words = WORDS_PER_PIXEL(s.cin);
    int pop = 0;
    if (k < s.cout)
        for (int w = 0; w < words; w++)
            pop += __popc(weights[((size_t)k * taps + tap) * words + w]);
    pops[at] = pop;
}

extern "C" size_t bmma_tap_scratch_bytes(const struct conv_shape *s)
{
    return tap_pops_ints(s) * sizeof(int);
}

extern "C" void setup_conv2d_bmma(const struct conv_args *a)
{
    const long long ints = (long long)tap_pops_ints(&a->shape);
    count_tap_weights<<<(unsigned)((ints + POPS_BLOCK - 1) / POPS_BLOCK), POPS_BLOCK, 0,
                        a->stream>>>((const uint32_t *)a->weights, (int *)a->scratch, a->shape);
    CUDA_CHECK_LAUNCH();
}

extern "C" void launch_conv2d_bmma(const struct conv_args *a)
{
    launch_bmma<bmma_and, fp32_values, BMMA_FIRST>(a);
}
