/* launch_floor: what the harness's timing adds to a kernel's own time. Every GPU row is
 * timed by gpu_time_sets (common/measure/gpu_timer.h): an event, the run's launches, an event,
 * queued back to back, median of the repetitions. Here the run is one kernel that does
 * nothing but wait a known time on the GPU's global timer, in as many blocks as a
 * lesson-09 layer launches, so a row's median minus that time is the protocol's own
 * cost: the launch and the two events. A kernel that waits 0 us shows what a launch
 * that does nothing reads. A median shorter than the wait would be a timer that misses
 * part of the run: the tool then fails (exit 1).
 *
 *   build/bin/launch_floor
 */
#include <stdio.h>

#include "cuda_check.h"
#include "gpu_info.h"
#include "gpu_timer.h"
#include "session.h"

#define WARMUP 5
#define REPS 50 /* the harness's defaults (cli.h) */
#define THREADS 256

/* Waits until `ns` nanoseconds of the global timer have passed since the thread began. */
__global__ void wait_ns(unsigned long long ns)
{
    unsigned long long start, now;
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(start));
    do
        asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(now));
    while (now - start < ns);
}

struct wait_run {
    int blocks;
    unsigned long long ns;
    cudaStream_t stream;
};

static void enqueue_wait(void *context, int set)
{
    (void)set; /* nothing is read: one buffer set */
    const struct wait_run *w = (const struct wait_run *)context;
    wait_ns<<<w->blocks, THREADS, 0, w->stream>>>(w->ns);
    CUDA_CHECK_LAUNCH();
}

int main(void)
{
    const char *why = NULL;
    if (gpu_count(&why) == 0)
        return report_no_gpu("launch_floor", why);
    struct gpu_info g;
    gpu_query(0, &g);
    cudaStream_t stream;
    CUDA_CHECK(cudaStreamCreate(&stream));
    printf("launch_floor | %s | a kernel that waits T us, timed as every row is (event, launch, "
           "event; %d warm-up runs, median of %d)\n",
           g.name, WARMUP, REPS);
    printf("%7s %8s %11s %11s %13s\n", "blocks", "T us", "median us", "min us", "median - T");
    const int blocks[] = {1, 392, 784};
    const double wait_us[] = {0, 2, 5, 10, 20, 50};
    int failures = 0;
    for (size_t b = 0; b < sizeof blocks / sizeof blocks[0]; b++)
        for (size_t t = 0; t < sizeof wait_us / sizeof wait_us[0]; t++) {
            struct wait_run w = {blocks[b], (unsigned long long)(wait_us[t] * 1e3), stream};
            struct timing tm = gpu_time_sets(enqueue_wait, &w, 1, stream, WARMUP, REPS);
            printf("%7d %8.1f %11.2f %11.2f %13.2f\n", blocks[b], wait_us[t], tm.median_ms * 1e3,
                   tm.min_ms * 1e3, tm.median_ms * 1e3 - wait_us[t]);
            if (tm.min_ms * 1e3 < wait_us[t]) {
                fprintf(stderr,
                        "error: a run timed at %.2f us waited %.1f us: the timer misses "
                        "part of the run\n",
                        tm.min_ms * 1e3, wait_us[t]);
                failures++;
            }
        }
    CUDA_CHECK(cudaStreamDestroy(stream));
    return failures ? 1 : 0;
}
