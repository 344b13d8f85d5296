/* Step 4, what NCCL costs: the blocking exchange of step 2 with the CUDA runtime's
 * peer copies in place of NCCL's send and receive. Each receiving GPU pulls its halo
 * from the GPUs that own it, on its own stream, over NVLink (or PCIe) directly. */
#include "steps.h"

/* [page: peer_copy] */
static void copy_piece(const struct split *s, int from, int to, int image, int row, int rows,
                       void *context)
{
    (void)context;
    const struct slab *f = &s->slab[from], *t = &s->slab[to];
    CUDA_CHECK(cudaSetDevice(t->device));
    CUDA_CHECK(cudaMemcpyPeerAsync(split_input_row(s, t, image, row), t->device,
                                   split_input_row(s, f, image, row), f->device,
                                   split_row_bytes(s, rows, s->shape.cin), t->stream));
}

void run_peer_copy(const struct conv_args *a)
{
    struct split *s = &the_split;
    split_fence_in(s, a->stream);
    split_for_each_halo_piece(s, copy_piece, NULL);
    for (int i = 0; i < s->gpus; i++)
        if (split_slab_busy(&s->slab[i]))
            split_compute_slab(s, &s->slab[i], 0);
    split_fence_out(s, a->stream);
}
/* [/page: peer_copy] */
