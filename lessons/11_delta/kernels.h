/* The GPU launchers of lesson 11, one file per idea. A call computes one frame: it
 * enqueues its kernels and copies on a->stream and leaves the frame's output in
 * a->out. The harness keeps out from one frame to the next, so a sparse variant
 * updates it in place. Every pointer is a device pointer; the layouts are problem.h's
 * (NHWC frames, K x R x S x C weights). */
#ifndef KERNELS_H
#define KERNELS_H

#include <stddef.h>

#include <cuda_runtime_api.h>

#include "problem.h"

#ifdef __cplusplus
extern "C" {
#endif

struct delta_args {
    int h, w, c, ksize;   /* frames h x w x c, a c -> c ksize x ksize layer */
    int frame_index;      /* position in the sequence; frame 0 is computed densely */
    const float *frame;   /* this frame's layer input, h x w x c */
    const float *weights; /* c x ksize x ksize x c */
    const float *bias;    /* c */
    float *out;           /* the output, h x w x c: the previous frame's on entry */
    /* The variant's memory across frames, *_state_bytes() bytes that the harness owns
     * for the whole sequence. Frame 0 writes every part that a later frame reads, so
     * it need not be cleared. */
    void *state;
    cudaStream_t stream;
    float threshold; /* a pixel's change is applied when max_c |x - x_ref| > threshold */
    int tile;        /* side of a tile in pixels, a multiple of DELTA_UNIT */
};

/* The shared memory per block of every variant's units (106,624 bytes at 7x7: above
 * what an RTX 30/40 allows). */
size_t delta_smem_bytes(int ksize);

/* 1_dense.cu: the layer recomputed on every frame, one block per 8x8-pixel unit and 64
 * output channels; its state is the arranged weights. */
size_t dense_state_bytes(const struct delta_args *a);
void launch_delta_dense(const struct delta_args *a);

/* 2_tile_mask.cu: after the threshold step, blocks whose output tile no changed input
 * tile reaches return at once (reached_units.cuh); the others recompute their unit
 * from x_ref. */
size_t tile_mask_state_bytes(const struct delta_args *a);
void launch_delta_tile_mask(const struct delta_args *a);

/* 3_delta_update.cu: the same skipping, but a reached unit adds conv(d), the layer
 * applied to the frame's applied delta, to the previous output (by linearity, no
 * bias). */
size_t delta_update_state_bytes(const struct delta_args *a);
void launch_delta_update(const struct delta_args *a);

/* 4_delta_compact.cu: the reached output tiles gathered into a list; one launch of as
 * many blocks as the GPU holds at once walks the list, so no block is started for a
 * tile with nothing to do. */
size_t delta_compact_state_bytes(const struct delta_args *a);
void launch_delta_compact(const struct delta_args *a);

/* The steps the three sparse variants share. */

/* A part of the state (delta_state_layout's offsets). */
static inline void *delta_state_at(const struct delta_args *a, size_t offset)
{
    return (char *)a->state + offset;
}

/* sequence.cu: one frame of sparse variant v. Frame 0: x_ref = frame and out = the
 * layer applied to it, densely. A later frame: the threshold step, then `update`, the
 * variant's way of bringing out up to date. */
typedef void (*sparse_update_fn)(const struct delta_args *a, const struct delta_state_layout *l);
void delta_sparse_frame(const struct delta_args *a, enum delta_variant v, sparse_update_fn update);

/* change_mask.cu: the threshold step with carry-over on one frame (problem.h): per
 * pixel, max_c |frame - x_ref| > threshold makes it active, copies the frame into
 * x_ref there and, with write_delta, stores d and pixel_active; tile_changed gets one
 * byte per input tile. */
void launch_change_mask(const struct delta_args *a, const struct delta_state_layout *l,
                        bool write_delta);

#ifdef __cplusplus
}
#endif

#endif
