#include "op_buffers.h"

#include <stdlib.h>
#include <string.h>

#include "alloc.h"
#include "cuda_check.h"
#include "escape.h"

size_t op_set_bytes(const struct op *op, const struct conv_shape *s, int layout)
{
    struct op_tensor t[OP_MAX_TENSORS];
    size_t bytes = 0;
    for (int i = 0, n = op->tensors(s, layout, t); i < n; i++)
        bytes += t[i].shared ? 0 : t[i].bytes;
    return bytes;
}

int op_sets_for(const struct op *op, const struct conv_shape *s, int layout,
                const struct gpu_info *gpu)
{
    const size_t bytes = op_set_bytes(op, s, layout);
    return bytes ? buffer_sets_for(bytes, gpu->l2_bytes, gpu->free_bytes) : 1;
}

/* Set 0 holds the op's files' values when they were given; every other set is drawn. */
static bool draw_set(const struct op_source *src, int layout, int set, void *const *host)
{
    if (set == 0 && src->files && src->files->set) {
        src->files->set->from_files(src->shape, layout, src->files->tensor, host);
        return true;
    }
    struct op_draw d = {src->op,  src->shape, src->param, layout,
                        set,      op_set_seed(src->seed, set), host};
    char err[1024];
    if (src->op->draw(&d, err, sizeof err))
        return true;
    print_error("%s", err);
    return false;
}

void *op_alloc_where(bool host, size_t bytes, const char *what)
{
    if (bytes == 0)
        return NULL;
    return host ? host_alloc(bytes, what) : gpu_alloc(bytes, what);
}

void op_free_where(bool host, void *p)
{
    if (host)
        free(p);
    else
        CUDA_CHECK(cudaFree(p));
}

static void copy_where(bool host, void *to, const void *from, size_t bytes,
                       enum cudaMemcpyKind kind)
{
    if (bytes == 0)
        return;
    if (host)
        memcpy(to, from, bytes);
    else
        CUDA_CHECK(cudaMemcpy(to, from, bytes, kind));
}

bool op_buffers_create(struct op_buffers *b, const struct op_source *src, int layout, bool host,
                       int sets, cudaStream_t stream)
{
    memset(b, 0, sizeof *b);
    b->layout = layout;
    b->host = host;
    b->stream = stream;
    b->count = src->op->tensors(src->shape, layout, b->t);
    for (int i = 0; i < b->count; i++) {
        b->before[i] = op_alloc_where(true, b->t[i].bytes, b->t[i].name);
        if (b->t[i].written)
            b->after[i] = op_alloc_where(true, b->t[i].bytes, b->t[i].name);
    }
    if (!draw_set(src, layout, 0, b->before))
        return false;
    b->sets = sets;
    /* Sets after the first are drawn into `staged`, uploaded, and forgotten; a shared
     * tensor is set 0's in every set. */
    void *staged[OP_MAX_TENSORS] = {0};
    for (int i = 0; b->sets > 1 && i < b->count; i++)
        if (!b->t[i].shared)
            staged[i] = op_alloc_where(true, b->t[i].bytes, b->t[i].name);
    bool drawn = true;
    for (int set = 0; drawn && set < b->sets; set++) {
        if (set > 0 && !(drawn = draw_set(src, layout, set, staged)))
            break;
        for (int i = 0; i < b->count; i++) {
            if (set > 0 && b->t[i].shared) {
                b->set[set][i] = b->set[0][i];
                continue;
            }
            b->set[set][i] = op_alloc_where(host, b->t[i].bytes, b->t[i].name);
            copy_where(host, b->set[set][i], set == 0 ? b->before[i] : staged[i], b->t[i].bytes,
                       cudaMemcpyHostToDevice);
        }
    }
    for (int i = 0; i < b->count; i++)
        free(staged[i]);
    /* A copy from pageable memory may still be on its way when cudaMemcpy returns; the
     * runs go on another stream, so they wait here for it. */
    if (!host)
        CUDA_CHECK(cudaDeviceSynchronize());
    return drawn;
}

void op_buffers_free(struct op_buffers *b)
{
    for (int set = 0; set < MAX_BUFFER_SETS; set++)
        for (int i = 0; i < b->count; i++)
            if (b->set[set][i] && (set == 0 || !b->t[i].shared))
                op_free_where(b->host, b->set[set][i]);
    for (int i = 0; i < b->count; i++) {
        free(b->before[i]);
        free(b->after[i]);
    }
    b->count = 0;
    b->sets = 0;
}

void op_buffers_reset_written(struct op_buffers *b)
{
    for (int i = 0; i < b->count; i++) {
        if (!b->t[i].written || b->t[i].bytes == 0)
            continue;
        if (b->host)
            memcpy(b->set[0][i], b->before[i], b->t[i].bytes);
        else /* on the runs' stream, so the run after it sees it whole */
            CUDA_CHECK(cudaMemcpyAsync(b->set[0][i], b->before[i], b->t[i].bytes,
                                       cudaMemcpyHostToDevice, b->stream));
    }
}

void op_buffers_fetch_written(struct op_buffers *b)
{
    if (!b->host)
        CUDA_CHECK(cudaStreamSynchronize(b->stream));
    for (int i = 0; i < b->count; i++)
        if (b->t[i].written)
            copy_where(b->host, b->after[i], b->set[0][i], b->t[i].bytes, cudaMemcpyDeviceToHost);
}
