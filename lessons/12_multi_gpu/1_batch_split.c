/* Step 1, split by batch: each GPU takes whole images of the batch and computes them
 * as one GPU would, with nothing to exchange. It pays only where the batch divides
 * well over the GPUs (one image leaves every GPU but the first idle). */
#include "steps.h"

/* [page: batch_split] */
void run_batch_split(const struct conv_args *a)
{
    struct split *s = &the_split;
    split_fence_in(s, a->stream);
    for (int i = 0; i < s->gpus; i++)
        if (split_slab_busy(&s->slab[i]))
            split_compute_slab(s, &s->slab[i], 0);
    split_fence_out(s, a->stream);
}
/* [/page: batch_split] */
