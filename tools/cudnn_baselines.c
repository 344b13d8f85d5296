/* cuDNN alone, at every precision and layout a lesson compares against: fp32 (FMA),
 * tf32, fp16 and bf16, each in NCHW and NHWC, timed and checked by the same harness
 * as the lessons (every algorithm tried, the fastest that passes kept). The rows a
 * tensor-core kernel must match, before the lesson that writes one exists.
 *
 *   build/bin/cudnn_baselines --preset unet-512x512 --csv bench.csv
 */
#include "conv_op.h"
#include "lesson.h"

static const struct baseline_format formats[] = {
    {DTYPE_FP32, LAYOUT_NCHW}, {DTYPE_FP32, LAYOUT_NHWC}, {DTYPE_TF32, LAYOUT_NCHW},
    {DTYPE_TF32, LAYOUT_NHWC}, {DTYPE_FP16, LAYOUT_NCHW}, {DTYPE_FP16, LAYOUT_NHWC},
    {DTYPE_BF16, LAYOUT_NCHW}, {DTYPE_BF16, LAYOUT_NHWC},
};

static const struct conv_spec conv = {
    .extra_baselines = formats,
    .extra_baseline_count = (int)(sizeof formats / sizeof formats[0]),
};

int main(int argc, char **argv)
{
    const struct lesson lesson = {
        .name = "cudnn_baselines",
        .title = "cuDNN at fp32, tf32, fp16 and bf16, NCHW and NHWC",
        .default_preset = "unet-128x128",
        .min_compute_capability = 75,
        .op = conv_op(&conv),
    };
    return lesson_main(&lesson, argc, argv);
}
