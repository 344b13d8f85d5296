/* Lesson 01: direct convolution on the CPU, the baseline every GPU lesson must beat.
 * Three variants of the same float32 sums: the textbook loop nest, the loops
 * reordered so gcc vectorises the inner one, and that kernel on every core.
 *
 *   build/bin/01_cpu_direct --preset seed000
 *   build/bin/01_cpu_direct --image data/camera.pgm --filter gaussian --ksize 5 --out blur.pgm
 */
#include "conv_op.h"
#include "kernels.h"
#include "lesson.h"

/* Skip the slow single-thread loops on U-Net layers unless asked for by name:
 * at a few GFLOP/s a 77 GFLOP layer would take minutes per repetition. */
#define PLAIN_MAX_GFLOP 20.0
#define REORDERED_MAX_GFLOP 10.0

static const struct conv_variant variants[] = {
    {.name = "plain",
     .what = "textbook 7-deep loop nest, bounds check in the innermost loop, 1 thread",
     .run = conv_plain,
     .max_gflop = PLAIN_MAX_GFLOP},
    {.name = "reordered",
     .what = "row-at-a-time loop order, branch-free inner loop that gcc vectorises, 1 thread",
     .run = conv_reordered,
     .max_gflop = REORDERED_MAX_GFLOP},
    {.name = "openmp",
     .what = "the reordered kernel on all cores, OpenMP over (image, row block, channel)",
     .run = conv_openmp,
     .parallel = true},
};

static const struct conv_spec conv = {
    .cpu = true,
    .variants = variants,
    .variant_count = (int)(sizeof variants / sizeof variants[0]),
    .image_variant = "openmp",
};

int main(int argc, char **argv)
{
    const struct lesson lesson = {
        .name = "01_cpu_direct",
        .title = "direct convolution on the CPU: loop order, vectorisation, OpenMP",
        .default_preset = "seed000",
        .op = conv_op(&conv),
    };
    return lesson_main(&lesson, argc, argv);
}
