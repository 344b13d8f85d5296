/* Timing GPU work with device events around the launches only: warm-up runs first,
 * then `reps` runs queued back to back, each between its own pair of events, rotating
 * over `sets` buffer sets so that consecutive runs read different memory. */
#ifndef GPU_TIMER_H
#define GPU_TIMER_H

#include <cuda_runtime_api.h>

#include "timing.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Enqueues one run on buffer set `set` (0 .. sets-1) on the timer's stream. */
typedef void (*enqueue_set_fn)(void *context, int set);

struct timing gpu_time_sets(enqueue_set_fn run, void *context, int sets, cudaStream_t stream,
                            int warmup, int reps);

#ifdef __cplusplus
}
#endif

#endif
