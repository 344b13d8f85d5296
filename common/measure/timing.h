/* Timing statistics shared by host and device timers. */
#ifndef TIMING_H
#define TIMING_H

#ifdef __cplusplus
extern "C" {
#endif

struct timing {
    double median_ms;
    double min_ms;
    int reps;
};

/* Median and minimum of `count` samples (the array is sorted in place). */
struct timing timing_from_samples(double *samples_ms, int count);
/* Monotonic wall clock in milliseconds, for CPU variants. */
double host_now_ms(void);
/* CPU work timed on the host clock: `warmup` untimed calls of run(context), then
 * `reps` calls each timed alone. */
struct timing host_time_runs(void (*run)(void *context), void *context, int warmup, int reps);

#ifdef __cplusplus
}
#endif

#endif
