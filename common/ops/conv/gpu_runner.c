#include "gpu_runner.h"

#include <stdlib.h>

#include "alloc.h"
#include "cuda_check.h"
#include "gpu_timer.h"
#include "verify.h"

struct dims4 conv_input_dims(const struct conv_shape *s)
{
    return (struct dims4){s->n, s->cin, s->h, s->w};
}

struct dims4 conv_output_dims(const struct conv_shape *s)
{
    return (struct dims4){s->n, s->cout, s->h, s->w};
}

struct dims4 conv_weight_dims(const struct conv_shape *s)
{
    return (struct dims4){s->cout, s->cin, s->ksize, s->ksize};
}

void gpu_run_once(enqueue_fn run, void *context, const struct gpu_buffers *b, float *host_out)
{
    CUDA_CHECK(cudaMemsetAsync(b->output[0], POISON_BYTE, b->output_bytes, b->stream));
    run(context, b, 0);
    CUDA_CHECK(cudaStreamSynchronize(b->stream));
    void *staged = host_alloc(b->output_bytes, "the output's conversion");
    CUDA_CHECK(cudaMemcpy(staged, b->output[0], b->output_bytes, cudaMemcpyDeviceToHost));
    tensor_to_nchw(staged, conv_output_dims(&b->shape), output_dtype(b->dtype),
                   output_layout(b->layout), host_out);
    free(staged);
}

/* gpu_time's run, with the buffers it rotates over. */
struct buffers_run {
    enqueue_fn run;
    void *context;
    const struct gpu_buffers *b;
};

static void enqueue_buffers(void *context, int set)
{
    const struct buffers_run *br = context;
    br->run(br->context, br->b, set);
}

struct timing gpu_time(enqueue_fn run, void *context, const struct gpu_buffers *b, int warmup,
                       int reps)
{
    struct buffers_run br = {run, context, b};
    return gpu_time_sets(enqueue_buffers, &br, b->sets, b->stream, warmup, reps);
}
