/* What a lesson is: a name, a list of kernel variants, and the one call its main()
 * makes. The harness does everything else: flags, inputs, the gold check, timing,
 * the cuDNN row, the table and the CSV. */
#ifndef LESSON_H
#define LESSON_H

#include <stdbool.h>

#include "conv_problem.h"
#include "verify.h"

/* Pointers are device pointers for GPU lessons and host pointers for CPU lessons. */
struct conv_args {
    struct conv_shape shape;
    const float *input;   /* n x cin x h x w */
    const float *weights; /* cout x cin x ksize x ksize */
    const float *bias;    /* cout, or NULL when shape.bias is false */
    float *output;        /* n x cout x h x w */
};

struct conv_variant {
    const char *name; /* short, for --variant and the CSV */
    const char *what; /* one line for --help */
    enum conv_dtype dtype;
    /* NULL when the variant handles this shape, else why not (shown in the table). */
    const char *(*unsupported)(const struct conv_shape *s);
    /* Optional, untimed: work done once per problem (filter to constant memory...). */
    void (*prepare)(const struct conv_args *a);
    /* GPU: enqueue the kernel(s) on the default stream and check the launch.
     * CPU: compute the whole output before returning. */
    void (*run)(const struct conv_args *a);
    /* Above this many GFLOP the variant is skipped unless named with --variant
     * (slow CPU loops on U-Net layers); 0 means no limit. */
    double max_gflop;
    /* CPU: runs on every OpenMP thread (the device column says how many). */
    bool parallel;
    /* Optional: FLOPs of this variant's algorithm when it does fewer than the direct
     * 2*n*cout*h*w*cin*k^2 (separable filters); GFLOP/s and the roofline use it. */
    double (*flops)(const struct conv_shape *s);
};

enum lesson_target { TARGET_CPU, TARGET_GPU };

struct lesson {
    const char *name;  /* the folder name, e.g. "04_shared_tiling" */
    const char *title; /* one line */
    enum lesson_target target;
    const struct conv_variant *variants;
    int variant_count;
    const char *default_preset;
    const char *image_variant; /* the variant image and .npy modes apply */
    int min_compute_capability; /* e.g. 75 for sm_75; ignored for CPU lessons */
    /* Random weights are drawn as outer products of two random vectors (rank 1),
     * for lessons that need separable filters. */
    bool separable_weights;
    /* Optional: NULL when the lesson can use these weights (from --filter, --weights
     * or random), else one line saying why not; the run then exits with 2. */
    const char *(*check_weights)(const struct conv_shape *s, const float *weights);
};

/* Runs the lesson as the command line asks. Returns the process exit code:
 * 0 all passed, 1 a check failed or runtime error, 2 usage or input error,
 * 77 no usable GPU. */
int lesson_main(const struct lesson *lesson, int argc, char **argv);

#endif
