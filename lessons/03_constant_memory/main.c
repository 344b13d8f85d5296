/* Lesson 03: the filter in __constant__ memory, first with the radius known only at
 * run time, then with a compile-time radius so the loops unroll. */
#include "conv_op.h"
#include "kernels.h"
#include "lesson.h"

static const struct conv_variant variants[] = {
    {.name = "const_runtime",
     .what = "lesson 02's 32x8 kernel with the filter in __constant__ memory",
     .setup = setup_const_runtime,
     .run = launch_conv2d_const},
    {.name = "const_unrolled",
     .what = "the same with a compile-time radius (ksize 1..15) so both loops unroll",
     .setup = setup_const_unrolled,
     .run = launch_conv2d_const_unrolled},
};

static const struct conv_spec conv = {
    .variants = variants,
    .variant_count = sizeof variants / sizeof variants[0],
    .unsupported = single_channel_only,
    .image_variant = "const_unrolled",
};

int main(int argc, char **argv)
{
    const struct lesson lesson = {
        .name = "03_constant_memory",
        .title = "The filter in constant memory; run-time vs compile-time radius",
        .default_preset = "seed000",
        .min_compute_capability = 75,
        .op = conv_op(&conv),
    };
    return lesson_main(&lesson, argc, argv);
}
