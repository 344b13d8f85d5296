/* Lesson 11: how a sparse variant walks a sequence. Its state holds the output so far
 * (y) and the input it stands for (x_ref); frame 0 fills both densely, and every frame
 * ends by copying y into out, because the harness may hand out a fresh (poisoned)
 * buffer each frame. That copy reads and writes a whole frame: the floor under every
 * sparse variant, however little changed. */
#include "cuda_check.h"
#include "kernels.h"

static float *state_part(const struct delta_args *a, size_t offset)
{
    return (float *)((char *)a->state + offset);
}

extern "C" void delta_first_frame(const struct delta_args *a, const struct delta_state_layout *l)
{
    const size_t bytes = (size_t)a->h * a->w * a->c * sizeof(float);
    CUDA_CHECK(cudaMemcpyAsync(state_part(a, l->x_ref), a->frame, bytes, cudaMemcpyDeviceToDevice,
                               a->stream));
    struct delta_args dense = *a;
    dense.out = state_part(a, l->y);
    launch_delta_dense(&dense);
}

extern "C" void delta_copy_out(const struct delta_args *a, const struct delta_state_layout *l)
{
    const size_t bytes = (size_t)a->h * a->w * a->c * sizeof(float);
    CUDA_CHECK(
        cudaMemcpyAsync(a->out, state_part(a, l->y), bytes, cudaMemcpyDeviceToDevice, a->stream));
}
