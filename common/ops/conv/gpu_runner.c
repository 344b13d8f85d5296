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

size_t buffer_set_bytes(const struct conv_shape *s, enum dtype d, enum layout l,
                        enum output_format o)
{
    return tensor_bytes(conv_input_dims(s), d, l) +
           output_tensor_bytes(conv_output_dims(s), d, l, o);
}

/* float32 NCHW -> the buffers' format -> device. */
static void upload(void *device, const float *nchw, struct dims4 d, const struct gpu_buffers *b,
                   size_t bytes)
{
    void *staged = host_alloc(bytes, "a tensor's conversion");
    tensor_from_nchw(nchw, d, b->dtype, b->layout, staged);
    CUDA_CHECK(cudaMemcpy(device, staged, bytes, cudaMemcpyHostToDevice));
    free(staged);
}

void gpu_buffers_create(struct gpu_buffers *b, const struct conv_shape *s, enum dtype d,
                        enum layout l, int sets, draw_input_fn draw, void *draw_context,
                        const float *weights, const float *bias, cudaStream_t stream)
{
    b->shape = *s;
    b->dtype = d;
    b->layout = l;
    b->sets = sets;
    b->stream = stream;
    b->input_bytes = tensor_bytes(conv_input_dims(s), d, l);
    b->output_bytes = output_tensor_bytes(conv_output_dims(s), d, l, OUTPUT_VALUES);
    b->weight_bytes = tensor_bytes(conv_weight_dims(s), d, l);
    float *input = host_alloc(input_count(s) * sizeof *input, "an input buffer set");
    for (int i = 0; i < sets; i++) {
        b->input[i] = gpu_alloc(b->input_bytes, "an input buffer");
        b->output[i] = gpu_alloc(b->output_bytes, "an output buffer");
        draw(draw_context, i, input);
        upload(b->input[i], input, conv_input_dims(s), b, b->input_bytes);
        CUDA_CHECK(cudaMemset(b->output[i], POISON_BYTE, b->output_bytes));
    }
    free(input);
    b->weights = gpu_alloc(b->weight_bytes, "the weights");
    upload(b->weights, weights, conv_weight_dims(s), b, b->weight_bytes);
    b->bias = NULL;
    if (s->bias) {
        size_t bias_bytes = bias_count(s) * sizeof(float);
        b->bias = gpu_alloc(bias_bytes, "the bias");
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
