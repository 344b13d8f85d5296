/* What a lesson is: a name, a list of kernel variants, and the one call its main()
 * makes. The harness does everything else: flags, inputs, their conversion to each
 * variant's dtype and layout, the gold check, timing, the cuDNN rows of the same
 * precision and layout, the table and the CSV. */
#ifndef LESSON_H
#define LESSON_H

#include <stdbool.h>
#include <stddef.h>

#include <cuda_runtime_api.h>

#include "conv_problem.h"
#include "gpu_info.h"
#include "op.h"
#include "tensor_format.h"
#include "verify.h"

/* Pointers are device pointers for GPU lessons and host pointers for CPU lessons.
 * input, weights and output are in the variant's dtype and layout (tensor_format.h);
 * the bias and scale are float32 whatever the dtype. */
struct conv_args {
    struct conv_shape shape;
    const void *input;   /* n x cin x h x w in the variant's layout */
    const void *weights; /* cout x cin x ksize x ksize in the variant's layout */
    const float *bias;   /* cout, or NULL when shape.bias is false */
    /* binary dtype: cout scaling factors alpha[k] (xnor_scale.h); the output is
     * alpha[k] * sum x * sign(w) + bias[k]. NULL for every other dtype. */
    const float *scale;
    void *output;        /* n x cout x h x w, output_dtype(dtype), output_layout(layout);
                          * packed signs in the bits layout for OUTPUT_SIGN_BITS */
    void *scratch;       /* scratch_bytes() of memory the harness owns; NULL when none */
    cudaStream_t stream; /* GPU: every launch and copy goes on this stream */
};

/* The float32 views, for variants whose dtype stores float32. */
static inline const float *input_f32(const struct conv_args *a)
{
    return (const float *)a->input;
}
static inline const float *weights_f32(const struct conv_args *a)
{
    return (const float *)a->weights;
}
static inline float *output_f32(const struct conv_args *a)
{
    return (float *)a->output;
}

struct conv_variant {
    const char *name; /* short, for --variant and the CSV */
    const char *what; /* one line for --help */
    enum dtype dtype;
    enum layout layout; /* zero: NCHW */
    /* NULL when the variant handles this shape, else why not (shown in the table). */
    const char *(*unsupported)(const struct conv_shape *s);
    /* Optional, GPU lessons: NULL when the variant runs on this GPU, else why not (an
     * instruction only some architectures have); shown in the table, not a failure. */
    const char *(*unsupported_gpu)(const struct gpu_info *gpu);
    /* Optional: bytes of working memory (an intermediate image, re-laid-out weights)
     * the harness allocates before setup and frees after teardown, so a variant
     * owns no allocation of its own. */
    size_t (*scratch_bytes)(const struct conv_shape *s);
    /* Optional, untimed, once per problem before the first run: work such as the
     * filter to constant memory or the weights re-laid into scratch. */
    void (*setup)(const struct conv_args *a);
    /* Optional, untimed, after the last run: undoes what setup did outside scratch. */
    void (*teardown)(const struct conv_args *a);
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

enum lesson_target { TARGET_CPU, TARGET_GPU };

struct lesson {
    const char *name;  /* the folder name, e.g. "04_shared_tiling" */
    const char *title; /* one line */
    enum lesson_target target;
    const struct conv_variant *variants;
    int variant_count;
    const char *default_preset;
    const char *image_variant;  /* the variant image and .npy modes apply */
    int min_compute_capability; /* e.g. 75 for sm_75; ignored for CPU lessons */
    /* Random weights are drawn as outer products of two random vectors (rank 1),
     * for lessons that need separable filters. */
    bool separable_weights;
    /* Optional: NULL when the lesson can use these weights (from --filter, --weights
     * or random), else one line saying why not; the run then exits with 2. */
    const char *(*check_weights)(const struct conv_shape *s, const float *weights);
    /* Optional: cuDNN rows beyond those the variants' formats call for. */
    const struct baseline_format *extra_baselines;
    int extra_baseline_count;
    /* NULL: the lesson's problem is the convolution above, its kernels `variants`
     * (conv_op.h makes the op the harness runs of them). Otherwise the lesson's own op
     * (op.h) with its presets and variants; target is TARGET_GPU (the op's CPU variants
     * say so themselves). */
    const struct op *op;
};

/* Runs the lesson as the command line asks. Returns the process exit code:
 * 0 all passed, 1 a check failed or runtime error, 2 usage or input error,
 * 77 no usable GPU. */
int lesson_main(const struct lesson *lesson, int argc, char **argv);

#endif
