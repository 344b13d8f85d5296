#include "cudnn_rows.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cuda_check.h"
#include "cudnn_baseline.h"

/* An algorithm whose workspace would take more than this share of the free memory
 * is not tried: the buffer sets already hold the rest. */
#define WORKSPACE_SHARE 0.8
/* cuDNN 9 has 8 forward algorithms. */
#define MAX_ALGORITHMS 16
/* Each algorithm is first timed with a few repetitions; those within this factor
 * of the fastest then get the full warm-up and repetitions. An FFT that takes a
 * second a run on an 8192x8192 image is not worth fifty more. */
#define SCREEN_WARMUP 1
#define SCREEN_REPS 5
#define CONTENDER_FACTOR 1.5
#define HOPELESS_FACTOR 4.0
/* The contenders' full timings are taken in rounds, this far apart, and each keeps its
 * fastest round: on the H200 a reading of cuDNN fp16/bf16 NHWC is now and then 20-60 %
 * slow, minimum included, for a stretch of tens of ms in the middle of a process (same
 * algorithm, same kernel), and one such stretch made the rows of one problem differ by
 * 28 % between two lessons. Rounds make a slow row rarer; a stretch longer than the
 * rounds still gets through (docs/harness.md, section 6). */
#define ROUNDS 3
#define ROUND_GAP_MS 30

void keep_faster_round(struct timing *kept, struct timing round, int index)
{
    if (index == 0 || round.median_ms < kept->median_ms)
        *kept = round;
}

static void pause_ms(int ms)
{
    struct timespec t = {ms / 1000, (long)(ms % 1000) * 1000000L};
    while (nanosleep(&t, &t) != 0)
        ; /* interrupted: sleep what is left */
}

int fastest_passing(const struct algo_trial *trials, int count)
{
    int best = -1;
    for (int i = 0; i < count; i++) {
        if (trials[i].skipped || !trials[i].pass)
            continue;
        if (best < 0 || trials[i].time.median_ms < trials[best].time.median_ms)
            best = i;
    }
    return best;
}

static void enqueue_cudnn(void *context, const struct gpu_buffers *b, int set)
{
    if (!cudnn_conv_run(context, b->input[set], b->weights, b->output[set])) {
        fprintf(stderr, "error: cuDNN: cudnnConvolutionForward failed on an algorithm that "
                        "had run before\n");
        exit(1);
    }
}

/* The first run of an algorithm may be refused; only then is it marked not offered. */
struct first_run {
    struct cudnn_conv *conv;
    bool refused;
};

static void enqueue_first(void *context, const struct gpu_buffers *b, int set)
{
    struct first_run *f = context;
    f->refused = !cudnn_conv_run(f->conv, b->input[set], b->weights, b->output[set]);
}

/* Adds "name: why", "name 0.1234 (5 runs)" (screened only) or "name 0.1234 (rounds
 * 0.1240 0.1234 0.1251)" to the list of what was tried. */
static void note_trial(struct cudnn_row *row, const struct algo_trial *t, const double *round_ms,
                       int rounds)
{
    size_t used = strlen(row->tried), size = sizeof row->tried;
    const char *name = cudnn_algorithm_name(t->algorithm), *sep = used ? ", " : "";
    if (t->skipped) {
        snprintf(row->tried + used, size - used, "%s%s: %s", sep, name, t->skipped);
        return;
    }
    if (rounds == 0) {
        snprintf(row->tried + used, size - used, "%s%s %.4f (%d run%s)", sep, name,
                 t->time.median_ms, t->time.reps, t->time.reps == 1 ? "" : "s");
        return;
    }
    used += (size_t)snprintf(row->tried + used, size - used, "%s%s %.4f (rounds", sep, name,
                             t->time.median_ms);
    for (int i = 0; i < rounds && used < size; i++)
        used += (size_t)snprintf(row->tried + used, size - used, " %.4f", round_ms[i]);
    if (used < size)
        snprintf(row->tried + used, size - used, ")");
}

/* One timed run; a few more only when that one is not far behind the fastest so
 * far (an FFT that takes a second on an 8192x8192 image gets no more). */
static struct timing screen(struct cudnn_conv *c, const struct gpu_buffers *b,
                            const struct algo_trial *trials, int tried)
{
    struct timing once = gpu_time(enqueue_cudnn, c, b, 0, 1);
    int best = fastest_passing(trials, tried);
    if (best >= 0 && once.median_ms > HOPELESS_FACTOR * trials[best].time.median_ms)
        return once;
    return gpu_time(enqueue_cudnn, c, b, SCREEN_WARMUP, SCREEN_REPS);
}

struct cudnn_row cudnn_best_row(const struct gpu_buffers *b, size_t free_bytes,
                                cudnn_check_fn check, void *check_context, float *host_out,
                                int warmup, int reps)
{
    struct cudnn_row row = {.algorithm = -1};
    const char *why = NULL;
    struct cudnn_conv *c = cudnn_conv_create(&b->shape, b->dtype, b->layout, b->stream, &why);
    if (!c) {
        row.skipped = why;
        return row;
    }
    int count = cudnn_conv_algorithm_count();
    if (count > MAX_ALGORITHMS)
        count = MAX_ALGORITHMS;
    struct algo_trial trials[MAX_ALGORITHMS];
    struct check_result checks[MAX_ALGORITHMS];
    size_t max_workspace = (size_t)(free_bytes * WORKSPACE_SHARE);
    for (int i = 0; i < count; i++) {
        struct algo_trial *t = &trials[i];
        *t = (struct algo_trial){.algorithm = i};
        struct first_run first = {c, false};
        if (cudnn_conv_select(c, i, max_workspace, &t->skipped)) {
            gpu_run_once(enqueue_first, &first, b, host_out);
            if (first.refused)
                t->skipped = "refused at run time";
        }
        if (!t->skipped) {
            checks[i] = check(check_context, host_out);
            t->pass = checks[i].pass;
            if (t->pass)
                t->time = screen(c, b, trials, i);
            else
                t->skipped = "FAIL";
        }
    }
    /* The contenders: within CONTENDER_FACTOR of the fastest screened time. */
    int screened_best = fastest_passing(trials, count);
    bool contender[MAX_ALGORITHMS] = {false};
    for (int i = 0; i < count && screened_best >= 0; i++)
        contender[i] =
            reps > SCREEN_REPS && !trials[i].skipped && trials[i].pass &&
            trials[i].time.median_ms <= CONTENDER_FACTOR * trials[screened_best].time.median_ms;
    double round_ms[MAX_ALGORITHMS][ROUNDS];
    for (int round = 0; round < ROUNDS && screened_best >= 0; round++) {
        if (round > 0)
            pause_ms(ROUND_GAP_MS);
        for (int i = 0; i < count; i++) {
            round_ms[i][round] = NAN; /* shown as nan if it could not be selected again */
            if (!contender[i] || !cudnn_conv_select(c, i, max_workspace, &why))
                continue;
            struct timing t = gpu_time(enqueue_cudnn, c, b, warmup, reps);
            round_ms[i][round] = t.median_ms;
            keep_faster_round(&trials[i].time, t, round);
        }
    }
    for (int i = 0; i < count; i++)
        note_trial(&row, &trials[i], round_ms[i], contender[i] ? ROUNDS : 0);
    cudnn_conv_destroy(c);
    int best = fastest_passing(trials, count);
    if (best < 0) {
        row.skipped = "no cuDNN algorithm ran and passed the check";
        return row;
    }
    row.algorithm = trials[best].algorithm;
    row.time = trials[best].time;
    row.check = checks[best];
    return row;
}
