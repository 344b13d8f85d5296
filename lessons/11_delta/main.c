/* Lesson 11: delta convolution on real video (seed 003, DeltaCNN). One 3x3 conv layer
 * on every frame of the vtest clip: recomputed densely, or only where the input
 * changed. docs/11_delta.md walks through it. */
#include "conv_op.h"
#include "kernels.h"
#include "lesson.h"
#include "problem.h"

static struct delta_args delta_args_of(const struct op_args *a)
{
    const struct conv_shape *s = &a->shape;
    struct delta_args d = {.h = s->h,
                           .w = s->w,
                           .c = s->cin,
                           .ksize = s->ksize,
                           .frame_index = a->frame,
                           .frame = (const float *)a->tensor[DELTA_FRAMES] + a->frame * input_count(s),
                           .weights = a->tensor[DELTA_WEIGHTS],
                           .bias = a->tensor[DELTA_BIAS],
                           .out = a->tensor[DELTA_OUT],
                           .state = a->scratch,
                           .stream = a->stream,
                           .threshold = (float)a->param[DELTA_THRESHOLD],
                           .tile = (int)a->param[DELTA_TILE]};
    return d;
}

/* The state a variant keeps between frames is its scratch. */
static struct delta_args shape_args(const struct conv_shape *s, const double *param)
{
    struct op_args a = {.shape = *s, .param = param};
    return delta_args_of(&a);
}

#define VARIANT(name, launcher)                                                                    \
    static void run_##name(const struct op_args *a)                                                \
    {                                                                                              \
        struct delta_args d = delta_args_of(a);                                                    \
        launcher(&d);                                                                              \
    }                                                                                              \
    static size_t state_##name(const struct op_variant *v, const struct conv_shape *s,             \
                               const double *param)                                                \
    {                                                                                              \
        (void)v;                                                                                   \
        struct delta_args d = shape_args(s, param);                                                \
        return name##_state_bytes(&d);                                                             \
    }
VARIANT(dense, launch_delta_dense)
VARIANT(tile_mask, launch_delta_tile_mask)
VARIANT(delta_update, launch_delta_update)
VARIANT(delta_compact, launch_delta_compact)

static size_t smem_bytes(const struct conv_shape *s)
{
    return delta_smem_bytes(s->ksize);
}

static const struct op_variant variants[] = {
    {.name = "dense", .what = "the layer recomputed on every frame (NHWC, 8x8 pixels x 64 channels a block)",
     .run = run_dense, .scratch_bytes = state_dense, .needs = {.smem_bytes = smem_bytes},
     .kind = DELTA_KIND_DENSE},
    {.name = "tile_mask", .what = "output tiles no changed input tile reaches are skipped; the rest recomputed",
     .run = run_tile_mask, .scratch_bytes = state_tile_mask, .needs = {.smem_bytes = smem_bytes},
     .work_share = delta_op_recomputed_share, .kind = DELTA_KIND_RECOMPUTE},
    {.name = "delta_update", .what = "conv of the change added to the previous output (linearity)",
     .run = run_delta_update, .scratch_bytes = state_delta_update, .needs = {.smem_bytes = smem_bytes},
     .work_share = delta_op_recomputed_share, .kind = DELTA_KIND_ACCUMULATE},
    {.name = "delta_compact", .what = "the reached tiles listed; one launch walks the list",
     .run = run_delta_compact, .scratch_bytes = state_delta_compact, .needs = {.smem_bytes = smem_bytes},
     .work_share = delta_op_recomputed_share, .kind = DELTA_KIND_ACCUMULATE},
};

static bool draw(const struct op_draw *d, char *err, size_t err_size)
{
    return delta_op_draw_from(VTEST_DIR, d->shape, d->param, d->seed, d->tensor, err, err_size);
}

/* Every variant is compared with cuDNN's fp32 convolution of one frame, the faster of
 * its two layouts: the layer recomputed in full by the library. */
static int baselines(const struct op *op, const struct op_variant *v, struct op_baseline *out)
{
    (void)op;
    if (!v)
        return 0;
    out[0] = conv_baseline(DTYPE_FP32, LAYOUT_NHWC);
    out[1] = conv_baseline(DTYPE_FP32, LAYOUT_NCHW);
    return 2;
}

static void time_baseline(const struct op *op, const struct op_baseline *b,
                          const struct op_bench *bench, struct result_row *row)
{
    (void)op;
    conv_cudnn_row(&bench->opts->shape, b, bench, row);
}

static const struct op video = {
    .shape_help = "--cin C = --cout C channels, --size HxW at most 576x768 (the video's centre, "
                  "shrunk 2x when it fits in 288x384), --ksize k; batch 1",
    .presets = delta_presets,
    .preset_count = DELTA_PRESET_COUNT,
    .variants = variants,
    .variant_count = (int)(sizeof variants / sizeof variants[0]),
    .layout_names = delta_layout_names,
    .params = delta_params,
    .param_count = DELTA_PARAM_COUNT,
    .shape_problem = delta_op_shape_problem,
    .frames = delta_op_frames,
    .tensors = delta_op_tensors,
    .draw = draw,
    .check = delta_op_check,
    .min_bytes = delta_op_min_bytes,
    .flops = delta_op_flops,
    .baselines = baselines,
    .time_baseline = time_baseline,
};

static const struct lesson lesson = {
    .name = "11_delta",
    .title = "delta convolution on real video: recompute only what changed",
    .default_preset = "vtest-c64",
    .min_compute_capability = 75,
    .op = &video,
};

int main(int argc, char **argv)
{
    return lesson_main(&lesson, argc, argv);
}
