/* Lesson 11's delta convolution in libconv_torch.so's C ABI (conv_torch_status.h): one
 * C -> C conv layer (odd ksize up to 7, "same" zero padding, bias) applied to the frames
 * of a video one at a time, recomputing only where the input changed
 * (lessons/11_delta/problem.h, docs/11_delta.md).
 *
 * Frames and the output are h x w x c float32 (NHWC, batch 1), weights c x k x k x c
 * (KRSC), the bias c floats. The caller keeps, for the whole sequence, `out` (the
 * output so far, updated in place) and `state` (plan's state_bytes: the arranged
 * weights and x_ref, the input the output stands for, with the variant's other parts).
 * The first frame fills both densely; on every later frame a pixel whose largest
 * channel change since x_ref passes `threshold` is applied and becomes x_ref there, and
 * a smaller change is carried over until it does (so |out - conv(frame)| stays below
 * threshold * max_co sum |w|); only the tiles of `tile` x `tile` pixels that an applied
 * change reaches are updated.
 *
 *   variant  0 dense (every frame recomputed), 1 tile_mask (reached tiles recomputed
 *            from x_ref), 2 delta_update (conv of the change added to them), 3
 *            delta_compact (the same from a list of reached tiles) (enum delta_variant)
 *
 * The weights are read on the first frame alone: a sequence with new weights starts
 * with a first frame. */
#ifndef DELTA_CONV2D_H
#define DELTA_CONV2D_H

#include <stddef.h>

#include "conv_torch_status.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The kernel ("11_delta/delta_update"; a static string) and the bytes of 16-byte
 * aligned device state a sequence keeps; no GPU needed (the frame's call checks that the
 * GPU runs the kernel). */
int conv_torch_delta_plan(int h, int w, int c, int ksize, int tile, int variant,
                          const char **kernel, size_t *state_bytes, char *err, size_t err_size);

/* One frame on `stream` (a cudaStream_t); first is 1 for a sequence's first frame. frame,
 * weights, out and state 16-byte aligned. */
int conv_torch_delta_frame(int device, void *stream, const float *frame, const float *weights,
                           const float *bias, float *out, void *state, size_t state_bytes, int h,
                           int w, int c, int ksize, int tile, float threshold, int first,
                           int variant, char *err, size_t err_size);

#ifdef __cplusplus
}
#endif

#endif
