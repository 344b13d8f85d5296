/* Hopper's warpgroup MMA (PTX ISA, "Asynchronous Warpgroup Level Matrix Multiply-
 * Accumulate"): what every wgmma kernel needs whatever its types and tiles, for lesson
 * 08's wgmma steps and lesson 09's 1-bit one. A warpgroup (4 warps, 128 threads) issues
 * wgmma.m64nNkK asynchronously: B (and A, or A from registers) read from shared memory
 * through 64-bit descriptors, the product added into accumulators in the warpgroup's
 * registers; the warps go on, and wait for it (wgmma_wait) only when they need its
 * result, its registers or its shared memory back.
 *
 * wgmma exists in sm_90a code only (CONV_HAVE_WGMMA); elsewhere these compile to nothing
 * and the variants that use them never launch. For the kernels (.cu) only. */
#ifndef WGMMA_CUH
#define WGMMA_CUH

#include <stdint.h>

#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
#define CONV_HAVE_WGMMA 1
#define SM90A_ASM(...) asm volatile(__VA_ARGS__) /* an instruction of sm_90a code only */
#else
#define CONV_HAVE_WGMMA 0
#define SM90A_ASM(...) ((void)0)
#endif

/* The compute capability x 10 that this file's sm_90a code was built for: 90 in the
 * objects a lesson compiles for 90a (add_wgmma_objects in cmake/lessons.cmake defines
 * CONV_WGMMA_BUILT there), 0 elsewhere. A lesson's code_cc function (gpu_needs.h)
 * returns it from one of those objects. */
static inline int wgmma_built_cc(void)
{
#ifdef CONV_WGMMA_BUILT
    return 90;
#else
    return 0;
#endif
}

/* A shared-memory operand for wgmma is a 64-bit descriptor (PTX ISA, "Matrix
 * Descriptor Format"); its fields, addresses and offsets in 16-byte units: */
#define DESC_UNIT_BYTES 16
#define DESC_START_SHIFT 0          /* bits 0-13: the tile's shared-memory address */
#define DESC_START_LIMIT (1u << 18) /* 14 bits of 16-byte units: 256 KB */
#define DESC_LEADING_SHIFT 16       /* bits 16-29: the leading dimension's byte offset */
#define DESC_STRIDE_SHIFT 32        /* bits 32-45: from one 8-row group to the next */
#define DESC_SWIZZLE_SHIFT 62       /* bits 62-63: 0 none, 1 128-byte, 2 64-byte, 3 32-byte */
#define DESC_SWIZZLE_NONE 0
#define DESC_SWIZZLE_128B 1
#define DESC_SWIZZLE_32B 3

/* The descriptor of a tile at `tile` in shared memory: its leading and stride byte
 * offsets (multiples of 16) and its swizzle mode. */
static __device__ __forceinline__ uint64_t smem_descriptor(const void *tile, uint32_t leading_bytes,
                                                           uint32_t stride_bytes, uint32_t swizzle)
{
    const uint32_t address = (uint32_t)__cvta_generic_to_shared(tile);
    const uint64_t start = address % DESC_START_LIMIT / DESC_UNIT_BYTES;
    return start << DESC_START_SHIFT |
           (uint64_t)(leading_bytes / DESC_UNIT_BYTES) << DESC_LEADING_SHIFT |
           (uint64_t)(stride_bytes / DESC_UNIT_BYTES) << DESC_STRIDE_SHIFT |
           (uint64_t)swizzle << DESC_SWIZZLE_SHIFT;
}

static __device__ __forceinline__ void wgmma_fence(void)
{
    SM90A_ASM("wgmma.fence.sync.aligned;\n" ::: "memory");
}

static __device__ __forceinline__ void wgmma_commit(void)
{
    SM90A_ASM("wgmma.commit_group.sync.aligned;\n" ::: "memory");
}

/* Waits until at most `pending` committed groups of this warpgroup are in flight. */
template <int pending> static __device__ __forceinline__ void wgmma_wait(void)
{
    SM90A_ASM("wgmma.wait_group.sync.aligned %0;\n" ::"n"(pending) : "memory");
}

/* The accumulators are written by the tensor cores behind the compiler's back: an
 * empty asm that "reads and writes" each one keeps the compiler from moving an access
 * to them across a fence or a wait (CUTLASS's warpgroup_fence_operand). */
template <int N> static __device__ __forceinline__ void pin_accumulators(float (&d)[N])
{
#pragma unroll
    for (int i = 0; i < N; i++)
        asm volatile("" : "+f"(d[i])::"memory");
}

/* The same for s32 accumulators (the 1-bit forms). */
template <int N> static __device__ __forceinline__ void pin_accumulators(int (&d)[N])
{
#pragma unroll
    for (int i = 0; i < N; i++)
        asm volatile("" : "+r"(d[i])::"memory");
}

/* Makes this thread's shared-memory stores visible to the async proxy that wgmma reads
 * through. */
static __device__ __forceinline__ void fence_async_proxy(void)
{
    SM90A_ASM("fence.proxy.async.shared::cta;\n" ::: "memory");
}

/* Gives up (dec) or asks for (inc) registers, per thread of the warpgroup, down or up to
 * the count named (PTX ISA, "setmaxnreg"). Every warp of the warpgroup executes it. */
template <int count> static __device__ __forceinline__ void registers_down(void)
{
    SM90A_ASM("setmaxnreg.dec.sync.aligned.u32 %0;\n" ::"n"(count));
}

template <int count> static __device__ __forceinline__ void registers_up(void)
{
    SM90A_ASM("setmaxnreg.inc.sync.aligned.u32 %0;\n" ::"n"(count));
}

#endif
