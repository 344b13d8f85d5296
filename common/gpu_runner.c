#include "gpu_runner.h"

#include <stdlib.h>

#include "cuda_check.h"

/* 0xFF bytes make every float a NaN: an output element nobody writes fails the check. */
#define POISON_BYTE 0xFF

size_t buffer_set_bytes(const struct conv_shape *s)
{
    return (input_count(s) + output_count(s)) * sizeof(float);
}

int buffer_sets_for(const struct conv_shape *s, size_t l2_bytes, size_t free_bytes)
{
    size_t set = buffer_set_bytes(s);
    size_t wanted = (ROTATE_L2_FACTOR * l2_bytes + set - 1) / set;
    size_t fit = free_bytes / 2 / set; /* leave half the memory to cuDNN's workspace */
    size_t sets = wanted < fit ? wanted : fit;
    if (sets > MAX_BUFFER_SETS)
        sets = MAX_BUFFER_SETS;
    return sets < 1 ? 1 : (int)sets;
}

void gpu_buffers_create(struct gpu_buffers *b, const struct conv_shape *s, int sets,
                        const float *input, const float *weights, const float *bias)
{
    b->shape = *s;
    b->sets = sets;
    size_t in_bytes = input_count(s) * sizeof(float);
    size_t out_bytes = output_count(s) * sizeof(float);
    size_t w_bytes = weight_count(s) * sizeof(float);
    for (int i = 0; i < sets; i++) {
        CUDA_CHECK(cudaMalloc((void **)&b->input[i], in_bytes));
        CUDA_CHECK(cudaMalloc((void **)&b->output[i], out_bytes));
        CUDA_CHECK(cudaMemcpy(b->input[i], input, in_bytes, cudaMemcpyHostToDevice));
        CUDA_CHECK(cudaMemset(b->output[i], POISON_BYTE, out_bytes));
    }
    CUDA_CHECK(cudaMalloc((void **)&b->weights, w_bytes));
    CUDA_CHECK(cudaMemcpy(b->weights, weights, w_bytes, cudaMemcpyHostToDevice));
    b->bias = NULL;
    if (s->bias) {
        size_t bias_bytes = bias_count(s) * sizeof(float);
        CUDA_CHECK(cudaMalloc((void **)&b->bias, bias_bytes));
        CUDA_CHECK(cudaMemcpy(b->bias, bias, bias_bytes, cudaMemcpyHostToDevice));
    }
}

void gpu_buffers_free(struct gpu_buffers *b)
{
    for (int i = 0; i < b->sets; i++) {
        CUDA_CHECK(cudaFree(b->input[i]));
        CUDA_CHECK(cudaFree(b->output[i]));
    }
    CUDA_CHECK(cudaFree(b->weights));
    if (b->bias)
        CUDA_CHECK(cudaFree(b->bias));
    b->sets = 0;
}

struct conv_args gpu_args(const struct gpu_buffers *b, int set)
{
    struct conv_args a = {b->shape, b->input[set], b->weights, b->bias, b->output[set]};
    return a;
}

void gpu_run_once(enqueue_fn run, void *context, const struct gpu_buffers *b, float *host_out)
{
    size_t out_bytes = output_count(&b->shape) * sizeof(float);
    CUDA_CHECK(cudaMemset(b->output[0], POISON_BYTE, out_bytes));
    run(context, b, 0);
    CUDA_CHECK(cudaDeviceSynchronize());
    CUDA_CHECK(cudaMemcpy(host_out, b->output[0], out_bytes, cudaMemcpyDeviceToHost));
}

struct timing gpu_time(enqueue_fn run, void *context, const struct gpu_buffers *b, int warmup,
                       int reps)
{
    int set = 0;
    for (int i = 0; i < warmup; i++, set = (set + 1) % b->sets)
        run(context, b, set);
    cudaEvent_t *start = malloc(2 * (size_t)reps * sizeof *start);
    double *samples = malloc((size_t)reps * sizeof *samples);
    if (!start || !samples) {
        fprintf(stderr, "error: out of host memory for %d timing events\n", reps);
        exit(1);
    }
    cudaEvent_t *stop = start + reps;
    for (int i = 0; i < reps; i++) {
        CUDA_CHECK(cudaEventCreate(&start[i]));
        CUDA_CHECK(cudaEventCreate(&stop[i]));
    }
    /* All runs are queued back to back; the events record only the GPU's time. */
    for (int i = 0; i < reps; i++, set = (set + 1) % b->sets) {
        CUDA_CHECK(cudaEventRecord(start[i], 0));
        run(context, b, set);
        CUDA_CHECK(cudaEventRecord(stop[i], 0));
    }
    CUDA_CHECK(cudaDeviceSynchronize());
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
