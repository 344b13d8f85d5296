/* Step 3, the exchange hidden: a band's interior rows (those whose filter reach stays
 * within its own rows) need no halo, so they are computed while the halo travels. The
 * exchange goes on a high-priority stream, and after it, on the same stream, the
 * band's edge rows, which read the halo: computed aside, then copied into place once
 * the interior is done (its kernel also wrote those rows, wrongly). */
#include "steps.h"

/* Per slab, where its edge bands are computed: two slots per image, of slot_rows
 * rows (a band's own rows and the halo rows around it). */
static void *edges[SPLIT_MAX_GPUS];
static int slot_rows;

static int max_int(int a, int b)
{
    return a > b ? a : b;
}

static int min_int(int a, int b)
{
    return a < b ? a : b;
}

/* Slab p's interior: [*ia, *ib), empty (both r0) when its band is too thin to have
 * one; its edge bands are [r0, *ia) and [*ib, r1). */
static void interior_of(const struct split *s, const struct slab *p, int *ia, int *ib)
{
    *ia = p->r0 == 0 ? 0 : p->r0 + s->halo;
    *ib = p->r1 == s->shape.h ? s->shape.h : p->r1 - s->halo;
    if (*ia >= *ib)
        *ia = *ib = p->r0;
}

void setup_rows_overlap(const struct conv_args *a)
{
    setup_rows_nccl(a);
    const struct split *s = &the_split;
    slot_rows = min_int(4 * s->halo, s->shape.h); /* a band and a halo each side */
    for (int i = 0; i < s->gpus; i++) {
        edges[i] = NULL;
        if (!split_slab_busy(&s->slab[i]) || slot_rows == 0)
            continue;
        CUDA_CHECK(cudaSetDevice(s->slab[i].device));
        CUDA_CHECK(cudaMalloc(&edges[i], 2 * (size_t)s->shape.n *
                                             split_row_bytes(s, slot_rows, s->shape.cout)));
    }
    CUDA_CHECK(cudaSetDevice(a->device));
}

void teardown_rows_overlap(const struct conv_args *a)
{
    for (int i = 0; i < the_split.gpus; i++) {
        CUDA_CHECK(cudaSetDevice(the_split.slab[i].device));
        CUDA_CHECK(cudaFree(edges[i]));
    }
    teardown_split(a);
}

/* Edge band [a, b) of every image: computed into its slots from the rows around it,
 * halo included, on the slab's comm stream. */
static void compute_edge(const struct split *s, const struct slab *p, int i, int side, int a,
                         int b)
{
    const int va = max_int(0, a - s->halo), vb = min_int(s->shape.h, b + s->halo);
    for (int n = 0; a < b && n < s->shape.n; n++) {
        char *slot = (char *)edges[i] + split_row_bytes(s, (2 * n + side) * slot_rows,
                                                        s->shape.cout);
        split_compute_view(s, p, n, va, vb, slot, p->comm);
    }
}

/* Its right rows, from the slots into the slab's output. */
static void place_edge(const struct split *s, const struct slab *p, int i, int side, int a,
                       int b)
{
    const int va = max_int(0, a - s->halo);
    for (int n = 0; a < b && n < s->shape.n; n++) {
        const char *slot = (const char *)edges[i] +
                           split_row_bytes(s, (2 * n + side) * slot_rows + a - va, s->shape.cout);
        CUDA_CHECK(cudaMemcpyAsync(split_output_row(s, p, n, a), slot,
                                   split_row_bytes(s, b - a, s->shape.cout),
                                   cudaMemcpyDeviceToDevice, p->comm));
    }
}

/* [page: rows_overlap] */
void run_rows_overlap(const struct conv_args *a)
{
    struct split *s = &the_split;
    split_fence_in(s, a->stream);
    split_exchange_nccl(s, true); /* on each slab's comm stream */
    for (int i = 0; i < s->gpus; i++) {
        const struct slab *p = &s->slab[i];
        if (!split_slab_busy(p))
            continue;
        int ia, ib;
        interior_of(s, p, &ia, &ib);
        const int va = max_int(0, ia - s->halo), vb = min_int(s->shape.h, ib + s->halo);
        for (int n = 0; ia < ib && n < s->shape.n; n++) /* no halo needed: at once */
            split_compute_view(s, p, n, va, vb, split_output_row(s, p, n, va), p->stream);
        CUDA_CHECK(cudaEventRecord(p->interior, p->stream));
        compute_edge(s, p, i, 0, p->r0, ia); /* after the halo arrived */
        compute_edge(s, p, i, 1, ib, p->r1);
        CUDA_CHECK(cudaStreamWaitEvent(p->comm, p->interior, 0));
        place_edge(s, p, i, 0, p->r0, ia);
        place_edge(s, p, i, 1, ib, p->r1);
        CUDA_CHECK(cudaEventRecord(p->bands, p->comm));
        CUDA_CHECK(cudaStreamWaitEvent(p->stream, p->bands, 0));
    }
    split_fence_out(s, a->stream);
}
/* [/page: rows_overlap] */
