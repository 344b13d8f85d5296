#define _POSIX_C_SOURCE 199309L
#include "timing.h"

#include <stdlib.h>
#include <time.h>

#include "alloc.h"

static int compare_doubles(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

struct timing timing_from_samples(double *samples_ms, int count)
{
    qsort(samples_ms, (size_t)count, sizeof *samples_ms, compare_doubles);
    struct timing t;
    t.reps = count;
    t.min_ms = samples_ms[0];
    t.median_ms = count % 2 ? samples_ms[count / 2]
                            : 0.5 * (samples_ms[count / 2 - 1] + samples_ms[count / 2]);
    return t;
}

double host_now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1e3 + ts.tv_nsec * 1e-6;
}

struct timing host_time_runs(void (*run)(void *context), void *context, int warmup, int reps)
{
    double *samples = host_alloc((size_t)reps * sizeof *samples, "the timings");
    for (int i = 0; i < warmup; i++)
        run(context);
    for (int i = 0; i < reps; i++) {
        double t0 = host_now_ms();
        run(context);
        samples[i] = host_now_ms() - t0;
    }
    struct timing t = timing_from_samples(samples, reps);
    free(samples);
    return t;
}
