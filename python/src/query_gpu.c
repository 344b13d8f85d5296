#include "query_gpu.h"

#include <cuda_runtime_api.h>

#include "abi_status.h"
#include "build_code.h"

int query_gpu(int device, struct gpu_info *g, char *err, size_t err_size)
{
    int count = 0;
    cudaError_t e = cudaGetDeviceCount(&count);
    if (e != cudaSuccess)
        return abi_cuda_fail(e, "cudaGetDeviceCount", err, err_size);
    if (device < 0 || device >= count)
        return abi_fail(CONV_TORCH_BAD_ARGUMENT, err, err_size,
                        "device %d: CUDA sees %d device(s), 0 to %d", device, count, count - 1);
    if ((e = cudaSetDevice(device)) != cudaSuccess)
        return abi_cuda_fail(e, "cudaSetDevice", err, err_size);
    int major, minor, smem;
    if ((e = cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, device)) ||
        (e = cudaDeviceGetAttribute(&minor, cudaDevAttrComputeCapabilityMinor, device)) ||
        (e = cudaDeviceGetAttribute(&smem, cudaDevAttrMaxSharedMemoryPerBlockOptin, device)))
        return abi_cuda_fail(e, "cudaDeviceGetAttribute", err, err_size);
    *g = (struct gpu_info){.id = device,
                           .cc_major = major,
                           .cc_minor = minor,
                           .smem_per_block = (size_t)smem,
                           .code_cc = build_code_cc()};
    return CONV_TORCH_OK;
}

int check_gpu_runs(int device, const char *kernel, const struct gpu_needs *needs,
                   const struct conv_shape *s, char *err, size_t err_size)
{
    struct gpu_info g;
    const int status = query_gpu(device, &g, err, err_size);
    if (status != CONV_TORCH_OK)
        return status;
    char unmet[256];
    const char *reason = gpu_needs_unmet(needs, &g, s, unmet, sizeof unmet);
    return reason ? abi_fail(CONV_TORCH_UNSUPPORTED, err, err_size, "%s: %s", kernel, reason)
                  : CONV_TORCH_OK;
}
