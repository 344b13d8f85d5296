/* Lesson 05: register tiling. Each variant changes one thing about how many outputs
 * a thread computes and how its inputs arrive, from lesson 03's one output per
 * thread to a strip of outputs fed by a register window, 16-byte loads and a ring of
 * shared rows that cp.async fills ahead of the window. */
#include "kernels.h"
#include "lesson.h"

static const struct conv_variant variants[] = {
    {.name = "one_per_thread",
     .what = "one output per thread, filter in constant memory (lesson 03's unrolled kernel)",
     .dtype = DTYPE_FP32,
     .unsupported = single_channel_only,
     .setup = upload_filter,
     .run = launch_one_per_thread},
    {.name = "row4",
     .what = "4 outputs along a row per thread: each loaded input feeds up to 4 of them",
     .dtype = DTYPE_FP32,
     .unsupported = single_channel_only,
     .setup = upload_filter,
     .run = launch_row4},
    {.name = "row8",
     .what = "8 outputs along a row per thread, still one float per load",
     .dtype = DTYPE_FP32,
     .unsupported = single_channel_only,
     .setup = upload_filter,
     .run = launch_row8},
    {.name = "row8_vec4",
     .what = "8 outputs per thread, inputs in 16-byte loads (scalar loads when rows are not "
             "16-byte aligned)",
     .dtype = DTYPE_FP32,
     .unsupported = single_channel_only,
     .setup = upload_filter,
     .run = launch_row8_vec4},
    {.name = "strip",
     .what = "a strip of up to 32 rows x 8 outputs per thread: each input row loaded once, "
             "kept in a vertical register window",
     .dtype = DTYPE_FP32,
     .unsupported = single_channel_only,
     .setup = upload_filter,
     .run = launch_strip},
    {.name = "strip_prefetch",
     .what = "strip, also asking L2 for the input row 4 rows ahead: more bytes in flight",
     .dtype = DTYPE_FP32,
     .unsupported = single_channel_only,
     .setup = upload_filter,
     .run = launch_strip_prefetch},
    {.name = "strip_ring",
     .what = "a block walks down a 1024-wide strip, 4 outputs per thread: input rows wait "
             "in a ring of 4 shared rows that cp.async fills, not in registers",
     .dtype = DTYPE_FP32,
     .unsupported = single_channel_only,
     .setup = upload_filter,
     .run = launch_strip_ring},
    {.name = "strip_ring8",
     .what = "strip_ring with 8 outputs per thread: fewer instructions per FMA, for the "
             "larger filters",
     .dtype = DTYPE_FP32,
     .unsupported = single_channel_only,
     .setup = upload_filter,
     .run = launch_strip_ring8},
};

static const struct lesson lesson = {
    .name = "05_register_tiling",
    .title = "Register tiling: several outputs per thread, 16-byte loads, a register window",
    .target = TARGET_GPU,
    .variants = variants,
    .variant_count = sizeof variants / sizeof variants[0],
    .default_preset = "big5",
    .image_variant = "strip_ring",
    .min_compute_capability = 75,
};

int main(int argc, char **argv)
{
    return lesson_main(&lesson, argc, argv);
}
