/* Lesson 05: register tiling. Each variant changes one thing about how many outputs
 * a thread computes and how its inputs arrive, from lesson 03's one output per
 * thread to a strip of outputs fed by a register window, 16-byte loads and a ring of
 * shared rows that cp.async fills ahead of the window. The ring variants build on
 * strip; strip_prefetch is a side step whose idea, more bytes in flight, ring8_async
 * takes up. */
#include "conv_op.h"
#include "kernels.h"
#include "lesson.h"

static const struct conv_variant variants[] = {
    {.name = "one_per_thread",
     .what = "one output per thread, filter in constant memory: step 1's kernel at 1 output, "
             "the baseline",
     .setup = setup_row_tile,
     .run = launch_one_per_thread},
    {.name = "row4",
     .what = "4 outputs along a row per thread: each loaded input feeds up to 4 of them",
     .setup = setup_row_tile,
     .run = launch_row4},
    {.name = "row8",
     .what = "8 outputs along a row per thread, still one float per load",
     .setup = setup_row_tile,
     .run = launch_row8},
    {.name = "row8_vec4",
     .what = "8 outputs per thread, inputs in 16-byte loads (scalar loads when rows are not "
             "16-byte aligned)",
     .setup = setup_row_tile,
     .run = launch_row8_vec4},
    {.name = "strip32",
     .what = "a strip of 32 rows x 8 outputs per thread: each input row loaded once, just "
             "before its FMAs, and kept in a vertical register window",
     .setup = setup_sliding_window,
     .run = launch_strip32},
    {.name = "strip32_ahead",
     .what = "strip32, loading the next input row while the FMAs use the current one",
     .setup = setup_sliding_window,
     .run = launch_strip32_ahead},
    {.name = "strip",
     .what = "strip32_ahead with strips cut shorter (32, 16, ... rows) until every SM gets "
             "16 blocks",
     .setup = setup_sliding_window,
     .run = launch_strip},
    {.name = "strip_prefetch",
     .what = "strip, also asking L2 for the input row 4 rows ahead: more bytes in flight",
     .setup = setup_sliding_window,
     .run = launch_strip_prefetch},
    {.name = "ring8_regs",
     .what = "from strip: a block of 128 threads x 8 outputs walks down a 1024-wide strip; "
             "input rows pass through a ring of 4 shared rows, each thread loading its share "
             "of a row into registers one row ahead",
     .setup = setup_ring_window,
     .run = launch_ring8_regs},
    {.name = "ring8_async",
     .what = "ring8_regs with the ring filled by cp.async: 3 rows in flight that hold no "
             "registers",
     .setup = setup_ring_window,
     .run = launch_ring8_async},
    {.name = "ring8_wave",
     .what = "ring8_async with strips as tall as one wave of resident blocks allows",
     .setup = setup_ring_window,
     .run = launch_ring8_wave},
    {.name = "strip_ring8",
     .what = "ring8_wave with a launch bound that asks for as many blocks per SM as the "
             "register window allows",
     .setup = setup_ring_window,
     .run = launch_strip_ring8},
    {.name = "strip_ring",
     .what = "strip_ring8 with 4 outputs per thread (256 threads a block): fewer registers "
             "per thread, more warps per SM",
     .setup = setup_ring_window,
     .run = launch_strip_ring},
};

static const struct conv_spec conv = {
    .variants = variants,
    .variant_count = sizeof variants / sizeof variants[0],
    .unsupported = single_channel_only,
    .image_variant = "strip_ring",
};

int main(int argc, char **argv)
{
    const struct lesson lesson = {
        .name = "05_register_tiling",
        .title = "Register tiling: several outputs per thread, 16-byte loads, a register window",
        .default_preset = "big5",
        .min_compute_capability = 75,
        .op = conv_op(&conv),
    };
    return lesson_main(&lesson, argc, argv);
}
