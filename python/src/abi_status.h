/* How the C ABI's functions fail (conv_torch_status.h): a status and one line of text,
 * and the checks every launch makes before it reaches a launcher that would exit the
 * process on a CUDA error (cuda_check.h). */
#ifndef ABI_STATUS_H
#define ABI_STATUS_H

#include <stdbool.h>
#include <stddef.h>

#include <cuda_runtime_api.h>

#include "conv_torch_status.h"

/* cudaMalloc's alignment (PyTorch's allocator gives as much): the kernels' 16-byte
 * loads and stores rely on it. */
#define BASE_ALIGNMENT 16

/* Returns status, with the printf-style line in err (err_size bytes; err may be NULL). */
int abi_fail(int status, char *err, size_t err_size, const char *format, ...)
    __attribute__((format(printf, 4, 5)));
/* CONV_TORCH_CUDA_ERROR: "CUDA: <call> failed: <CUDA's words>". */
int abi_cuda_fail(cudaError_t e, const char *call, char *err, size_t err_size);
bool abi_aligned(const void *p, size_t bytes);
/* CONV_TORCH_BAD_ARGUMENT unless `memory` (`bytes` long) holds the `needed` bytes,
 * BASE_ALIGNMENT aligned, that `kernel` asks of the caller as its `what` ("scratch",
 * "state"); CONV_TORCH_OK when it needs none. */
int abi_check_memory(const char *kernel, const char *what, size_t needed, const void *memory,
                     size_t bytes, char *err, size_t err_size);
/* CONV_TORCH_BAD_ARGUMENT unless each of the `count` buffers that the kernels load and
 * store as whole float4s is BASE_ALIGNMENT aligned and `floats`, which they read as floats,
 * is aligned to its floats; the line names them as `names` and `floats_name`. */
int abi_check_float4_aligned(const void *const buffers[], size_t count, const char *names,
                             const float *floats, const char *floats_name, char *err,
                             size_t err_size);
/* CONV_TORCH_CUDA_ERROR for an error an earlier call left behind, which the launchers'
 * CUDA_CHECK would take for their own and exit on; else CONV_TORCH_OK. */
int abi_check_earlier_cuda_error(char *err, size_t err_size);

#endif
