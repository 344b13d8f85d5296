/* Which code of the build runs on this GPU. The driver picks the machine code built
 * for the GPU's architecture or, when there is none, compiles the newest PTX the GPU
 * can run: a build for 75-virtual runs sm_75's code paths on an H100. A kernel sees
 * which as __CUDA_ARCH__; this one-thread kernel reports it. */
#include "cuda_check.h"
#include "gpu_info.h"

__global__ static void code_cc_probe(int *cc)
{
#ifdef __CUDA_ARCH__
    *cc = __CUDA_ARCH__ / 10;
#endif
}

extern "C" int gpu_code_cc(void)
{
    /* No code for this GPU: the attributes say so before any launch. */
    cudaFuncAttributes attributes;
    if (cudaFuncGetAttributes(&attributes, code_cc_probe) != cudaSuccess) {
        cudaGetLastError(); /* not sticky: clear it */
        return 0;
    }
    int *cc, value = 0;
    CUDA_CHECK(cudaMalloc(&cc, sizeof *cc));
    CUDA_CHECK(cudaMemset(cc, 0, sizeof *cc));
    code_cc_probe<<<1, 1>>>(cc);
    CUDA_CHECK_LAUNCH();
    CUDA_CHECK(cudaMemcpy(&value, cc, sizeof value, cudaMemcpyDeviceToHost));
    CUDA_CHECK(cudaFree(cc));
    return value;
}
