/* Copies from global to shared memory that do not pass through registers (cp.async,
 * sm_80 and newer), so a kernel can keep many bytes in flight without spending
 * registers on them. Before sm_80 each copy is an ordinary load and store, so the same
 * kernel still runs (and is still correct) on a T4. For the kernels (.cu) only.
 * In every copy, !inside writes zeros (a source size of 0 means zero fill), and src
 * must be a valid address either way. */
#ifndef CP_ASYNC_CUH
#define CP_ASYNC_CUH

/* One copy of sizeof(T) bytes with cache operator `cache` ("ca" or "cg"): cp.async from
 * sm_80, a load and a store before. A macro: the operator is part of the instruction. */
#if __CUDA_ARCH__ >= 800
#define COPY_ASYNC(cache, T, dst, src, inside)                                                     \
    asm volatile("cp.async." cache ".shared.global [%0], [%1], %2, %3;\n" ::"r"(                   \
                     (unsigned)__cvta_generic_to_shared(dst)),                                     \
                 "l"(src), "n"(sizeof(T)), "r"((inside) ? (int)sizeof(T) : 0)                      \
                 : "memory")
#else
#define COPY_ASYNC(cache, T, dst, src, inside)                                                     \
    (*reinterpret_cast<T *>(dst) = (inside) ? __ldg(reinterpret_cast<const T *>(src)) : T{})
#endif

/* 4 bytes; .ca may keep the line in L1 for the neighbouring copies. */
static __device__ __forceinline__ void copy_4_async(float *dst, const float *src, bool inside)
{
    COPY_ASYNC("ca", float, dst, src, inside);
}

/* 16 aligned bytes; .cg keeps the stream out of L1. */
static __device__ __forceinline__ void copy_16_async(float *dst, const float *src, bool inside)
{
    COPY_ASYNC("cg", float4, dst, src, inside);
}
#undef COPY_ASYNC

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
