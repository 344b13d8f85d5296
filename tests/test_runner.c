/* The runner without a GPU: the rotation plan, shared tensors in buffer sets, a
 * sequence's frames run on the host through lesson_main, a result kept elsewhere and
 * collected (with its efficiency against a reference), and the fastest library row.
 * The op is small on purpose: y += (frame + 1) * w * x over h x w elements, x drawn per
 * buffer set, w shared by every set, y written. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "gpu_timer.h"
#include "lesson.h"
#include "library_rows.h"
#include "op_buffers.h"
#include "rng.h"
#include "unit.h"

enum { X, W, Y, TENSORS };
#define FRAMES 4
#define MB ((size_t)1 << 20)

static size_t count_of(const struct conv_shape *s)
{
    return (size_t)s->h * s->w;
}

static int tensors(const struct conv_shape *s, int layout, struct op_tensor *t)
{
    (void)layout;
    const size_t bytes = count_of(s) * sizeof(float);
    t[X] = (struct op_tensor){.name = "x", .bytes = bytes};
    t[W] = (struct op_tensor){.name = "w", .bytes = bytes, .shared = true};
    t[Y] = (struct op_tensor){.name = "y", .bytes = bytes, .written = true};
    return TENSORS;
}

/* What draw was given, for the aliasing test. */
static int draws, shared_passed_later;

static void fill(float *x, size_t n, uint64_t seed)
{
    struct rng g = rng_seeded(seed);
    fill_uniform(x, n, -1.0f, 1.0f, &g);
}

static bool draw(const struct op_draw *d, char *err, size_t size)
{
    (void)err, (void)size;
    const size_t n = count_of(d->shape);
    draws++;
    fill(d->tensor[X], n, d->seed);
    if (d->tensor[W])
        fill(d->tensor[W], n, d->seed + 1);
    shared_passed_later += d->set > 0 && d->tensor[W] != NULL;
    for (size_t i = 0; i < n; i++)
        ((float *)d->tensor[Y])[i] = 0.5f;
    return true;
}

/* The frames the variants ran, in order, over the whole run. */
static int frame_log[256], frames_run;

static void accumulate(const struct op_args *a)
{
    const float *x = a->tensor[X], *w = a->tensor[W];
    float *y = a->tensor[Y];
    for (size_t i = 0; i < count_of(&a->shape); i++)
        y[i] += (float)(a->frame + 1) * w[i] * x[i];
    if (frames_run < 256)
        frame_log[frames_run++] = a->frame;
}

/* Forgets the state a sequence keeps: each frame overwrites y. */
static void forget(const struct op_args *a)
{
    const float *x = a->tensor[X], *w = a->tensor[W];
    float *y = a->tensor[Y];
    for (size_t i = 0; i < count_of(&a->shape); i++)
        y[i] = 0.5f + (float)(a->frame + 1) * w[i] * x[i];
}

static int checked_frames;

/* After frame f, y = y0 + (1 + 2 + ... + (f + 1)) w x. */
static struct check_result check(const struct op_check *c)
{
    const float *x = c->before[X], *w = c->before[W], *y0 = c->before[Y], *y = c->after[Y];
    const double sum = (c->frame + 1) * (c->frame + 2) / 2.0;
    struct check_accum acc;
    check_begin(&acc);
    for (size_t i = 0; i < count_of(c->shape); i++)
        check_add(&acc, i, y[i], y0[i] + sum * w[i] * x[i], fabs(sum * w[i] * x[i]),
                  tolerance_for_terms(DTYPE_FP32, FRAMES));
    checked_frames++;
    return check_end(&acc);
}

static double min_bytes(const struct conv_shape *s, int layout)
{
    (void)layout;
    return 4.0 * count_of(s) * sizeof(float);
}

static double flops(const struct conv_shape *s, int layout)
{
    (void)layout;
    return 3.0 * count_of(s);
}

static int frames(const struct conv_shape *s)
{
    (void)s;
    return FRAMES;
}

static const char *const layout_names[] = {"flat"};
static const struct conv_preset presets[] = {
    {"small", "3 x 5 elements", {1, 1, 1, 3, 5, 1, false}},
};
static const struct op_variant variants[] = {
    {.name = "accumulate", .what = "keeps y from frame to frame", .cpu = true, .run = accumulate},
    {.name = "forget", .what = "overwrites y every frame", .cpu = true, .run = forget},
};

static struct op sequence_op(void)
{
    return (struct op){.shape_help = "h x w elements",
                       .presets = presets,
                       .preset_count = 1,
                       .variants = variants,
                       .variant_count = 2,
                       .layout_names = layout_names,
                       .frames = frames,
                       .tensors = tensors,
                       .draw = draw,
                       .check = check,
                       .min_bytes = min_bytes,
                       .flops = flops};
}

/* Enough sets to be four times the L2, at most MAX_BUFFER_SETS, half the free memory at
 * most, and never none. */
static void rotation_plan(void)
{
    CHECK(buffer_sets_for(1 * MB, 50 * MB, 80000 * MB) == MAX_BUFFER_SETS);
    CHECK(buffer_sets_for(100 * MB, 50 * MB, 80000 * MB) == 2);
    CHECK(buffer_sets_for(30 * MB, 50 * MB, 80000 * MB) == 7); /* ceil(200 / 30) */
    CHECK(buffer_sets_for(30 * MB, 50 * MB, 130 * MB) == 2);   /* 65 MB of room */
    CHECK(buffer_sets_for(1000 * MB, 50 * MB, 80000 * MB) == 1);
    CHECK(buffer_sets_for(100 * MB, 50 * MB, 10 * MB) == 1);
    /* The op's set: x and y; the shared w is there once. */
    const struct op op = sequence_op();
    const struct conv_shape s = {1, 1, 1, 1024, 1024, 1, false}; /* 4 MB a tensor */
    CHECK(op_set_bytes(&op, &s, 0) == 8 * MB);
    const struct gpu_info gpu = {.l2_bytes = 50 * MB, .free_bytes = 80000 * MB};
    CHECK(op_sets_for(&op, &s, 0, &gpu) == 25);
}

/* Rotated sets share one copy of a shared tensor (drawn with set 0 only) and hold
 * their own of every other, drawn from the set's seed; set 0 is what was drawn. */
static void shared_tensors_are_one_copy(void)
{
    const struct op op = sequence_op();
    const struct conv_shape s = presets[0].shape;
    const struct op_source src = {&op, &s, NULL, 7, NULL};
    struct op_buffers b;
    draws = shared_passed_later = 0;
    CHECK(op_buffers_create(&b, &src, 0, true, 4, NULL));
    CHECK(b.sets == 4 && draws == 4 && shared_passed_later == 0);
    const size_t bytes = count_of(&s) * sizeof(float);
    float expect[15];
    for (int k = 0; k < 4; k++) {
        CHECK(b.set[k][W] == b.set[0][W]);
        for (int j = 0; j < k; j++)
            CHECK(b.set[k][X] != b.set[j][X] && b.set[k][Y] != b.set[j][Y]);
        fill(expect, count_of(&s), op_set_seed(7, k));
        CHECK(memcmp(b.set[k][X], expect, bytes) == 0);
    }
    CHECK(memcmp(b.set[0][X], b.before[X], bytes) == 0);
    CHECK(memcmp(b.set[1][X], b.set[2][X], bytes) != 0);
    op_buffers_free(&b);
}

static int run_lesson(const char *variant)
{
    const struct op op = sequence_op();
    const struct lesson lesson = {.name = "99_runner",
                                  .title = "a sequence on the host",
                                  .default_preset = "small",
                                  .op = &op};
    char *argv[] = {"test", "--variant", (char *)variant, "--reps", "6", "--warmup", "1"};
    frames_run = checked_frames = 0;
    return lesson_main(&lesson, (int)(sizeof argv / sizeof argv[0]), argv);
}

/* The checked pass runs frames 0..3 in order on state kept between them, each frame
 * checked; then a warm-up pass and two timed passes (6 timed frames, 3 a pass), each
 * from frame 0. */
static void sequence_runs_on_the_host(void)
{
    CHECK(run_lesson("accumulate") == 0);
    CHECK(checked_frames == FRAMES);
    CHECK(frames_run == 4 * FRAMES);
    for (int i = 0; i < frames_run && i < 256; i++)
        CHECK(frame_log[i] == i % FRAMES);
}

/* A variant that drops the state between frames fails the check (exit 1). */
static void sequence_that_forgets_fails(void)
{
    CHECK(run_lesson("forget") == 1);
    CHECK(checked_frames == FRAMES);
}

/* A variant whose result lives elsewhere (lesson 12's, on other GPUs) computes into its
 * own memory; collect brings it into y before the check, and without collect the
 * check sees y as drawn and fails. Its row's params give its efficiency against the
 * op's scaling reference, in the same run. */
static float kept[64];

static void accumulate_elsewhere(const struct op_args *a)
{
    const float *x = a->tensor[X], *w = a->tensor[W], *y = a->tensor[Y];
    for (size_t i = 0; i < count_of(&a->shape); i++)
        kept[i] = y[i] + w[i] * x[i];
}

static void collect_kept(const struct op_args *a)
{
    memcpy(a->tensor[Y], kept, count_of(&a->shape) * sizeof(float));
}

static const struct op_variant split_variants[] = {
    {.name = "one", .what = "y in place", .cpu = true, .run = accumulate},
    {.name = "split",
     .what = "y elsewhere, collected",
     .cpu = true,
     .needs = {.gpus = 2},
     .run = accumulate_elsewhere,
     .collect = collect_kept},
    {.name = "uncollected",
     .what = "y elsewhere, never collected",
     .cpu = true,
     .needs = {.gpus = 2},
     .run = accumulate_elsewhere},
};

static int run_split(const char *variant, const char *csv)
{
    struct op op = sequence_op();
    op.frames = NULL;
    op.variants = split_variants;
    op.variant_count = variant ? 3 : 2;
    op.scaling_reference = "one";
    const struct lesson lesson = {.name = "99_split", .title = "a result kept elsewhere",
                                  .default_preset = "small", .op = &op};
    char *argv[] = {"test", "--csv", (char *)csv, "--variant", (char *)variant};
    return lesson_main(&lesson, variant ? 5 : 3, argv);
}

static void kept_elsewhere_is_collected(void)
{
    char csv[64];
    snprintf(csv, sizeof csv, "/tmp/test_runner_%d.csv", (int)getpid());
    remove(csv);
    CHECK(run_split(NULL, csv) == 0);
    FILE *f = fopen(csv, "r");
    char line[2048];
    int rows = 0, efficient = 0;
    while (f && fgets(line, sizeof line, f)) {
        rows++;
        efficient += strncmp(line, "99_split,split,", 15) == 0 && strstr(line, "efficiency=");
    }
    if (f)
        fclose(f);
    remove(csv);
    CHECK(rows == 3 && efficient == 1);
    CHECK(run_split("uncollected", csv) == 1);
    remove(csv);
}

/* Library rows: each once, in the order first asked for; a variant's ratio is taken
 * against the fastest of its rows that ran. */
static int baselines(const struct op *op, const struct op_variant *v, struct op_baseline *out)
{
    (void)op;
    if (!v) {
        out[0] = (struct op_baseline){DTYPE_BF16, "nhwc", 1};
        return 1;
    }
    if (strcmp(v->name, "accumulate") == 0) {
        out[0] = (struct op_baseline){DTYPE_FP32, "nchw", 0};
        out[1] = (struct op_baseline){DTYPE_TF32, "nchw", 0};
        return 2;
    }
    out[0] = (struct op_baseline){DTYPE_FP16, "nhwc", 1};
    return 1;
}

static void fastest_library_row(void)
{
    struct op op = sequence_op();
    op.baselines = baselines;
    struct library_rows l = {0};
    library_rows_add(&l, &op, NULL);
    library_rows_add(&l, &op, &variants[0]);
    library_rows_add(&l, &op, &variants[1]);
    library_rows_add(&l, &op, &variants[0]);
    CHECK(l.count == 4);
    CHECK(l.row[0].dtype == DTYPE_BF16 && l.row[1].dtype == DTYPE_FP32 &&
          l.row[2].dtype == DTYPE_TF32 && l.row[3].dtype == DTYPE_FP16);
    CHECK(isnan(library_rows_fastest(&l, &op, &variants[0])));
    l.ms[0] = 1.0; /* bf16: not one of accumulate's rows */
    l.ms[1] = 3.0;
    CHECK(library_rows_fastest(&l, &op, &variants[0]) == 3.0);
    l.ms[2] = 1.5;
    CHECK(library_rows_fastest(&l, &op, &variants[0]) == 1.5);
    CHECK(isnan(library_rows_fastest(&l, &op, &variants[1]))); /* fp16 did not run */
    l.ms[3] = 2.0;
    CHECK(library_rows_fastest(&l, &op, &variants[1]) == 2.0);
}

static const struct unit_case cases[] = {
    {"rotation_plan", rotation_plan},
    {"shared_tensors_are_one_copy", shared_tensors_are_one_copy},
    {"sequence_runs_on_the_host", sequence_runs_on_the_host},
    {"sequence_that_forgets_fails", sequence_that_forgets_fails},
    {"kept_elsewhere_is_collected", kept_elsewhere_is_collected},
    {"fastest_library_row", fastest_library_row},
};

UNIT_MAIN(cases)
