#include "abi_status.h"

#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>

int abi_fail(int status, char *err, size_t err_size, const char *format, ...)
{
    if (err && err_size > 0) {
        va_list args;
        va_start(args, format);
        vsnprintf(err, err_size, format, args);
        va_end(args);
    }
    return status;
}

int abi_cuda_fail(cudaError_t e, const char *call, char *err, size_t err_size)
{
    return abi_fail(CONV_TORCH_CUDA_ERROR, err, err_size, "CUDA: %s failed: %s", call,
                    cudaGetErrorString(e));
}

bool abi_aligned(const void *p, size_t bytes)
{
    return (uintptr_t)p % bytes == 0;
}

int abi_check_memory(const char *kernel, const char *what, size_t needed, const void *memory,
                     size_t bytes, char *err, size_t err_size)
{
    if (needed == 0 || (memory && bytes >= needed && abi_aligned(memory, BASE_ALIGNMENT)))
        return CONV_TORCH_OK;
    return abi_fail(CONV_TORCH_BAD_ARGUMENT, err, err_size,
                    "%s needs %zu bytes of %d-byte aligned %s; got %zu at %p", kernel, needed,
                    BASE_ALIGNMENT, what, bytes, memory);
}

int abi_check_float4_aligned(const void *const buffers[], size_t count, const char *names,
                             const float *floats, const char *floats_name, char *err,
                             size_t err_size)
{
    bool aligned = abi_aligned(floats, sizeof *floats);
    for (size_t i = 0; i < count; i++)
        aligned = aligned && abi_aligned(buffers[i], BASE_ALIGNMENT);
    if (aligned)
        return CONV_TORCH_OK;
    return abi_fail(CONV_TORCH_BAD_ARGUMENT, err, err_size,
                    "%s must be %d-byte aligned (allocate each on its own), %s aligned to its "
                    "floats",
                    names, BASE_ALIGNMENT, floats_name);
}

int abi_check_earlier_cuda_error(char *err, size_t err_size)
{
    const cudaError_t earlier = cudaGetLastError();
    return earlier == cudaSuccess ? CONV_TORCH_OK
                                  : abi_cuda_fail(earlier, "an earlier CUDA call", err, err_size);
}
