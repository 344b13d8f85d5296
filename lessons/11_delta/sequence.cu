/* Lesson 11: how a sparse variant walks a sequence. The output so far is `out`
 * itself, which the harness keeps from one frame to the next; the state holds the
 * arranged weights and x_ref, the input the output stands for. Frame 0 fills both
 * densely; a later frame runs the threshold step, then the variant's update of out. */
#include "cuda_check.h"
#include "kernels.h"

extern "C" void delta_sparse_frame(const struct delta_args *a, enum delta_variant v,
                                   sparse_update_fn update)
{
    /* [page: sparse-frame] */
    const struct delta_state_layout l = delta_state_layout(v, a->h, a->w, a->c, a->ksize, a->tile);
    if (a->frame_index == 0) {
        CUDA_CHECK(cudaMemcpyAsync(delta_state_at(a, l.x_ref), a->frame,
                                   (size_t)a->h * a->w * a->c * sizeof(float),
                                   cudaMemcpyDeviceToDevice, a->stream));
        launch_delta_dense(a); /* it arranges the weights, first in every state */
        return;
    }
    /* Only the variants that convolve the change need it stored. */
    launch_change_mask(a, &l, v != DELTA_TILE_MASK);
    update(a, &l);
    /* [/page: sparse-frame] */
}
