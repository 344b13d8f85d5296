/* The batched convolution of lessons 01-09 as an op (op.h), made from a lesson's list
 * of kernel variants. Its layouts are the formats the variants and their cuDNN rows
 * store tensors in (dtype, layout, what the output holds); each buffer set holds the
 * input, the weights, the output, the bias and the binary scale, the last three and
 * the weights shared by every set. The inputs are rounded to each dtype before the
 * float64 gold; its library rows are cuDNN's at the precision and layout of the
 * variants they are compared with. Its data flags: --input/--weights/--bias/--output
 * (.npy), --image/--out (a picture) and --filter (named or file weights). */
#ifndef CONV_OP_H
#define CONV_OP_H

#include <stdbool.h>
#include <stddef.h>

#include "conv_args.h"
#include "op.h"

#ifdef __cplusplus
extern "C" {
#endif

struct conv_variant {
    const char *name; /* short, for --variant and the CSV */
    const char *what; /* one line for --help */
    enum dtype dtype;   /* zero: fp32 */
    enum layout layout; /* zero: NCHW */
    /* NULL when the variant handles this shape, else why not (shown in the table). */
    const char *(*unsupported)(const struct conv_shape *s);
    /* GPU lessons: what it needs of the GPU and the build (gpu_needs.h); zero: nothing
     * beyond the lesson's minimum compute capability. */
    struct gpu_needs needs;
    /* Optional: bytes of working memory (an intermediate image, re-laid-out weights)
     * the harness allocates before setup and frees after teardown, so a variant
     * owns no allocation of its own. */
    size_t (*scratch_bytes)(const struct conv_shape *s);
    /* Optional, untimed, once per problem before the first run: work such as the
     * filter to constant memory or the weights re-laid into scratch. */
    void (*setup)(const struct conv_args *a);
    /* Optional, untimed, after the last run: undoes what setup did outside scratch. */
    void (*teardown)(const struct conv_args *a);
    /* Optional, untimed, after a checked run: copies a result kept elsewhere (on other
     * GPUs) into a->output (op_variant.collect). */
    void (*collect)(const struct conv_args *a);
    /* GPU: enqueue the kernel(s) on a->stream and check the launch.
     * CPU: compute the whole output before returning. */
    void (*run)(const struct conv_args *a);
    /* Above this many GFLOP the variant is skipped unless named with --variant
     * (slow CPU loops on U-Net layers); 0 means no limit. */
    double max_gflop;
    /* CPU: runs on every OpenMP thread (the device column says how many). */
    bool parallel;
    /* What the variant writes; zero: the values (tensor_format.h). */
    enum output_format output;
    /* Optional: FLOPs of this variant's algorithm when it does fewer than the direct
     * 2*n*cout*h*w*cin*k^2 (separable filters); GFLOP/s and the roofline use it. */
    double (*flops)(const struct conv_shape *s);
};

/* A cuDNN row to time whether or not a variant asks for it (the baselines tool). */
struct baseline_format {
    enum dtype dtype;
    enum layout layout;
};

/* A lesson's convolution: its variants and what it asks of the problem. */
struct conv_spec {
    const struct conv_variant *variants;
    int variant_count;
    bool cpu;                  /* the variants run on the host (lesson 01) */
    const char *image_variant; /* the variant image and .npy modes apply */
    /* Optional: NULL when the lesson's variants handle this shape, else why none does
     * (single_channel_only); a variant's own unsupported adds its limits. */
    const char *(*unsupported)(const struct conv_shape *s);
    /* Random weights are drawn as outer products of two random vectors (rank 1),
     * for lessons that need separable filters. */
    bool separable_weights;
    /* Optional: NULL when the lesson can use these weights (from --filter, --weights
     * or random), else one line saying why not; the run then exits with 2. */
    const char *(*check_weights)(const struct conv_shape *s, const float *weights);
    /* Optional: cuDNN rows beyond those the variants' formats call for. */
    const struct baseline_format *extra_baselines;
    int extra_baseline_count;
    /* Optional: the lesson's own flags (op.params), and the variant whose time the rows
     * of variants spread over several GPUs are compared with (op.scaling_reference). */
    const struct op_param *params;
    int param_count;
    const char *scaling_reference;
};

/* The op over the spec's variants; its problem is made by op.prepare from the flags. */
const struct op *conv_op(const struct conv_spec *spec);

/* The tensors of a format, in the order op_args.tensor holds them. */
enum conv_tensor { CONV_INPUT, CONV_WEIGHTS, CONV_OUTPUT, CONV_BIAS, CONV_SCALE, CONV_TENSORS };

/* The convolution's library row in a dtype and layout (op_baseline.id is the layout). */
struct op_baseline conv_baseline(enum dtype d, enum layout l);

/* cuDNN's row for a convolution of shape s, on inputs drawn from the run's seed, timed
 * and checked as the convolution's own rows are: the library row of an op whose work is
 * a convolution (lesson 11's layer on one frame). */
void conv_cudnn_row(const struct conv_shape *s, const struct op_baseline *b,
                    const struct op_bench *bench, struct result_row *row);

#ifdef __cplusplus
}
#endif

#endif
