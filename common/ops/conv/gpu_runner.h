/* cuDNN's rows (cudnn_rows.h) on the convolution's buffer sets (op_buffers.h, made as
 * for every variant), run and timed as the harness times every variant (op_run.h):
 * device events around the launches only, warm-up first, median and min of many runs,
 * rotating over the sets so each run reads from DRAM as a real layer would. */
#ifndef GPU_RUNNER_H
#define GPU_RUNNER_H

#include <stdbool.h>
#include <stddef.h>

#include <cuda_runtime_api.h>

#include "conv_problem.h"
#include "gpu_timer.h"
#include "tensor_format.h"

#ifdef __cplusplus
extern "C" {
#endif

/* A view of the sets in one format: each set's input and output, the shared weights
 * and bias. */
struct gpu_buffers {
    struct conv_shape shape;
    enum dtype dtype; /* of input and weights; the output is output_dtype(dtype) */
    enum layout layout;
    int sets;
    void *input[MAX_BUFFER_SETS];
    void *output[MAX_BUFFER_SETS];
    void *weights;
    float *bias;
    size_t input_bytes, output_bytes, weight_bytes;
    cudaStream_t stream;
};

/* The convolution's input, output and weight tensors as dims4 (NCHW terms). */
struct dims4 conv_input_dims(const struct conv_shape *s);
struct dims4 conv_output_dims(const struct conv_shape *s);
struct dims4 conv_weight_dims(const struct conv_shape *s);

/* Something to run on buffer set `set`. */
typedef void (*enqueue_fn)(void *context, const struct gpu_buffers *b, int set);

/* Poisons output set 0 with NaN (all bits set), runs once, waits, and copies it to
 * host_out as float32 NCHW. */
void gpu_run_once(enqueue_fn run, void *context, const struct gpu_buffers *b, float *host_out);
/* Warm-up runs, then `reps` runs each timed with events, rotating buffer sets. */
struct timing gpu_time(enqueue_fn run, void *context, const struct gpu_buffers *b, int warmup,
                       int reps);

#ifdef __cplusplus
}
#endif

#endif
