/* libconv_torch.so: the course's fastest convolution kernels behind a plain C ABI, for
 * Python's ctypes (python/conv_lessons/_library.py) or any other caller. The problem is
 * the lessons' (conv_problem.h): stride 1, "same" zero padding, an odd square filter of
 * size 1..MAX_KSIZE, cross-correlation, one bias value per output channel.
 *
 *   dtype   0 fp32, 1 tf32, 2 3xtf32 (float32 storage), 3 fp16, 4 bf16 (enum dtype)
 *   layout  0 NCHW input and output, KCRS weights; 1 NHWC, KRSC (enum layout)
 *
 * fp32 runs in NCHW (lesson 05 for one channel in and out, lesson 07 otherwise); tf32,
 * 3xtf32, fp16 and bf16 run in NHWC on tensor cores (lesson 08). Pointers are device
 * pointers on `device`; the output is in the input's dtype (float32 for tf32 and 3xtf32)
 * and layout; the bias is cout float32 values whatever the dtype, or NULL.
 *
 * Every function returns CONV_TORCH_OK or a status with one line in err (err_size bytes)
 * that says what was wrong; none exits the process on a bad argument or a GPU that
 * cannot run the problem. Kernels are enqueued on `stream` and not waited for. */
#ifndef CONV_TORCH_H
#define CONV_TORCH_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

enum conv_torch_status {
    CONV_TORCH_OK = 0,
    CONV_TORCH_BAD_ARGUMENT = 1, /* a size, code or pointer this ABI does not take */
    CONV_TORCH_UNSUPPORTED = 2,  /* a valid problem that no kernel of the course runs here */
    CONV_TORCH_CUDA_ERROR = 3,   /* the CUDA runtime failed (no driver, a sticky error, ...) */
};

/* Which kernel conv_torch_conv2d would run on `device` for this problem (its lesson and
 * variant, "07_multichannel/implicit_gemm_async"; a static string) and the bytes of
 * device scratch memory it needs, which the caller allocates (16-byte aligned). */
int conv_torch_conv2d_plan(int device, int n, int cin, int cout, int h, int w, int ksize, int dtype,
                           int layout, const char **kernel, size_t *scratch_bytes, char *err,
                           size_t err_size);

/* output = conv2d(input, weights) + bias, enqueued on stream (a cudaStream_t; NULL is
 * the legacy default stream). output must be 16-byte aligned, as cudaMalloc's and
 * PyTorch's allocations are; scratch holds at least the plan's scratch_bytes. */
int conv_torch_conv2d(int device, void *stream, const void *input, const void *weights,
                      const float *bias, void *output, void *scratch, size_t scratch_bytes, int n,
                      int cin, int cout, int h, int w, int ksize, int dtype, int layout, char *err,
                      size_t err_size);

#ifdef __cplusplus
}
#endif

#endif
