/* What a run is asked to do: the flags every lesson accepts (harness/cli.h parses
 * them, once, before any GPU work) and the values of its op's own flags and files. */
#ifndef OPTIONS_H
#define OPTIONS_H

#include <stdbool.h>
#include <stdint.h>

#include "conv_problem.h"

#define OP_MAX_TENSORS 6
#define OP_MAX_PARAMS 4
#define OP_MAX_DATA_FLAGS 8

/* The largest image side, channel count, batch and device id the flags accept; the
 * 32-bit element check catches combinations that are too large together. */
#define MAX_SIDE 1000000
#define MAX_CHANNELS 65536
#define MAX_BATCH 65535
#define MAX_DEVICE_ID 1023

/* MODE_FILES: the problem is the op's .npy files (op.file_sets); MODE_DATA: the op's own
 * data flags give the problem (the convolution's --input or --image), and one variant
 * is applied to it. */
enum run_mode { MODE_BENCH, MODE_FILES, MODE_DATA };

struct options {
    enum run_mode mode;
    struct conv_shape shape; /* from the preset or flags, or set by the op from its data */
    const char *preset;      /* preset name, or "custom" */
    bool ksize_given;        /* --ksize was on the command line */
    int reps;                /* of GPU variants and library rows: the default or --reps */
    int warmup;
    int cpu_reps; /* of CPU variants */
    int cpu_warmup;
    uint64_t seed;
    const char *variant; /* NULL: all variants */
    bool verify;
    bool cudnn; /* time the library rows (--no-cudnn turns them off) */
    const char *csv_path;
    const char *frames_csv_path; /* a sequence op's rows per frame */
    const char *output_path;     /* --output: where the applied variant's result goes */
    int device;
    double param[OP_MAX_PARAMS];              /* an op's own numbers (op.params) */
    const char *op_file_path[OP_MAX_TENSORS]; /* an op's .npy files (op.file_sets) */
    const char *data[OP_MAX_DATA_FLAGS];      /* an op's data flags (op.data_flags) */
};

#endif
