/* The build's code for the current GPU, read from a kernel's attributes: no launch, no
 * allocation, so it may run while a stream captures a CUDA graph. The lessons' kernels
 * are compiled for the same architectures (CMAKE_CUDA_ARCHITECTURES), except lesson 08's
 * wgmma file, which says for itself (wgmma_code_cc). */
#include <cuda_runtime_api.h>

#include "build_code.h"

__global__ static void build_code_probe(void)
{
}

extern "C" int build_code_cc(void)
{
    cudaFuncAttributes attributes;
    if (cudaFuncGetAttributes(&attributes, build_code_probe) != cudaSuccess) {
        cudaGetLastError(); /* no kernel image for this GPU, not sticky: clear it */
        return 0;
    }
    /* The virtual architecture the running code was compiled from, as CUB reads it. */
    return attributes.ptxVersion;
}
