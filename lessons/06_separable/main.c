/* Lesson 06: separable filters, applied as a row pass and a column pass: first
 * through an intermediate image in DRAM, then fused into one kernel that keeps the
 * intermediate on the chip. The last row is lesson 05's best 2-D kernel on the
 * same taps, the number to beat. */
#include "conv_op.h"
#include "kernels.h"
#include "lesson.h"
#include "ring_window.h"
#include "separable_factors.h"

/* A row pass and a column pass of k multiply-adds each: 4k FLOPs per output, the
 * count GFLOP/s and the roofline use for the separable variants (the table would
 * otherwise credit them with the direct 2k^2, and a roofline they beat). */
static double separable_flops(const struct conv_shape *s)
{
    return 4.0 * s->ksize * s->n * (double)s->h * s->w;
}

static const struct conv_variant variants[] = {
    {.name = "two_pass",
     .what = "row pass into an intermediate image, then a column pass: 2k FMAs per output, "
             "one more trip through DRAM",
     .scratch_bytes = two_pass_scratch_bytes,
     .setup = setup_two_pass,
     .run = launch_two_pass,
     .flops = separable_flops},
    {.name = "fused_smem",
     .what = "one kernel: a 128x64 tile's row pass, halo rows included, in shared memory, "
             "then its column pass",
     .scratch_bytes = fused_scratch_bytes,
     .setup = setup_fused_smem,
     .run = launch_fused_smem,
     .flops = separable_flops},
    {.name = "fused_registers",
     .what = "one kernel, no shared memory: each thread's row pass in registers, halo rows "
             "recomputed",
     .scratch_bytes = fused_scratch_bytes,
     .setup = setup_fused_registers,
     .run = launch_fused_registers,
     .flops = separable_flops},
    {.name = "full_2d",
     .what =
         "lesson 05's best 2-D kernel (strip_ring8) on the same k x k taps: k^2 FMAs per output",
     .setup = setup_ring_window,
     .run = launch_strip_ring8},
};

static const struct conv_spec conv = {
    .variants = variants,
    .variant_count = sizeof variants / sizeof variants[0],
    .unsupported = single_channel_only,
    .image_variant = "fused_smem",
    .separable_weights = true,
    .check_weights = check_separable,
};

int main(int argc, char **argv)
{
    const struct lesson lesson = {
        .name = "06_separable",
        .title = "Separable filters: two 1-D passes, then one fused kernel",
        .default_preset = "big7",
        .min_compute_capability = 75,
        .op = conv_op(&conv),
    };
    return lesson_main(&lesson, argc, argv);
}
