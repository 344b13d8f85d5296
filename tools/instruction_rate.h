/* What the instruction-rate tools (mma_rate, wgmma_rate) share: the GPU they measure and
 * their header line, and each form of the instruction timed as the fastest of its runs
 * and reported in TOPS and ops per clock per SM. */
#ifndef INSTRUCTION_RATE_H
#define INSTRUCTION_RATE_H

#include <stdbool.h>
#include <stdint.h>

#include "gpu_info.h"

#ifdef __cplusplus
extern "C" {
#endif

#define RATE_WARMUP 2 /* untimed runs of each kind, then */
#define RATE_REPS 5   /* timed runs, of which the report gives the fastest */

/* Launches one run of a kernel that issues the instruction, on the default stream (run
 * counts the runs from 0); its results go to sink, one word of device memory. */
typedef void (*rate_launch_fn)(int run, const struct gpu_info *g, uint32_t *sink);

/* One form of the instruction. */
struct rate_kind {
    const char *name;  /* its shape and types, as the report names it */
    double ops_per_sm; /* the operations of one run on each SM (2 per multiply-add) */
    rate_launch_fn launch;
};

/* Device 0 into g and the header line "<tool> | <GPU> | cc | SMs | clock | " followed by
 * format's text: EXIT_PASS. Where there is no GPU, or can_run says the tool's code does
 * not run on it ("skipped: <needs>; <GPU> is <cc>"), one line on stderr: EXIT_NO_GPU. */
int rate_open(struct gpu_info *g, const char *tool, bool (*can_run)(const struct gpu_info *g),
              const char *needs, const char *format, ...) __attribute__((format(printf, 5, 6)));

/* Each kind in turn: RATE_WARMUP + RATE_REPS runs, each between its own pair of events
 * and waited for, then one line for the fastest of the last RATE_REPS: the instruction,
 * the kind's name padded to name_width, TOPS, ops per clock per SM, and the time. */
void rate_measure(const struct gpu_info *g, const char *instruction, int name_width,
                  const struct rate_kind *kinds, int count);

#ifdef __cplusplus
}
#endif

#endif
