#include "gpu_timer.h"

#include <stdlib.h>

#include "alloc.h"
#include "cuda_check.h"

int buffer_sets_for(size_t set_bytes, size_t l2_bytes, size_t free_bytes)
{
    size_t wanted = (ROTATE_L2_FACTOR * l2_bytes + set_bytes - 1) / set_bytes;
    size_t fit = free_bytes / 2 / set_bytes;
    size_t sets = wanted < fit ? wanted : fit;
    if (sets > MAX_BUFFER_SETS)
        sets = MAX_BUFFER_SETS;
    return sets < 1 ? 1 : (int)sets;
}

struct timing gpu_time_sets(enqueue_set_fn run, void *context, int sets, cudaStream_t stream,
                            int warmup, int reps)
{
    int set = 0;
    for (int i = 0; i < warmup; i++, set = (set + 1) % sets)
        run(context, set);
    cudaEvent_t *start = host_alloc(2 * (size_t)reps * sizeof *start, "the timing events");
    double *samples = host_alloc((size_t)reps * sizeof *samples, "the timings");
    cudaEvent_t *stop = start + reps;
    for (int i = 0; i < reps; i++) {
        CUDA_CHECK(cudaEventCreate(&start[i]));
        CUDA_CHECK(cudaEventCreate(&stop[i]));
    }
    /* All runs are queued back to back; the events record only the GPU's time. */
    for (int i = 0; i < reps; i++, set = (set + 1) % sets) {
        CUDA_CHECK(cudaEventRecord(start[i], stream));
        run(context, set);
        CUDA_CHECK(cudaEventRecord(stop[i], stream));
    }
    CUDA_CHECK(cudaStreamSynchronize(stream));
    for (int i = 0; i < reps; i++) {
        float ms;
        CUDA_CHECK(cudaEventElapsedTime(&ms, start[i], stop[i]));
        samples[i] = ms;
        CUDA_CHECK(cudaEventDestroy(start[i]));
        CUDA_CHECK(cudaEventDestroy(stop[i]));
    }
    struct timing t = timing_from_samples(samples, reps);
    free(start);
    free(samples);
    return t;
}
