/* Step 3, the exchange hidden: a band's interior rows (those whose filter reach stays
 * within its own rows) need no halo, so they are computed while the halo travels. The
 * interior is one launch over the whole slab, as step 2's, started before the halo
 * arrives: its rows near the band's edges come out wrong and are redone. The exchange
 * goes on a high-priority stream, and after it, on the same stream, the band's edge
 * rows, which read the halo: every image's edge gathered into one batch, computed
 * aside, and put in place once the interior is done.
 *
 * NCCL moves the halo with a kernel, which needs SMs of its own. Lesson 08's kernel is
 * persistent (one block per SM, each walking its share of the tiles to the end), so an
 * interior given every SM holds them all until it is done, and the exchange waits for
 * it: no overlap. The interior is given all SMs but NCCL_SMS; NCCL's kernel and then
 * the edges run on those. */
#include "steps.h"

#define NCCL_SMS 8 /* left to NCCL's kernel and the edges while the interior runs */

/* One edge band of a slab: its rows [a, b) of every image (none when a == b), read
 * from the view [va, vb) around them; `in` holds every image's view, one after the
 * other, and `out` their output. */
struct edge {
    int a, b, va, vb;
    void *in, *out;
};

static struct edge edges[SPLIT_MAX_GPUS][2]; /* per slab: above its interior, below */
static bool interior[SPLIT_MAX_GPUS];       /* whether its band is thick enough to have one */
static int interior_sms[SPLIT_MAX_GPUS];    /* the SMs it fills: all but NCCL_SMS (0: all) */

static int max_int(int a, int b)
{
    return a > b ? a : b;
}

static int min_int(int a, int b)
{
    return a < b ? a : b;
}

static void place_edge(const struct split *s, struct edge *e, int a, int b, int images)
{
    *e = (struct edge){.a = a, .b = b};
    if (a == b)
        return;
    e->va = max_int(0, a - s->halo);
    e->vb = min_int(s->shape.h, b + s->halo);
    const int rows = e->vb - e->va;
    CUDA_CHECK(cudaMalloc(&e->in, (size_t)images * split_row_bytes(s, rows, s->shape.cin)));
    CUDA_CHECK(cudaMalloc(&e->out, (size_t)images * split_row_bytes(s, rows, s->shape.cout)));
}

/* Slab p's interior is [r0 + halo, r1 - halo), less at the image's own edges, which
 * need no halo; a band thinner than that is all edge. */
void setup_rows_overlap(const struct conv_args *a)
{
    setup_rows_nccl(a);
    const struct split *s = &the_split;
    for (int i = 0; i < s->gpus; i++) {
        const struct slab *p = &s->slab[i];
        edges[i][0] = edges[i][1] = (struct edge){0};
        interior[i] = false;
        if (!split_slab_busy(p))
            continue;
        int ia = p->r0 == 0 ? 0 : p->r0 + s->halo;
        int ib = p->r1 == s->shape.h ? s->shape.h : p->r1 - s->halo;
        interior[i] = ia < ib;
        if (!interior[i])
            ia = ib = p->r0;
        CUDA_CHECK(cudaSetDevice(p->device));
        CUDA_CHECK(cudaDeviceGetAttribute(&interior_sms[i], cudaDevAttrMultiProcessorCount,
                                          p->device));
        interior_sms[i] = interior_sms[i] > 2 * NCCL_SMS ? interior_sms[i] - NCCL_SMS : 0;
        place_edge(s, &edges[i][0], p->r0, ia, p->n1 - p->n0);
        place_edge(s, &edges[i][1], ib, p->r1, p->n1 - p->n0);
    }
    CUDA_CHECK(cudaSetDevice(a->device));
}

void teardown_rows_overlap(const struct conv_args *a)
{
    for (int i = 0; i < the_split.gpus; i++) {
        CUDA_CHECK(cudaSetDevice(the_split.slab[i].device));
        for (int side = 0; side < 2; side++) {
            CUDA_CHECK(cudaFree(edges[i][side].in));
            CUDA_CHECK(cudaFree(edges[i][side].out));
        }
    }
    teardown_split(a);
}

/* `bytes` of each of `images` images, from one image stride to another: one call for
 * every image. One image is a plain copy: cudaMemcpy2DAsync caps its strides
 * (cudaDevAttrMaxPitch, 2^31 - 1 bytes), which one large image alone can pass. */
static void copy_images(void *to, size_t to_stride, const void *from, size_t from_stride,
                        size_t bytes, int images, cudaStream_t stream)
{
    if (images == 1)
        CUDA_CHECK(cudaMemcpyAsync(to, from, bytes, cudaMemcpyDeviceToDevice, stream));
    else
        CUDA_CHECK(cudaMemcpy2DAsync(to, to_stride, from, from_stride, bytes, images,
                                     cudaMemcpyDeviceToDevice, stream));
}

/* The edge's views of every image gathered from the slab's input (halo included) and
 * computed as one batch, on the slab's comm stream. */
static void compute_edge(const struct split *s, const struct slab *p, const struct edge *e)
{
    const int images = p->n1 - p->n0, rows = e->vb - e->va;
    const size_t view = split_row_bytes(s, rows, s->shape.cin);
    copy_images(e->in, view, split_input_row(s, p, p->n0, e->va),
                split_image_bytes(s, p, s->shape.cin), view, images, p->comm);
    split_compute(s, p, images, rows, e->in, e->out, p->comm, NCCL_SMS);
}

/* Its right rows, [a, b) of each image's output, put in the slab's output. */
static void put_edge(const struct split *s, const struct slab *p, const struct edge *e)
{
    const int c = s->shape.cout;
    copy_images(split_output_row(s, p, p->n0, e->a), split_image_bytes(s, p, c),
                (const char *)e->out + split_row_bytes(s, e->a - e->va, c),
                split_row_bytes(s, e->vb - e->va, c), split_row_bytes(s, e->b - e->a, c),
                p->n1 - p->n0, p->comm);
}

/* [page: rows_overlap] */
void run_rows_overlap(const struct conv_args *a)
{
    struct split *s = &the_split;
    split_fence_in(s, a->stream);
    /* The interiors first, each one launch over the whole slab on all SMs but
     * NCCL_SMS: they start while the host still issues the exchange. Their edge rows
     * read halo rows that may still be arriving, and are redone below. */
    for (int i = 0; i < s->gpus; i++) {
        const struct slab *p = &s->slab[i];
        CUDA_CHECK(cudaSetDevice(p->device));
        if (interior[i])
            split_compute_slab(s, p, interior_sms[i]);
        CUDA_CHECK(cudaEventRecord(p->interior, p->stream));
    }
    split_exchange_nccl(s, true); /* on each slab's comm stream */
    for (int i = 0; i < s->gpus; i++) {
        const struct slab *p = &s->slab[i];
        if (!split_slab_busy(p))
            continue;
        CUDA_CHECK(cudaSetDevice(p->device));
        for (int side = 0; side < 2; side++) /* after the halo arrived */
            if (edges[i][side].a < edges[i][side].b)
                compute_edge(s, p, &edges[i][side]);
        CUDA_CHECK(cudaStreamWaitEvent(p->comm, p->interior, 0));
        for (int side = 0; side < 2; side++)
            if (edges[i][side].a < edges[i][side].b)
                put_edge(s, p, &edges[i][side]);
        CUDA_CHECK(cudaEventRecord(p->bands, p->comm));
        CUDA_CHECK(cudaStreamWaitEvent(p->stream, p->bands, 0));
    }
    split_fence_out(s, a->stream);
}
/* [/page: rows_overlap] */
