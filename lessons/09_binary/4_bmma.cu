/* Lesson 09, variants "bmma_and", "bmma_xor" and "pack_bmma_and": the layer on the bit
 * tensor cores (the kernel and its loop: bmma_tile.cuh), with an fp32 epilogue. The counts become
 * sums of x * w with O(1) work per output: setup (untimed, once per layer, as a network
 * would) counts for every window class and output channel the op's base, the value of
 * its form at zero counts (binary_ops.cuh):
 *   AND: sum = base - 2 popc(x) + 4 popc(x AND w), popc(x) from the mma against ones;
 *   XOR: sum = base - 2 popc(x XOR w), the false mismatches of the zero words outside
 *        the image taken back out by the base.
 * A pixel's window class is (row class, column class): 9 classes for a 3x3 filter on any
 * image of 3 x 3 or more, so the table is a few KB: a block's 64 columns of it, alpha and
 * the bias are copied into shared memory with the first stage of the loop
 * (issue_epilogue_tables), so the epilogue waits on no global load. It reads one pair of
 * bases per 2 outputs, multiplies by alpha and adds the bias, and stores the pair as one
 * 8-byte store: the 4 lanes of a quad write one 32-byte sector of a pixel's row, whole.
 * Hopper runs .and.popc natively and emulates .xor.popc; both are here to measure it.
 *
 * What each change over the first version should buy (predictions, bnn-b16c256s28):
 *   - the per-pixel popcount kernel gone (one launch and a pass over the input: a few
 *     us of the 52.5 measured);
 *   - the border correction O(1) per output instead of a loop over the inside taps, and
 *     alpha, bias and the index math hoisted out of the per-output loop: the epilogue
 *     was 35 % of the issue slots;
 *   - cp.async with three k-steps in flight instead of one through registers, and 8
 *     warps of 32 x 32 at about 80 registers instead of 4 warps of 64 x 32 at 128: more
 *     warps per SM to hide the latency of a 9-step loop.
 * Together: the kernel near the time of writing its fp32 output (3.2 us at 4 TB/s)
 * plus the latency of one block's loop, about 8 us (docs/09_binary.md). A profile of
 * that version found 1909 instructions per warp for 90 mma: integer divisions and
 * index math per k-step and in the epilogue. So, next (bmma_tile.cuh):
 *   - a stage holds the 130 input rows that 3 taps of a filter row read, once, and
 *     the loop reads each tap's A rows from it shifted by one row, with a row of
 *     zeros for the taps outside the image: one barrier per 3 taps, input rows from
 *     L2 once per stage instead of once per tap, and the pixel's y, valid taps and
 *     window class counted once per block (the epilogue reads the class back).
 *
 *   build/bin/09_binary --preset bnn-b16c256s28 --variant bmma_and
 */
#include "bmma_tile.cuh"
#include "cuda_check.h"
#include "kernels.h"

#define BASES_BLOCK 256

/* Scratch, in this order: the table of bases [window class][padded channels] (a
 * multiple of 256 bytes, so what follows keeps the allocation's alignment), then the
 * packed input and weights (pack_bmma_and only). */
struct bmma_scratch {
    int *bases;
    uint32_t *packed_input, *packed_weights;
};

static size_t packed_words(const struct conv_shape *s, bool input)
{
    const size_t rows = input ? (size_t)s->n * s->h * s->w : (size_t)s->cout * s->ksize * s->ksize;
    return rows * WORDS_PER_PIXEL(s->cin);
}

static struct bmma_scratch carve(const struct conv_args *a, bool packs)
{
    const struct conv_shape *s = &a->shape;
    struct bmma_scratch b;
    b.bases = (int *)a->scratch;
    uint32_t *words = (uint32_t *)(b.bases + base_table_ints(s));
    b.packed_input = packs ? words : NULL;
    b.packed_weights = packs ? words + packed_words(s, true) : NULL;
    return b;
}

template <typename Op>
static void count_bases(const struct conv_args *a, const uint32_t *weights, int *bases)
{
    const long long ints = (long long)base_table_ints(&a->shape);
    count_window_class_bases<Op>
        <<<(unsigned)((ints + BASES_BLOCK - 1) / BASES_BLOCK), BASES_BLOCK, 0, a->stream>>>(
            weights, bases, a->shape);
    CUDA_CHECK_LAUNCH();
}

/* The epilogue: each pixel row's outputs from its class's bases (rows, stride: where
 * they are, bmma_tile.cuh), stored as 8-byte pairs, the 4 lanes of a quad writing one
 * 32-byte sector of the pixel's row. */
template <typename Op> struct fp32_values {
    typedef float out;
    static __device__ __forceinline__ void store(const struct bmma_smem &sm,
                                                 const struct bmma_counts &c, const int *rows,
                                                 int stride, float *__restrict__ output,
                                                 const struct conv_shape &s, int m0, int n0)
    {
        const int lane = threadIdx.x % 32, warp = threadIdx.x / 32;
        /* c0 + j * 8 + e: the block's channel of the thread's outputs */
        const int c0 = warp / WARPS_M * WARP_N + 2 * (lane % 4);
        const int k0 = n0 + c0;
        const int pixels = s.n * s.h * s.w;
        const struct channel_affine affine = affine_at(sm, c0);
#pragma unroll
        for (int i = 0; i < M_FRAGS; i++)
#pragma unroll
            for (int h = 0; h < 2; h++) {
                const int pixel = m0 + warp % WARPS_M * WARP_M + i * 16 + lane / 4 + 8 * h;
                if (pixel >= pixels)
                    continue;
                float2 v[N_FRAGS];
                row_outputs<Op>(affine, c, rows + sm.window_class[pixel - m0] * stride, c0, i, h,
                                v);
                float *row = output + (size_t)pixel * s.cout;
#pragma unroll
                for (int j = 0; j < N_FRAGS; j++) {
                    const int k = k0 + j * 8;
                    if (k >= s.cout)
                        continue;
                    if (s.cout % 2 == 0) { /* k is even: the pair is 8-byte aligned */
                        *reinterpret_cast<float2 *>(row + k) = v[j];
                    } else {
                        row[k] = v[j].x;
                        if (k + 1 < s.cout)
                            row[k + 1] = v[j].y;
                    }
                }
            }
    }
};

/* At most: the table of bases in shared memory whenever the shape allows it. */
extern "C" size_t bmma_smem_per_block(const struct conv_shape *s)
{
    return bmma_smem_bytes(s, NULL);
}

extern "C" size_t bmma_scratch_bytes(const struct conv_shape *s)
{
    return base_table_ints(s) * sizeof(int);
}

extern "C" void setup_conv2d_bmma_and(const struct conv_args *a)
{
    count_bases<bmma_and>(a, (const uint32_t *)a->weights, carve(a, false).bases);
}

extern "C" void setup_conv2d_bmma_xor(const struct conv_args *a)
{
    count_bases<bmma_xor>(a, (const uint32_t *)a->weights, carve(a, false).bases);
}

extern "C" void launch_conv2d_bmma_and(const struct conv_args *a)
{
    launch_bmma<bmma_and, fp32_values>(a, (const uint32_t *)a->input, (const uint32_t *)a->weights,
                                       carve(a, false).bases, output_f32(a));
}

extern "C" void launch_conv2d_bmma_xor(const struct conv_args *a)
{
    launch_bmma<bmma_xor, fp32_values>(a, (const uint32_t *)a->input, (const uint32_t *)a->weights,
                                       carve(a, false).bases, output_f32(a));
}

extern "C" size_t pack_bmma_scratch_bytes(const struct conv_shape *s)
{
    return bmma_scratch_bytes(s) +
           (packed_words(s, true) + packed_words(s, false)) * sizeof(uint32_t);
}

extern "C" void setup_conv2d_pack_bmma_and(const struct conv_args *a)
{
    const struct bmma_scratch b = carve(a, true);
    const struct conv_shape *s = &a->shape;
    enqueue_pack_signs(weights_f32(a), b.packed_weights, (long long)s->cout * s->ksize * s->ksize,
                       s->cin, a->stream);
    count_bases<bmma_and>(a, b.packed_weights, b.bases);
}

extern "C" void launch_conv2d_pack_bmma_and(const struct conv_args *a)
{
    const struct bmma_scratch b = carve(a, true);
    const struct conv_shape *s = &a->shape;
    enqueue_pack_signs(input_f32(a), b.packed_input, (long long)s->n * s->h * s->w, s->cin,
                       a->stream);
    launch_bmma<bmma_and, fp32_values>(a, b.packed_input, b.packed_weights, b.bases, output_f32(a));
}
