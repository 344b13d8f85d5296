/* libFuzzer target for lesson 11's command line: the harness's flag parser (cli.c) with
 * the op's own numbers, --threshold, --tile and --pan (read_param), and the problem check
 * they take part in (delta_op_shape_problem: a tile that is a multiple of the 8-pixel
 * unit, a frame within the 576x768 video), and --frames-csv. Any command line must give a
 * problem the lesson can run, --help or --list-presets, or exactly one error line; never
 * a crash, leak or undefined behaviour. The input is the arguments, each ended by a NUL
 * byte, as the kernel hands them to main(). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "fuzz_command_line.h"
#include "fuzz_support.h"
#include "lesson.h"
#include "problem.h"
#include "video.h"


static void no_run(const struct op_args *a)
{
    (void)a;
}

/* Lesson 11's op as far as its flags go (lessons/11_delta/main.c): its variants' names,
 * presets, numbers, problem check and frames. */
static const struct op_variant variants[] = {
    {.name = "dense", .what = "a variant", .run = no_run},
    {.name = "tile_mask", .what = "a variant", .run = no_run},
    {.name = "delta_update", .what = "a variant", .run = no_run},
    {.name = "delta_compact", .what = "a variant", .run = no_run},
};

static const struct op video = {
    .shape_help = "--cin C = --cout C channels, --size HxW at most 576x768, --ksize k; batch 1",
    .presets = delta_presets,
    .preset_count = DELTA_PRESET_COUNT,
    .variants = variants,
    .variant_count = 4,
    .params = delta_params,
    .param_count = DELTA_PARAM_COUNT,
    .shape_problem = delta_op_shape_problem,
    .frames = delta_op_frames,
};

static const struct lesson lesson = {.name = "11_delta",
                                     .title = "delta convolution, flags only",
                                     .default_preset = "vtest-c64",
                                     .min_compute_capability = 75,
                                     .op = &video};

static void check_options(const struct options *o)
{
    fuzz_require(o->mode == MODE_BENCH); /* no files, no data flags */
    fuzz_require(o->reps >= 1 && o->reps <= MAX_REPS);
    fuzz_require(o->warmup >= 0 && o->warmup <= MAX_REPS);
    fuzz_require(o->preset != NULL);
    bool known = o->variant == NULL;
    for (int i = 0; i < video.variant_count; i++)
        known = known || strcmp(o->variant, variants[i].name) == 0;
    fuzz_require(known);
    /* Every number within its stated range, whole where it says so. */
    for (int i = 0; i < DELTA_PARAM_COUNT; i++) {
        const struct op_param *p = &delta_params[i];
        const double v = o->param[i];
        fuzz_require(isfinite(v) && v >= p->lo && v <= p->hi);
        fuzz_require(!p->integer || v == floor(v));
    }
    fuzz_require((int)o->param[DELTA_TILE] % DELTA_UNIT == 0);
    /* A problem the op takes: the frames within the video, batch 1, cin = cout. */
    const struct conv_shape *s = &o->shape;
    fuzz_require(delta_op_shape_problem(s, o->param) == NULL);
    fuzz_require(s->n == 1 && s->cin >= 1 && s->cin == s->cout && s->h >= 1 && s->w >= 1);
    fuzz_require(s->h <= VTEST_HEIGHT && s->w <= VTEST_WIDTH);
    fuzz_require(s->ksize >= 1 && s->ksize <= DELTA_MAX_KSIZE && s->ksize % 2 == 1);
    fuzz_require(delta_op_frames(s) == VTEST_FRAMES);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    fuzz_command_line(&lesson, data, size, check_options);
    return 0;
}
