/* libconv_torch.so: the course's convolution kernels behind a plain C ABI, for Python's
 * ctypes (python/conv_lessons/_library.py) or any other caller. The problem is the
 * lessons' (conv_problem.h): stride 1, "same" zero padding, an odd square filter of size
 * 1..MAX_KSIZE, cross-correlation, one bias value per output channel. The other ops have
 * headers of their own (covariance.h, delta_conv2d.h).
 *
 *   dtype   0 fp32, 1 tf32, 2 3xtf32 (float32 storage), 3 fp16, 4 bf16, 5 binary (enum dtype)
 *   layout  0 NCHW input and output, KCRS weights; 1 NHWC, KRSC (enum layout)
 *
 * fp32 runs in NCHW (lesson 05 for one channel in and out, lesson 07 otherwise); tf32,
 * 3xtf32, fp16 and bf16 run in NHWC on tensor cores (lesson 08). binary is lesson 09's
 * layer in NHWC: float32 input and weights whose signs (+1 for >= 0) are the layer's
 * values, packed 32 channels to a word inside the call, and the float32 output
 * scale[k] * sum x * w + bias[k] (docs/09_binary.md). Pointers are device pointers on
 * `device`; the output is in the input's dtype (float32 for tf32, 3xtf32 and binary) and
 * layout; the bias is cout float32 values whatever the dtype, or NULL.
 *
 * `name` picks a kernel by its name, as the plan reports it ("04_shared_tiling/tile_in";
 * conv_torch_conv2d_kernel lists them); NULL picks the fastest for the problem. Lessons
 * 02 and 04's kernels, seed 000's naive and tiled ones, run only when named.
 *
 * Every function returns CONV_TORCH_OK or a status (conv_torch_status.h) with one line in
 * err (err_size bytes). Kernels are enqueued on `stream` and not waited for. */
#ifndef CONV_TORCH_H
#define CONV_TORCH_H

#include <stddef.h>

#include "conv_torch_status.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Which kernel conv_torch_conv2d would run on `device` for this problem (its lesson and
 * variant, "07_multichannel/implicit_gemm_async"; a static string) and the bytes of
 * device scratch memory it needs, which the caller allocates (16-byte aligned). */
int conv_torch_conv2d_plan(int device, const char *name, int n, int cin, int cout, int h, int w,
                           int ksize, int dtype, int layout, const char **kernel,
                           size_t *scratch_bytes, char *err, size_t err_size);

/* [page: abi] */
/* output = conv2d(input, weights) + bias (times scale for binary), enqueued on stream (a
 * cudaStream_t; NULL is the legacy default stream). output must be 16-byte aligned, as
 * cudaMalloc's and PyTorch's allocations are; scratch holds at least the plan's
 * scratch_bytes; scale is cout float32 values for binary, NULL for every other dtype. */
int conv_torch_conv2d(int device, void *stream, const char *name, const void *input,
                      const void *weights, const float *bias, const float *scale, void *output,
                      void *scratch, size_t scratch_bytes, int n, int cin, int cout, int h, int w,
                      int ksize, int dtype, int layout, char *err, size_t err_size);
/* [/page: abi] */

/* The i-th kernel's name, its dtype and layout codes; NULL past the last (no GPU
 * needed). */
const char *conv_torch_conv2d_kernel(int i, int *dtype, int *layout);

#ifdef __cplusplus
}
#endif

#endif
