/* The command line every lesson accepts (see --help), parsed and validated once,
 * before any GPU work. */
#ifndef CLI_H
#define CLI_H

#include <stdbool.h>
#include <stdint.h>

#include "conv_problem.h"
#include "lesson.h"

/* MODE_NPY: the data from .npy files, the convolution's --input or an op's files. */
enum run_mode { MODE_BENCH, MODE_NPY, MODE_IMAGE };

struct options {
    enum run_mode mode;
    struct conv_shape shape; /* in npy mode filled from the files, in image mode from the image */
    const char *preset;      /* preset name, or "custom" */
    bool ksize_given;        /* --ksize was on the command line */
    int reps;       /* of the lesson's variants: the CPU or GPU default, or --reps */
    int warmup;
    int gpu_reps;   /* of the cuDNN rows, which run on the GPU in a CPU lesson too */
    int gpu_warmup;
    int cpu_reps;   /* of an op's CPU variants, which run beside its GPU ones */
    int cpu_warmup;
    uint64_t seed;
    const char *variant; /* NULL: all variants */
    bool verify;
    bool cudnn; /* time the cuDNN baseline row (--no-cudnn turns it off) */
    const char *csv_path;
    const char *frames_csv_path; /* a sequence op's rows per frame */
    double param[OP_MAX_PARAMS]; /* an op's own flags (op.params), or their defaults */
    int device;
    const char *input_path, *weights_path, *bias_path, *output_path; /* npy mode */
    const char *op_file_path[OP_MAX_TENSORS]; /* an op's files, as op.files; NULL: not given */
    const char *image_path, *image_out_path; /* image mode */
    const char *filter_spec; /* image mode, or named weights for a bench run; NULL: random */
};

#define DEFAULT_SEED 1
#define GPU_DEFAULT_REPS 50
#define GPU_DEFAULT_WARMUP 5
#define CPU_DEFAULT_REPS 3
#define CPU_DEFAULT_WARMUP 1
#define MAX_REPS 100000
#define IMAGE_DEFAULT_KSIZE 5
#define IMAGE_DEFAULT_FILTER "gaussian"

enum cli_status { CLI_RUN, CLI_EXIT_OK, CLI_EXIT_USAGE };

/* On CLI_EXIT_USAGE one line naming the flag has been printed to stderr. */
enum cli_status parse_options(const struct lesson *lesson, int argc, char **argv,
                              struct options *o);

/* "HxW" with positive sizes; false on anything else. */
bool parse_size(const char *text, int *h, int *w);
/* A whole decimal number in [lo, hi]; false on anything else. */
bool parse_int_in(const char *text, long lo, long hi, long *value);

#endif
