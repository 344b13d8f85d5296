/* Timing GPU work with device events around the launches only: warm-up runs first,
 * then `reps` runs queued back to back, each between its own pair of events, rotating
 * over `sets` buffer sets so that consecutive runs read different memory. */
#ifndef GPU_TIMER_H
#define GPU_TIMER_H

#include <stddef.h>

#include <cuda_runtime_api.h>

#include "timing.h"

/* Rotate until the buffers are this many times the L2, with at most this many sets. */
#define ROTATE_L2_FACTOR 4
#define MAX_BUFFER_SETS 32

#ifdef __cplusplus
extern "C" {
#endif

/* Enqueues one run on buffer set `set` (0 .. sets-1) on the timer's stream. */
typedef void (*enqueue_set_fn)(void *context, int set);

/* Sets of set_bytes each to rotate over for this L2 size, limited by the memory
 * available (half of it: the rest is left to cuDNN's workspace). */
int buffer_sets_for(size_t set_bytes, size_t l2_bytes, size_t free_bytes);

struct timing gpu_time_sets(enqueue_set_fn run, void *context, int sets, cudaStream_t stream,
                            int warmup, int reps);

#ifdef __cplusplus
}
#endif

#endif
