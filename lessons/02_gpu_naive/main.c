/* Lesson 02: one thread per output pixel, all reads from global memory. The variants
 * change only the block shape, and then which axis a warp walks along. */
#include "conv_op.h"
#include "kernels.h"
#include "lesson.h"

static void run_block16x16(const struct conv_args *a)
{
    launch_conv2d_naive(a, 16, 16);
}
static void run_block32x8(const struct conv_args *a)
{
    launch_conv2d_naive(a, 32, 8);
}
static void run_block32x32(const struct conv_args *a)
{
    launch_conv2d_naive(a, 32, 32);
}
static void run_uncoalesced(const struct conv_args *a)
{
    launch_conv2d_naive_uncoalesced(a, 32, 8);
}

static const struct conv_variant variants[] = {
    {.name = "block16x16",
     .what = "one thread per output, 16x16 blocks (the seed's naive kernel)",
     .run = run_block16x16},
    {.name = "block32x8",
     .what = "the same kernel, 32x8 blocks: each warp covers one full 128-byte row",
     .run = run_block32x8},
    {.name = "block32x32",
     .what = "the same kernel, 32x32 blocks: 1024 threads per block",
     .run = run_block32x32},
    {.name = "uncoalesced",
     .what = "32x8 blocks with threadIdx.x walking down columns: 32 rows per warp",
     .run = run_uncoalesced},
};

static const struct conv_spec conv = {
    .variants = variants,
    .variant_count = sizeof variants / sizeof variants[0],
    .unsupported = single_channel_only,
    .image_variant = "block32x8",
};

int main(int argc, char **argv)
{
    const struct lesson lesson = {
        .name = "02_gpu_naive",
        .title = "One thread per output pixel, everything from global memory",
        .default_preset = "seed000",
        .min_compute_capability = 75,
        .op = conv_op(&conv),
    };
    return lesson_main(&lesson, argc, argv);
}
