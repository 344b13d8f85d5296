/* Hopper's asynchronous pipeline, one short wrapper per instruction, for the TMA
 * kernels of lesson 08 (steps 6 to 17) and lesson 09 (step 11) (PTX ISA: "mbarrier",
 * "cp.async.bulk.tensor"; CUDA driver API: "Tensor Map Object Management").
 *
 *   tensor map  128 bytes the host encodes once per launch: a global tensor's base
 *               address, sizes and strides, the box one copy moves, and the swizzle the
 *               box gets in shared memory. The kernel receives it as a __grid_constant__
 *               parameter and names it by address.
 *   TMA load    cp.async.bulk.tensor: ONE thread asks the Tensor Memory Accelerator for
 *               a whole box at some coordinates. Parts of the box outside the tensor
 *               (negative coordinates included) arrive as zeros. No registers, no
 *               address arithmetic per element, no other thread involved.
 *   im2col      a TMA load of another mode (lesson 09): `pixels` consecutive output
 *               pixels of an NHWC tensor, walked along W, then H, then N, each shifted
 *               by one filter tap (the offsets); a shifted pixel outside the image
 *               arrives as zeros, so a box is one tap's rows of an implicit GEMM's A.
 *   mbarrier    a 64-bit counter in shared memory with a phase bit. A phase completes
 *               when the expected number of threads has arrived AND the bytes announced
 *               by arrive.expect_tx have landed (the TMA unit counts them down); then
 *               the phase bit flips and waiters on that phase's parity go on.
 *   cluster     blocks launched together on neighbouring SMs (lesson 08's step 17: two)
 *               that can reach each other's shared memory and mbarriers; a multicast
 *               TMA load writes one box into each of them, and counts its bytes down on
 *               each one's mbarrier at the same offset.
 *
 * The device wrappers exist on sm_90 and newer; the TMA kernels are built for sm_90a
 * only and never launched elsewhere. For the kernels (.cu) only. */
#ifndef TMA_PIPELINE_CUH
#define TMA_PIPELINE_CUH

#include <cuda.h> /* CUtensorMap and the encoder's types only: nothing links libcuda */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "cuda_check.h"

#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
#define TMA_PIPELINE_DEVICE 1
#else
#define TMA_PIPELINE_DEVICE 0
#endif

/* Where a walk through a ring of STAGES buffers stands: step t of the walk uses stage
 * t % STAGES in round t / STAGES, and `phase` is that round's parity, the one its
 * mbarriers complete with (it flips each time the ring wraps). Whoever loads a ring and
 * whoever reads it each keep one and advance it once per step. */
template <int STAGES> struct ring_position {
    int stage = 0;
    int phase = 0;

    __device__ __forceinline__ void advance()
    {
        if (++stage == STAGES) {
            stage = 0;
            phase ^= 1;
        }
    }

    /* `steps` steps on at once, for a reader that lets others' steps go by. */
    __device__ __forceinline__ void skip(int steps)
    {
        stage += steps;
        phase ^= stage / STAGES & 1;
        stage %= STAGES;
    }
};

static __device__ __forceinline__ uint32_t smem_address(const void *p)
{
    return (uint32_t)__cvta_generic_to_shared(p);
}

/* An mbarrier whose phases each wait for `count` arrivals (plus any announced bytes). */
static __device__ __forceinline__ void barrier_init(uint64_t *bar, uint32_t count)
{
#if TMA_PIPELINE_DEVICE
    asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;\n" ::"r"(smem_address(bar)), "r"(count)
                 : "memory");
#endif
}

/* After the inits, before the __syncthreads that publishes them: orders this thread's
 * mbarrier.init before the other threads' and the TMA unit's use of the barriers.
 * fence.mbarrier_init covers the threads; the proxy fence also orders the writes for the
 * async proxy, as the CUDA programming guide's TMA example does. */
static __device__ __forceinline__ void barrier_init_fence(void)
{
#if TMA_PIPELINE_DEVICE
    asm volatile("fence.mbarrier_init.release.cluster;\n"
                 "fence.proxy.async.shared::cta;\n" ::
                     : "memory");
#endif
}

/* One arrival that also announces `bytes` more bytes for the current phase: the phase
 * cannot complete before the TMA loads of those bytes have landed. */
static __device__ __forceinline__ void barrier_expect_bytes(uint64_t *bar, uint32_t bytes)
{
#if TMA_PIPELINE_DEVICE
    asm volatile(
        "mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;\n" ::"r"(smem_address(bar)),
        "r"(bytes)
        : "memory");
#endif
}

/* One arrival, with release semantics: this thread's earlier work is visible to
 * whoever then waits for the phase. */
static __device__ __forceinline__ void barrier_arrive(uint64_t *bar)
{
#if TMA_PIPELINE_DEVICE
    asm volatile("mbarrier.arrive.shared::cta.b64 _, [%0];\n" ::"r"(smem_address(bar)) : "memory");
#endif
}

/* The block's rank in its cluster (0 where the launch has no clusters). */
static __device__ __forceinline__ uint32_t cluster_rank(void)
{
    uint32_t rank = 0;
#if TMA_PIPELINE_DEVICE
    asm volatile("mov.u32 %0, %%cluster_ctarank;\n" : "=r"(rank));
#endif
    return rank;
}

/* Every thread of every block of the cluster waits here for all the others; what each
 * did before is visible to all after (the mbarriers' inits at the start, the last
 * remote arrivals and multicast loads at the end, before a block's shared memory goes). */
static __device__ __forceinline__ void cluster_sync(void)
{
#if TMA_PIPELINE_DEVICE
    asm volatile("barrier.cluster.arrive.release;\n"
                 "barrier.cluster.wait.acquire;\n" ::
                     : "memory");
#endif
}

/* One arrival on the mbarrier at bar's offset in block `rank` of the cluster (this
 * block's own included). The default semantics, release at the block's scope, as
 * barrier_arrive's: a consumer giving a stage back has finished reading it (its wgmma
 * wait), and .release.cluster would cost a fence of the whole GPU's memory per arrival
 * (MEMBAR.ALL.GPU in the machine code; step 17 ran 1.6 times slower with it). */
static __device__ __forceinline__ void barrier_arrive_remote(uint64_t *bar, uint32_t rank)
{
#if TMA_PIPELINE_DEVICE
    asm volatile("{\n"
                 ".reg .b32 remote;\n"
                 "mapa.shared::cluster.u32 remote, %0, %1;\n"
                 "mbarrier.arrive.shared::cluster.b64 _, [remote];\n"
                 "}\n" ::"r"(smem_address(bar)),
                 "r"(rank)
                 : "memory");
#endif
}

/* A stage given back: one arrival on its mbarrier in each of the CLUSTER blocks that
 * load into it (a multicast writes into all of them), or in this block alone. */
template <int CLUSTER> static __device__ __forceinline__ void barrier_arrive_all(uint64_t *bar)
{
    if constexpr (CLUSTER == 1) {
        barrier_arrive(bar);
    } else {
#pragma unroll
        for (int rank = 0; rank < CLUSTER; rank++)
            barrier_arrive_remote(bar, rank);
    }
}

/* A consumer's step of a ring it gives back one step late: this step's wgmmas issued and
 * those of the step before waited for, each warp gives the step before's stage back (one
 * arrival per warp: a warp's wait covers its own wgmmas; none where `held` is false, at a
 * walk's first step) and moves on. `previous` is the stage the next call gives back. */
template <int STAGES, int CLUSTER = 1>
static __device__ __forceinline__ void
give_back_previous(uint64_t *empty, ring_position<STAGES> &at, int &previous, bool held)
{
    if (held && threadIdx.x % 32 == 0)
        barrier_arrive_all<CLUSTER>(&empty[previous]);
    previous = at.stage;
    at.advance();
}

/* Waits until the phase of parity `parity` (0 even, 1 odd) has completed. Only the
 * current phase or the one before it may be named: the pipeline's bookkeeping makes
 * sure of that. try_wait may give up after a time limit, hence the loop. */
static __device__ __forceinline__ void barrier_wait(uint64_t *bar, uint32_t parity)
{
#if TMA_PIPELINE_DEVICE
    const uint32_t address = smem_address(bar);
    uint32_t done;
    do {
        asm volatile("{\n"
                     ".reg .pred complete;\n"
                     "mbarrier.try_wait.parity.shared::cta.b64 complete, [%1], %2;\n"
                     "selp.u32 %0, 1, 0, complete;\n"
                     "}\n"
                     : "=r"(done)
                     : "r"(address), "r"(parity)
                     : "memory");
    } while (!done);
#endif
}

/* Brings a tensor map into the TMA unit's cache before its first use. */
static __device__ __forceinline__ void tma_prefetch(const CUtensorMap *map)
{
#if TMA_PIPELINE_DEVICE
    asm volatile("prefetch.tensormap [%0];\n" ::"l"(reinterpret_cast<uint64_t>(map)) : "memory");
#endif
}

/* The box of `map` whose first element is at coordinates (c0, c1, c2[, c3]), innermost
 * first, into shared memory at dst; its bytes count down `bar`'s announced bytes. */
static __device__ __forceinline__ void tma_load_3d(void *dst, const CUtensorMap *map, uint64_t *bar,
                                                   int c0, int c1, int c2)
{
#if TMA_PIPELINE_DEVICE
    asm volatile("cp.async.bulk.tensor.3d.shared::cluster.global.mbarrier::complete_tx::bytes"
                 " [%0], [%1, {%3, %4, %5}], [%2];\n" ::"r"(smem_address(dst)),
                 "l"(reinterpret_cast<uint64_t>(map)), "r"(smem_address(bar)), "r"(c0), "r"(c1),
                 "r"(c2)
                 : "memory");
#endif
}

static __device__ __forceinline__ void tma_load_4d(void *dst, const CUtensorMap *map, uint64_t *bar,
                                                   int c0, int c1, int c2, int c3)
{
#if TMA_PIPELINE_DEVICE
    asm volatile("cp.async.bulk.tensor.4d.shared::cluster.global.mbarrier::complete_tx::bytes"
                 " [%0], [%1, {%3, %4, %5, %6}], [%2];\n" ::"r"(smem_address(dst)),
                 "l"(reinterpret_cast<uint64_t>(map)), "r"(smem_address(bar)), "r"(c0), "r"(c1),
                 "r"(c2), "r"(c3)
                 : "memory");
#endif
}

/* tma_load_3d into shared memory at dst's offset in every block of the cluster that
 * `blocks` names (bit r: rank r), each one's mbarrier at bar's offset counting the
 * bytes: one read of global memory for all of them. */
static __device__ __forceinline__ void tma_load_3d_multicast(void *dst, const CUtensorMap *map,
                                                             uint64_t *bar, int c0, int c1, int c2,
                                                             uint16_t blocks)
{
#if TMA_PIPELINE_DEVICE
    asm volatile("cp.async.bulk.tensor.3d.shared::cluster.global.mbarrier::complete_tx::bytes"
                 ".multicast::cluster [%0], [%1, {%3, %4, %5}], [%2], %6;\n" ::"r"(
                     smem_address(dst)),
                 "l"(reinterpret_cast<uint64_t>(map)), "r"(smem_address(bar)), "r"(c0), "r"(c1),
                 "r"(c2), "h"(blocks)
                 : "memory");
#endif
}

/* An im2col box of `map` (encode_im2col_map): the pixels from the filter window's corner
 * (c0 its first channel byte, w, h, n) on, each read at tap (dw, dh) of its window. */
static __device__ __forceinline__ void tma_load_im2col_4d(void *dst, const CUtensorMap *map,
                                                          uint64_t *bar, int c0, int w, int h,
                                                          int n, uint16_t dw, uint16_t dh)
{
#if TMA_PIPELINE_DEVICE
    asm volatile(
        "cp.async.bulk.tensor.4d.shared::cluster.global.im2col.mbarrier::complete_tx::bytes"
        " [%0], [%1, {%3, %4, %5, %6}], [%2], {%7, %8};\n" ::"r"(smem_address(dst)),
        "l"(reinterpret_cast<uint64_t>(map)), "r"(smem_address(bar)), "r"(c0), "r"(w), "r"(h),
        "r"(n), "h"(dw), "h"(dh)
        : "memory");
#endif
}

/* `bytes` contiguous bytes (a multiple of 16, both addresses 16-byte aligned) from global
 * memory to shared memory at dst, no tensor map: one request of the TMA unit, whatever
 * the rows it holds. They count down `bar`'s announced bytes. */
static __device__ __forceinline__ void bulk_load(void *dst, const void *src, uint32_t bytes,
                                                 uint64_t *bar)
{
#if TMA_PIPELINE_DEVICE
    asm volatile("cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes"
                 " [%0], [%1], %2, [%3];\n" ::"r"(smem_address(dst)),
                 "l"(reinterpret_cast<uint64_t>(src)), "r"(bytes), "r"(smem_address(bar))
                 : "memory");
#endif
}

/* The other way (step 13's epilogue): the box at `src` in shared memory to the tensor
 * at coordinates (c0, c1, c2, c3); what lies outside the tensor is not written. The
 * store joins this thread's current bulk group. */
static __device__ __forceinline__ void tma_store_4d(const CUtensorMap *map, const void *src, int c0,
                                                    int c1, int c2, int c3)
{
#if TMA_PIPELINE_DEVICE
    asm volatile("cp.async.bulk.tensor.4d.global.shared::cta.bulk_group"
                 " [%0, {%2, %3, %4, %5}], [%1];\n" ::"l"(reinterpret_cast<uint64_t>(map)),
                 "r"(smem_address(src)), "r"(c0), "r"(c1), "r"(c2), "r"(c3)
                 : "memory");
#endif
}

/* Closes this thread's bulk group: the stores issued since become one group. */
static __device__ __forceinline__ void bulk_commit(void)
{
#if TMA_PIPELINE_DEVICE
    asm volatile("cp.async.bulk.commit_group;\n" ::: "memory");
#endif
}

/* Waits until all but the last `pending` of this thread's bulk groups have read their
 * shared memory (it may be written again), or, bulk_wait, until all their writes are
 * done. */
template <int pending> static __device__ __forceinline__ void bulk_wait_read(void)
{
#if TMA_PIPELINE_DEVICE
    asm volatile("cp.async.bulk.wait_group.read %0;\n" ::"n"(pending) : "memory");
#endif
}

static __device__ __forceinline__ void bulk_wait(void)
{
#if TMA_PIPELINE_DEVICE
    asm volatile("cp.async.bulk.wait_group 0;\n" ::: "memory");
#endif
}

/* The threads of named barrier `id` (1..15; 0 is __syncthreads') wait for each other:
 * `count` threads, whole warps. */
static __device__ __forceinline__ void named_barrier_sync(int id, int count)
{
#if TMA_PIPELINE_DEVICE
    asm volatile("bar.sync %0, %1;\n" ::"r"(id), "r"(count) : "memory");
#endif
}

/* A function of the driver's, found through the runtime, so that a lesson links the
 * runtime alone (statically) and not libcuda: the tensor-map encoders. */
static void *driver_function(const char *name)
{
    void *fn = NULL;
    cudaDriverEntryPointQueryResult found = cudaDriverEntryPointSymbolNotFound;
#if CUDART_VERSION >= 12050
    /* 12000: the function as CUDA 12.0 introduced it. */
    CUDA_CHECK(cudaGetDriverEntryPointByVersion(name, &fn, 12000, cudaEnableDefault, &found));
#else
    /* CUDA 12.0-12.4 have no ...ByVersion: this finds the function as this toolkit's
     * cuda.h declares it. */
    CUDA_CHECK(cudaGetDriverEntryPoint(name, &fn, cudaEnableDefault, &found));
#endif
    if (found != cudaDriverEntryPointSuccess || fn == NULL) {
        fprintf(stderr, "error: the CUDA driver has no %s\n", name);
        exit(1);
    }
    return fn;
}

static void check_encoded(CUresult result, const char *encoder, const char *what)
{
    if (result != CUDA_SUCCESS) {
        fprintf(stderr, "error: %s failed for the %s (CUresult %d)\n", encoder, what, (int)result);
        exit(1);
    }
}

/* A tensor map over `rank` dimensions of `type` elements at base: dims innermost first,
 * strides in bytes of dimensions 1.., box in elements. Out-of-bounds elements read as
 * zero, and the box lands in the 128-byte swizzle that wgmma's descriptors read. */
static inline void encode_tensor_map(CUtensorMap *map, CUtensorMapDataType type, int rank,
                                     const void *base, const cuuint64_t *dims,
                                     const cuuint64_t *strides, const cuuint32_t *box,
                                     const char *what)
{
    static const auto encode = reinterpret_cast<decltype(&cuTensorMapEncodeTiled)>(
        driver_function("cuTensorMapEncodeTiled"));
    const cuuint32_t element_strides[5] = {1, 1, 1, 1, 1};
    check_encoded(encode(map, type, (cuuint32_t)rank, const_cast<void *>(base), dims, strides, box,
                         element_strides, CU_TENSOR_MAP_INTERLEAVE_NONE, CU_TENSOR_MAP_SWIZZLE_128B,
                         CU_TENSOR_MAP_L2_PROMOTION_L2_128B, CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE),
                  "cuTensorMapEncodeTiled", what);
}

/* An im2col map (tma_load_im2col_4d) over an NHWC tensor of bytes at base: dims
 * {channel bytes, W, H, N}, strides in bytes of W, H and N. A load brings `pixels`
 * pixels of `channel_bytes` bytes each; the window corners the pixels walk lie from
 * `lower` to the image's far edge plus `upper` ({W, H} order): for a k x k filter with
 * same padding, -(k / 2) and k / 2 - (k - 1), one corner per output pixel. */
static inline void encode_im2col_map(CUtensorMap *map, const void *base, const cuuint64_t *dims,
                                     const cuuint64_t *strides, const int *lower, const int *upper,
                                     int channel_bytes, int pixels, CUtensorMapSwizzle swizzle,
                                     const char *what)
{
    static const auto encode = reinterpret_cast<decltype(&cuTensorMapEncodeIm2col)>(
        driver_function("cuTensorMapEncodeIm2col"));
    const cuuint32_t element_strides[4] = {1, 1, 1, 1};
    check_encoded(encode(map, CU_TENSOR_MAP_DATA_TYPE_UINT8, 4, const_cast<void *>(base), dims,
                         strides, lower, upper, (cuuint32_t)channel_bytes, (cuuint32_t)pixels,
                         element_strides, CU_TENSOR_MAP_INTERLEAVE_NONE, swizzle,
                         CU_TENSOR_MAP_L2_PROMOTION_L2_128B, CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE),
                  "cuTensorMapEncodeIm2col", what);
}

#endif
