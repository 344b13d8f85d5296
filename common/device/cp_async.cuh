/* Copies from global to shared memory that do not pass through registers (cp.async,
 * sm_80 and newer), so a kernel can keep many bytes in flight without spending
 * registers on them. Before sm_80 each copy is an ordinary load and store, so the same
 * kernel still runs (and is still correct) on a T4. For the kernels (.cu) only.
 * In every copy, !inside writes zeros (a source size of 0 means zero fill), and src
 * must be a valid address either way. */
#ifndef CP_ASYNC_CUH
#define CP_ASYNC_CUH

/* 4 bytes; .ca may keep the line in L1 for the neighbouring copies. */
static __device__ __forceinline__ void copy_4_async(float *dst, const float *src, bool inside)
{
#if __CUDA_ARCH__ >= 800
    asm volatile("cp.async.ca.shared.global [%0], [%1], 4, %2;\n" ::"r"(
                     (unsigned)__cvta_generic_to_shared(dst)),
                 "l"(src), "r"(inside ? 4 : 0)
                 : "memory");
#else
    *dst = inside ? __ldg(src) : 0.0f;
#endif
}

/* 16 aligned bytes; .cg keeps the stream out of L1. */
static __device__ __forceinline__ void copy_16_async(float *dst, const float *src, bool inside)
{
#if __CUDA_ARCH__ >= 800
    asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n" ::"r"(
                     (unsigned)__cvta_generic_to_shared(dst)),
                 "l"(src), "r"(inside ? 16 : 0)
                 : "memory");
#else
    *reinterpret_cast<float4 *>(dst) =
        inside ? __ldg(reinterpret_cast<const float4 *>(src)) : make_float4(0.0f, 0.0f, 0.0f, 0.0f);
#endif
}

/* Closes the group of copies this thread issued since the last call. */
static __device__ __forceinline__ void commit_copies(void)
{
#if __CUDA_ARCH__ >= 800
    asm volatile("cp.async.commit_group;\n" ::: "memory");
#endif
}

/* Waits until at most `pending` groups of this thread's copies are still in flight. */
template <int pending> static __device__ __forceinline__ void wait_copies(void)
{
#if __CUDA_ARCH__ >= 800
    asm volatile("cp.async.wait_group %0;\n" ::"n"(pending) : "memory");
#endif
}

#endif
