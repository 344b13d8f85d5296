/* A cuDNN row you can trust: every forward algorithm cuDNN offers for the problem
 * is run once and checked, timed with a few repetitions, and those within 1.5x of
 * the fastest are timed again with the harness's full protocol (the same warm-up,
 * repetitions, median and buffer rotation as a lesson's variants), in three rounds
 * 30 ms apart, each keeping its fastest round; the fastest that passed is the row.
 * cudnnFind's single pass is not used: it picked algorithms 6x apart between two runs
 * of the same problem. */
#ifndef CUDNN_ROWS_H
#define CUDNN_ROWS_H

#include <stdbool.h>
#include <stddef.h>

#include "gpu_runner.h"
#include "timing.h"
#include "verify.h"

#ifdef __cplusplus
extern "C" {
#endif

struct algo_trial {
    int algorithm;
    const char *skipped; /* why it did not run; NULL when it ran */
    bool pass;           /* its output passed the check (or the check is off) */
    struct timing time;
};

/* Index of the fastest trial (by median) that ran and passed; -1 when none did. */
int fastest_passing(const struct algo_trial *trials, int count);

/* The timing of round `index` (0, 1, ...) of one algorithm: kept when it is the first
 * or has a lower median than the one kept so far. */
void keep_faster_round(struct timing *kept, struct timing round, int index);

/* Checks a cuDNN output (float32 NCHW on the host, bias not yet added). */
typedef struct check_result (*cudnn_check_fn)(void *context, float *host_out);

struct cudnn_row {
    const char *skipped; /* why there is no row; NULL when there is one */
    int algorithm;
    struct timing time;
    struct check_result check;
    /* "name median_ms" of every algorithm, or "name: why not", for the log */
    char tried[768];
};

/* Tries every algorithm on buffers b; host_out is scratch for their outputs. */
struct cudnn_row cudnn_best_row(const struct gpu_buffers *b, size_t free_bytes,
                                cudnn_check_fn check, void *check_context, float *host_out,
                                int warmup, int reps);

#ifdef __cplusplus
}
#endif

#endif
