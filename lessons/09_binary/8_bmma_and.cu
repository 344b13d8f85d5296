/* Lesson 09, variants "bmma_and", "bmma_xor" and "pack_bmma_and": bmma_rows with the
 * epilogue's tables in shared memory (BMMA_TABLES, bmma_tile.cuh), the last step of the
 * ladder. A profile of bmma_rows put 40 % of its stall samples on the epilogue, each warp
 * waiting on five dependent round trips to L2: alpha and the bias, then one class's
 * bases per pixel row. Here each block copies alpha, the bias (64 floats each, 0 past
 * cout) and its 64 columns of the table of bases, one row per window class (9 rows,
 * 2.3 KB on a 3x3 filter; up to 49 classes, any filter up to 7x7, in shared memory,
 * more from global memory as before), with the first stage of the loop
 * (issue_epilogue_tables): the loop's first wait and barrier cover them, so the epilogue
 * waits on no global load. Dynamic shared memory, 51 KB a block on bnn-b16c256s28,
 * still 3 blocks per SM.
 *
 * bmma_xor is the same kernel with .xor.popc and its own base (no popc(x) mma): Hopper
 * runs .and.popc natively and emulates .xor.popc, and the two rows measure it.
 * pack_bmma_and is bmma_and on +1/-1 float NHWC input, packed into scratch inside the
 * timed run (pack_bits.cu), as a network whose previous layer writes floats runs it.
 *
 *   build/bin/09_binary --preset bnn-b16c256s28 --variant bmma_and
 */
#include "bmma_tile.cuh"
#include "kernels.h"

/* pack_bmma_and's scratch, in this order: the table of bases (a multiple of 256 bytes,
 * so what follows keeps the allocation's alignment), then the packed input and weights. */
struct pack_scratch {
    int *bases;
    uint32_t *packed_input, *packed_weights;
};

static size_t packed_words(const struct conv_shape *s, bool input)
{
    const size_t rows = input ? (size_t)s->n * s->h * s->w : (size_t)s->cout * s->ksize * s->ksize;
    return rows * WORDS_PER_PIXEL(s->cin);
}

static struct pack_scratch carve(const struct conv_args *a)
{
    struct pack_scratch b;
    b.bases = (int *)a->scratch;
    b.packed_input = (uint32_t *)(b.bases + base_table_ints(&a->shape));
    b.packed_weights = b.packed_input + packed_words(&a->shape, true);
    return b;
}

/* At most: the table of bases in shared memory whenever the shape allows it. */
extern "C" size_t bmma_smem_per_block(const struct conv_shape *s)
{
    return bmma_smem_bytes(s, NULL);
}

extern "C" void launch_conv2d_bmma_and(const struct conv_args *a)
{
    launch_bmma<bmma_and, fp32_values, BMMA_TABLES>(a);
}

extern "C" void setup_conv2d_bmma_xor(const struct conv_args *a)
{
    count_bases<bmma_xor>(a, (const uint32_t *)a->weights, (int *)a->scratch);
}

extern "C" void launch_conv2d_bmma_xor(const struct conv_args *a)
{
    launch_bmma<bmma_xor, fp32_values, BMMA_TABLES>(a);
}

extern "C" size_t pack_bmma_scratch_bytes(const struct conv_shape *s)
{
    return bmma_scratch_bytes(s) +
           (packed_words(s, true) + packed_words(s, false)) * sizeof(uint32_t);
}

extern "C" void setup_conv2d_pack_bmma_and(const struct conv_args *a)
{
    const struct pack_scratch b = carve(a);
    const struct conv_shape *s = &a->shape;
    enqueue_pack_signs(weights_f32(a), b.packed_weights, (long long)s->cout * s->ksize * s->ksize,
                       s->cin, a->stream);
    count_bases<bmma_and>(a, b.packed_weights, b.bases);
}

extern "C" void launch_conv2d_pack_bmma_and(const struct conv_args *a)
{
    const struct pack_scratch b = carve(a);
    const struct conv_shape *s = &a->shape;
    enqueue_pack_signs(input_f32(a), b.packed_input, (long long)s->n * s->h * s->w, s->cin,
                       a->stream);
    launch_bmma<bmma_and, fp32_values, BMMA_TABLES>(a, b.packed_input, b.packed_weights, b.bases,
                                                    output_f32(a));
}
