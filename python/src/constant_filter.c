/* Lesson 05 keeps the filter in __constant__ memory: one copy per device for the whole
 * process, which its setup fills with cudaMemcpyToSymbol, a copy on the legacy default
 * stream. The lesson's harness runs everything on one stream; a PyTorch caller may run
 * on any stream, PyTorch's own streams do not wait for the legacy one, and two calls may
 * come from two threads. So, under one lock and with events:
 *   - the copies wait for the caller's stream, which may still be writing the weights;
 *   - the copies wait for the last kernel that read the constant filter, on whatever
 *     stream it ran, so no kernel sees the next call's filter;
 *   - the kernel waits for the copies.
 * Nothing waits on the host. A layer without a bias gets a zero from scratch: setup
 * would copy it from the host otherwise, which waits for the legacy stream on the host. */
#include "constant_filter.h"

#include <pthread.h>
#include <stdbool.h>

struct filter_events {
    bool created;
    cudaEvent_t inputs_ready;   /* the caller's stream reached the call */
    cudaEvent_t filter_written; /* the copies into constant memory are done */
    cudaEvent_t filter_read;    /* the last kernel that read the constant filter is done */
};

static struct filter_events events[CONSTANT_FILTER_MAX_DEVICES];
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;

#define TRY(call)                                                                                  \
    do {                                                                                           \
        cudaError_t try_err_ = (call);                                                             \
        if (try_err_ != cudaSuccess) {                                                             \
            *failed = #call;                                                                       \
            return try_err_;                                                                       \
        }                                                                                          \
    } while (0)

static cudaError_t create_events(struct filter_events *e, const char **failed)
{
    TRY(cudaEventCreateWithFlags(&e->inputs_ready, cudaEventDisableTiming));
    TRY(cudaEventCreateWithFlags(&e->filter_written, cudaEventDisableTiming));
    TRY(cudaEventCreateWithFlags(&e->filter_read, cudaEventDisableTiming));
    e->created = true;
    return cudaSuccess;
}

static cudaError_t run_locked(struct filter_events *e, const struct conv2d_kernel *k,
                              const struct conv_args *a, const char **failed)
{
    if (!e->created)
        TRY(create_events(e, failed));
    struct conv_args with_bias = *a;
    if (!a->bias) {
        TRY(cudaMemsetAsync(a->scratch, 0, sizeof(float), a->stream));
        with_bias.bias = a->scratch;
        with_bias.shape.bias = true;
    }
    TRY(cudaEventRecord(e->inputs_ready, a->stream));
    TRY(cudaStreamWaitEvent(cudaStreamLegacy, e->inputs_ready, 0));
    /* Not yet recorded: a wait that is already over. */
    TRY(cudaStreamWaitEvent(cudaStreamLegacy, e->filter_read, 0));
    k->setup(&with_bias);
    TRY(cudaEventRecord(e->filter_written, cudaStreamLegacy));
    TRY(cudaStreamWaitEvent(a->stream, e->filter_written, 0));
    k->run(&with_bias);
    TRY(cudaEventRecord(e->filter_read, a->stream));
    return cudaSuccess;
}

cudaError_t run_with_constant_filter(int device, const struct conv2d_kernel *k,
                                     const struct conv_args *a, const char **failed)
{
    pthread_mutex_lock(&lock);
    const cudaError_t err = run_locked(&events[device], k, a, failed);
    pthread_mutex_unlock(&lock);
    return err;
}
