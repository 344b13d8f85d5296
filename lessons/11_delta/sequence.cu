/* Lesson 11: how a sparse variant walks a sequence. Its state holds the output so far
 * (y) and the input it stands for (x_ref). Frame 0 fills both densely; a later frame
 * runs the threshold step, then the variant's update of y. Every frame ends by copying
 * y into out, because the harness may hand out a fresh (poisoned) buffer each frame:
 * that copy reads and writes a whole frame, part of the floor under every sparse
 * variant, however little changed. */
#include "cuda_check.h"
#include "kernels.h"

extern "C" void delta_sparse_frame(const struct delta_args *a, enum delta_variant v,
                                   sparse_update_fn update)
{
    const struct delta_state_layout l = delta_state_layout(v, a->h, a->w, a->c, a->tile);
    const size_t bytes = (size_t)a->h * a->w * a->c * sizeof(float);
    float *y = (float *)delta_state_at(a, l.y);
    if (a->frame_index == 0) {
        CUDA_CHECK(cudaMemcpyAsync(delta_state_at(a, l.x_ref), a->frame, bytes,
                                   cudaMemcpyDeviceToDevice, a->stream));
        struct delta_args dense = *a;
        dense.out = y;
        launch_delta_dense(&dense);
    } else {
        /* Only the variants that convolve the change need it stored. */
        launch_change_mask(a, &l, v != DELTA_TILE_MASK);
        update(a, &l);
    }
    CUDA_CHECK(cudaMemcpyAsync(a->out, y, bytes, cudaMemcpyDeviceToDevice, a->stream));
}
