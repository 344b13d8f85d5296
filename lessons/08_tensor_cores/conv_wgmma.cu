/* Lesson 08, variants "wgmma_fp16" and "wgmma_bf16": the implicit GEMM of
 * gemm_tiles.cuh on Hopper's warpgroup MMA (sm_90a only). Where mma.sync needs every
 * fragment in registers (ldmatrix, 230 registers per thread, 2 warps per scheduler:
 * latency-bound, docs/08_tensor_cores.md), wgmma reads both operands straight from
 * shared memory through 64-bit descriptors, a warpgroup (4 warps) at a time, and runs
 * asynchronously: the warps issue it, go on, and wait for it only when they need the
 * result.
 *   - A block of 2 warpgroups computes 128 pixels x 128 channels; each warpgroup one
 *     m64n128k16 per 16 values of k, 64 fp32 accumulators per thread.
 *   - Tiles are rows of 128 bytes (64 values of k) in the 128-byte swizzle wgmma
 *     reads: chunk c of row r at c ^ (r % 8), which is tile_chunk<8, true>. The
 *     tile_loader of the mma kernels fills them unchanged, by cp.async into a ring.
 *   - One tile's wgmmas stay in flight while the warps wait for the next tile: the
 *     ring holds the tile being read, the tile in flight, and two being copied.
 *   - cp.async writes through the generic proxy and wgmma reads through the async
 *     proxy: a fence.proxy.async between the copies landing and the barrier.
 * Everything is inlined into the one kernel: ptxas serialises wgmma across calls.
 *
 *   build/bin/08_tensor_cores --preset unet-256x256 --variant wgmma_fp16
 */
#include "cuda_check.h"
#include "gemm_tiles.cuh"
#include "gpu_info.h"
#include "grid_chunks.cuh"
#include "kernels.h"

/* wgmma exists on sm_90a only; elsewhere the variants say so and never launch. */
#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
#define CONV_HAVE_WGMMA 1
#else
#define CONV_HAVE_WGMMA 0
#endif

#define WG_BM 128   /* pixels per block: 2 warpgroups of 64 rows */
#define WG_BN 128   /* output channels per block: n of one wgmma */
#define WG_CHUNKS 8 /* 128-byte tile rows */
#define WG_STAGES 4
#define WG_IN_FLIGHT 1 /* committed wgmma groups left running at the end of a tile */
#define WG_AHEAD (WG_STAGES - 1 - WG_IN_FLIGHT) /* tiles being copied ahead */
#define WG_THREADS 256
#define WG_ROWS_PER_GROUP 64
#define WG_KSTEP_BYTES 32    /* k16 of 2-byte values */
#define WG_SWIZZLE_ATOM 1024 /* 8 rows of 128 bytes: the swizzle's period and alignment */
#define WG_TILE_CHUNKS ((WG_BM + WG_BN) * WG_CHUNKS)
#define WG_SMEM_BYTES (WG_STAGES * WG_TILE_CHUNKS * CHUNK_BYTES + WG_SWIZZLE_ATOM)

/* A shared-memory operand for wgmma (PTX ISA, "Matrix Descriptor"): start address,
 * leading and stride byte offsets (all in 16-byte units), and the swizzle mode. For a
 * K-major tile in the 128-byte swizzle the leading offset is unused (1) and the stride
 * is one swizzle atom, 8 rows of 128 bytes. */
static __device__ __forceinline__ uint64_t tile_descriptor(const uint4 *tile)
{
    const uint32_t address = (uint32_t)__cvta_generic_to_shared(tile);
    return (uint64_t)((address & 0x3ffff) >> 4) | (uint64_t)1 << 16 |
           (uint64_t)(WG_SWIZZLE_ATOM >> 4) << 32 | (uint64_t)1 << 62;
}

/* One wgmma.m64n128k16 of 16-bit operands `type` (f16 or bf16) from two shared-memory
 * descriptors into 64 fp32 accumulators per thread, added to what they hold. */
#if CONV_HAVE_WGMMA
#define WGMMA_M64N128K16(type, d, desc_a, desc_b)                                                  \
    asm volatile(                                                                                  \
        "{\n"                                                                                      \
        ".reg .pred accumulate;\n"                                                                 \
        "setp.ne.b32 accumulate, 1, 0;\n"                                                          \
        "wgmma.mma_async.sync.aligned.m64n128k16.f32." type "." type " "                           \
        "{%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, %16, %17, "        \
        "%18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31, %32, %33, "         \
        "%34, %35, %36, %37, %38, %39, %40, %41, %42, %43, %44, %45, %46, %47, %48, %49, "         \
        "%50, %51, %52, %53, %54, %55, %56, %57, %58, %59, %60, %61, %62, %63}, "                  \
        "%64, %65, accumulate, 1, 1, 0, 0;\n"                                                      \
        "}\n"                                                                                      \
        : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]),      \
          "+f"(d[7]), "+f"(d[8]), "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), "+f"(d[12]), "+f"(d[13]),  \
          "+f"(d[14]), "+f"(d[15]), "+f"(d[16]), "+f"(d[17]), "+f"(d[18]), "+f"(d[19]),            \
          "+f"(d[20]), "+f"(d[21]), "+f"(d[22]), "+f"(d[23]), "+f"(d[24]), "+f"(d[25]),            \
          "+f"(d[26]), "+f"(d[27]), "+f"(d[28]), "+f"(d[29]), "+f"(d[30]), "+f"(d[31]),            \
          "+f"(d[32]), "+f"(d[33]), "+f"(d[34]), "+f"(d[35]), "+f"(d[36]), "+f"(d[37]),            \
          "+f"(d[38]), "+f"(d[39]), "+f"(d[40]), "+f"(d[41]), "+f"(d[42]), "+f"(d[43]),            \
          "+f"(d[44]), "+f"(d[45]), "+f"(d[46]), "+f"(d[47]), "+f"(d[48]), "+f"(d[49]),            \
          "+f"(d[50]), "+f"(d[51]), "+f"(d[52]), "+f"(d[53]), "+f"(d[54]), "+f"(d[55]),            \
          "+f"(d[56]), "+f"(d[57]), "+f"(d[58]), "+f"(d[59]), "+f"(d[60]), "+f"(d[61]),            \
          "+f"(d[62]), "+f"(d[63])                                                                 \
        : "l"(desc_a), "l"(desc_b));
#else
#define WGMMA_M64N128K16(type, d, desc_a, desc_b) __trap()
#endif

static __device__ __forceinline__ void wgmma_fence(void)
{
#if CONV_HAVE_WGMMA
    asm volatile("wgmma.fence.sync.aligned;\n" ::: "memory");
#endif
}

static __device__ __forceinline__ void wgmma_commit(void)
{
#if CONV_HAVE_WGMMA
    asm volatile("wgmma.commit_group.sync.aligned;\n" ::: "memory");
#endif
}

/* Waits until at most `pending` committed groups of this warpgroup are in flight. */
template <int pending> static __device__ __forceinline__ void wgmma_wait(void)
{
#if CONV_HAVE_WGMMA
    asm volatile("wgmma.wait_group.sync.aligned %0;\n" ::"n"(pending) : "memory");
#endif
}

/* The accumulators are written by the tensor cores behind the compiler's back: an
 * empty asm that "reads and writes" each one keeps the compiler from moving an access
 * to them across a fence or a wait (CUTLASS's warpgroup_fence_operand). */
static __device__ __forceinline__ void pin_accumulators(float (&d)[64])
{
#pragma unroll
    for (int i = 0; i < 64; i++)
        asm volatile("" : "+f"(d[i])::"memory");
}

/* Makes this thread's shared-memory writes (cp.async, stores) visible to the async
 * proxy that wgmma reads through. */
static __device__ __forceinline__ void fence_async_proxy(void)
{
#if CONV_HAVE_WGMMA
    asm volatile("fence.proxy.async.shared::cta;\n" ::: "memory");
#endif
}

template <typename Op> struct wgmma_op;
template <> struct wgmma_op<mma_fp16> {
    static __device__ __forceinline__ void run(float (&d)[64], uint64_t a, uint64_t b)
    {
        WGMMA_M64N128K16("f16", d, a, b);
    }
};
template <> struct wgmma_op<mma_bf16> {
    static __device__ __forceinline__ void run(float (&d)[64], uint64_t a, uint64_t b)
    {
        WGMMA_M64N128K16("bf16", d, a, b);
    }
};

template <typename Op, bool VECTOR>
__global__ void __launch_bounds__(WG_THREADS, 1)
    conv2d_wgmma(const typename Op::elem *__restrict__ input,
                 const typename Op::elem *__restrict__ weights, const float *__restrict__ bias,
                 typename Op::out *__restrict__ output, struct conv_shape s, int first_tile)
{
    typedef tile_loader<uint16_t, WG_BM, WG_BN, WG_CHUNKS, WG_THREADS> loader_t;
    extern __shared__ uint4 smem[];
    /* The swizzle is a function of the address: every tile starts on an atom. */
    uint4 *ring =
        reinterpret_cast<uint4 *>((reinterpret_cast<uintptr_t>(smem) + WG_SWIZZLE_ATOM - 1) &
                                  ~(uintptr_t)(WG_SWIZZLE_ATOM - 1));

    const int group = threadIdx.x / 128, lane = threadIdx.x % 32, warp = threadIdx.x % 128 / 32;
    const int p0 = (first_tile + blockIdx.y) * WG_BM, j0 = blockIdx.x * WG_BN;
    loader_t load(reinterpret_cast<const uint16_t *>(input),
                  reinterpret_cast<const uint16_t *>(weights), s, p0, j0);
    const int tiles = ceil_div(load.depth, loader_t::BK);

    float acc[64] = {};

    /* One stage is read by the wgmmas still in flight, one by those issued now, and
     * the copies run WG_AHEAD tiles ahead into the others. */
    for (int t = 0; t < WG_AHEAD; t++) {
        if (t < tiles) {
            load.template load<VECTOR, true>(ring + t * WG_TILE_CHUNKS,
                                             ring + t * WG_TILE_CHUNKS + WG_BM * WG_CHUNKS);
            load.template advance<VECTOR>();
        }
        commit_copies();
    }

    for (int t = 0; t < tiles; t++) {
        wait_copies<WG_AHEAD - 1>();
        fence_async_proxy();
        /* Tile t landed for everyone; everyone's wgmmas on tile t - 2 have completed
         * (wgmma_wait<WG_IN_FLIGHT> below), so its stage can be refilled. */
        __syncthreads();
        const int fill = t + WG_AHEAD;
        if (fill < tiles) {
            uint4 *stage = ring + fill % WG_STAGES * WG_TILE_CHUNKS;
            load.template load<VECTOR, true>(stage, stage + WG_BM * WG_CHUNKS);
            load.template advance<VECTOR>();
        }
        commit_copies();

        const uint4 *a_tile =
            ring + t % WG_STAGES * WG_TILE_CHUNKS + group * WG_ROWS_PER_GROUP * WG_CHUNKS;
        const uint4 *b_tile = ring + t % WG_STAGES * WG_TILE_CHUNKS + WG_BM * WG_CHUNKS;
        const uint64_t a_desc = tile_descriptor(a_tile), b_desc = tile_descriptor(b_tile);
        pin_accumulators(acc);
        wgmma_fence();
        /* Along k inside the swizzled rows: 32 bytes further, 2 in descriptor units. */
#pragma unroll
        for (int k = 0; k < WG_CHUNKS * CHUNK_BYTES / WG_KSTEP_BYTES; k++)
            wgmma_op<Op>::run(acc, a_desc + k * (WG_KSTEP_BYTES >> 4),
                              b_desc + k * (WG_KSTEP_BYTES >> 4));
        wgmma_commit();
        /* Tile t's wgmmas keep running while the warps go on to wait for tile t + 1
         * and start its copies. */
        wgmma_wait<WG_IN_FLIGHT>();
        pin_accumulators(acc);
    }
    wgmma_wait<0>();
    pin_accumulators(acc);

    /* The accumulators of m64nNk16 are laid out like mma.m16n8's, warp w of the
     * warpgroup holding rows 16 w..16 w + 15: for each 8 channels j, acc[4j], acc[4j+1]
     * at row lane / 4, channels 2 (lane % 4) and the next, acc[4j+2], acc[4j+3] 8 rows
     * below. */
    const int pixels = s.n * s.h * s.w;
    const bool pairs = s.cout % 2 == 0;
#pragma unroll
    for (int j = 0; j < WG_BN / 8; j++) {
        const int ch = j0 + j * 8 + lane % 4 * 2;
        const float b0 = bias && ch < s.cout ? bias[ch] : 0.0f;
        const float b1 = bias && ch + 1 < s.cout ? bias[ch + 1] : 0.0f;
#pragma unroll
        for (int half = 0; half < 2; half++) {
            const int p = p0 + group * WG_ROWS_PER_GROUP + warp * 16 + lane / 4 + half * 8;
            if (p >= pixels || ch >= s.cout)
                continue;
            typename Op::out *dst = output + (size_t)p * s.cout + ch;
            const float v0 = acc[4 * j + 2 * half] + b0, v1 = acc[4 * j + 2 * half + 1] + b1;
            store_pair(dst, v0, v1, pairs);
            if (!pairs && ch + 1 < s.cout)
                store_pair(dst + 1, v1, 0.0f, false);
        }
    }
}

template <typename Op> static void launch(const struct conv_args *a)
{
    const struct conv_shape *s = &a->shape;
    typedef typename Op::elem E;
    const E *input = static_cast<const E *>(a->input),
            *weights = static_cast<const E *>(a->weights);
    typename Op::out *output = static_cast<typename Op::out *>(a->output);
    const bool vector = chunks_are_vectors(s, sizeof(E), input, weights);
    auto kernel = vector ? conv2d_wgmma<Op, true> : conv2d_wgmma<Op, false>;
    CUDA_CHECK(
        cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, WG_SMEM_BYTES));
    const int pixel_tiles = ceil_div(s->n * s->h * s->w, WG_BM);
    for (int first = 0; first < pixel_tiles; first += MAX_GRID_YZ) {
        const dim3 grid(ceil_div(s->cout, WG_BN), min(pixel_tiles - first, MAX_GRID_YZ));
        kernel<<<grid, WG_THREADS, WG_SMEM_BYTES, a->stream>>>(input, weights, a->bias, output, *s,
                                                               first);
        CUDA_CHECK_LAUNCH();
    }
}

extern "C" const char *wgmma_unsupported(const struct gpu_info *gpu)
{
#ifdef CONV_WGMMA_BUILT
    if (gpu->cc_major == 9 && gpu->cc_minor == 0)
        return NULL;
    return "wgmma needs compute capability 9.0 (Hopper)";
#else
    (void)gpu;
    return "built without sm_90a code (CMAKE_CUDA_ARCHITECTURES without 90)";
#endif
}

extern "C" void launch_conv2d_wgmma_fp16(const struct conv_args *a)
{
    launch<mma_fp16>(a);
}

extern "C" void launch_conv2d_wgmma_bf16(const struct conv_args *a)
{
    launch<mma_bf16>(a);
}
