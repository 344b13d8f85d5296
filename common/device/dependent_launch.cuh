/* Programmatic dependent launch (compute capability 9.0 and later): a kernel queued
 * behind another on the same stream may start while the first is still running, do the
 * work that does not need the first kernel's results (index math, loads of its own
 * inputs), and then wait for it. Between two short kernels this hides the second one's
 * launch and the first one's tail. For the kernels (.cu) only.
 *
 * The first kernel calls let_dependent_grid_start() (when all of its blocks have, the
 * second may be scheduled on the SMs left free); the second calls
 * wait_for_previous_grid() before it reads anything the first one writes (it returns
 * when the first grid has finished and its writes are visible) and is launched with
 * launch_dependent(). Where the code was compiled for an older architecture, or runs
 * on an older GPU, both calls do nothing and launch_dependent() launches normally: the
 * stream orders the two kernels as usual. */
#ifndef DEPENDENT_LAUNCH_CUH
#define DEPENDENT_LAUNCH_CUH

#include "cuda_check.h"

__device__ __forceinline__ void let_dependent_grid_start()
{
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
    asm volatile("griddepcontrol.launch_dependents;" ::: "memory");
#endif
}

__device__ __forceinline__ void wait_for_previous_grid()
{
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
    asm volatile("griddepcontrol.wait;" ::: "memory");
#endif
}

/* kernel<<<grid, block, 0, stream>>>(args...), allowed to overlap the kernel before it
 * on the stream when the code that runs was compiled for 9.0 or later (the PTX the
 * driver runs says which: only then does the kernel hold the wait above). */
template <typename... Params, typename... Args>
void launch_dependent(void (*kernel)(Params...), dim3 grid, dim3 block, cudaStream_t stream,
                      Args... args)
{
    cudaFuncAttributes f;
    CUDA_CHECK(cudaFuncGetAttributes(&f, kernel));
    cudaLaunchAttribute overlap;
    overlap.id = cudaLaunchAttributeProgrammaticStreamSerialization;
    overlap.val.programmaticStreamSerializationAllowed = 1;
    cudaLaunchConfig_t config = {};
    config.gridDim = grid;
    config.blockDim = block;
    config.stream = stream;
    config.attrs = &overlap;
    config.numAttrs = f.ptxVersion >= 90 ? 1 : 0;
    CUDA_CHECK(cudaLaunchKernelEx(&config, kernel, (Params)args...));
}

#endif
