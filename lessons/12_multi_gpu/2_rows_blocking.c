/* Step 2, split by rows: each GPU takes a band of rows of every image. An output row
 * reads ksize / 2 rows above and below it, so a band's first and last rows need rows
 * its neighbours own: its halo. Before computing, every GPU sends the rows its
 * neighbours need and receives its own halo, through NCCL, then computes its band. */
#include "steps.h"

struct exchange {
    bool comm; /* on the slabs' high-priority streams, else their compute streams */
};

/* [page: halo_send_recv] */
static void send_recv(const struct split *s, int from, int to, int image, int row, int rows,
                      void *context)
{
    const struct exchange *x = context;
    const struct slab *f = &s->slab[from], *t = &s->slab[to];
    const size_t count = split_row_bytes(s, rows, s->shape.cin) / sizeof(short);
    NCCL_CHECK(ncclSend(split_input_row(s, f, image, row), count, ncclFloat16, to,
                        s->comm[from], x->comm ? f->comm : f->stream));
    NCCL_CHECK(ncclRecv(split_input_row(s, t, image, row), count, ncclFloat16, from,
                        s->comm[to], x->comm ? t->comm : t->stream));
}

/* One group: NCCL starts every send and receive together. Issued one by one, the
 * first send would wait for a receive that is never posted. */
void split_exchange_nccl(const struct split *s, bool comm)
{
    struct exchange x = {comm};
    NCCL_CHECK(ncclGroupStart());
    split_for_each_halo_piece(s, send_recv, &x);
    NCCL_CHECK(ncclGroupEnd());
}
/* [/page: halo_send_recv] */

/* [page: rows_blocking] */
void run_rows_blocking(const struct conv_args *a)
{
    struct split *s = &the_split;
    split_fence_in(s, a->stream);
    split_exchange_nccl(s, false);
    for (int i = 0; i < s->gpus; i++)
        if (split_slab_busy(&s->slab[i]))
            split_compute_slab(s, &s->slab[i], 0);
    split_fence_out(s, a->stream);
}
/* [/page: rows_blocking] */
