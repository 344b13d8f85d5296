/* Lesson 04: the input a block shares goes to shared memory once. Three tilings:
 * blocks the size of the input tile, blocks the size of the output tile, and the
 * interior-only tile whose halo comes from the caches. Filter in constant memory. */
#include "conv_op.h"
#include "kernels.h"
#include "lesson.h"

static const struct conv_variant variants[] = {
    {.name = "tile_in",
     .what = "32x32 blocks = input tile: each thread loads one pixel, halo threads idle",
     .setup = setup_tile_in,
     .run = launch_conv2d_tile_in},
    {.name = "tile_out",
     .what = "32x8 blocks = output tile: tile + halo loaded cooperatively in passes",
     .setup = setup_tile_out,
     .run = launch_conv2d_tile_out},
    {.name = "tile_cached_halo",
     .what = "32x8 interior in shared memory, halo read through L1/L2 (the seed's kernel)",
     .setup = setup_tile_cached_halo,
     .run = launch_conv2d_tile_cached_halo},
};

static const struct conv_spec conv = {
    .variants = variants,
    .variant_count = sizeof variants / sizeof variants[0],
    .unsupported = single_channel_only,
    .image_variant = "tile_out",
};

int main(int argc, char **argv)
{
    const struct lesson lesson = {
        .name = "04_shared_tiling",
        .title = "Input tile + halo in shared memory: when tiling wins and when it loses",
        .default_preset = "seed000",
        .min_compute_capability = 75,
        .op = conv_op(&conv),
    };
    return lesson_main(&lesson, argc, argv);
}
