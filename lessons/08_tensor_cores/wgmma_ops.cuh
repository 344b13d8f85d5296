/* Hopper's warpgroup MMA (PTX ISA, "Asynchronous Warpgroup Level Matrix Multiply-
 * Accumulate"), one short wrapper per instruction, for lesson 08's wgmma steps (05_wgmma.cu
 * to 08_wide_tile.cu). A warpgroup (4 warps, 128 threads) issues one wgmma.m64nNkK: it
 * reads a 64 x K tile of A and an N x K tile of B^T straight from shared memory through
 * two 64-bit descriptors, adds their product into 64 x N fp32 accumulators held in the
 * warpgroup's registers, and runs asynchronously: the warps issue it, go on, and wait
 * for it (wgmma_wait) only when they need its result or its shared memory back.
 *
 * Every tile the wgmma steps multiply is rows of 128 bytes (64 fp16 or bf16 values of
 * k, 32 fp32) in the 128-byte swizzle (16-byte chunk c of row r at c ^ (r % 8)), aligned
 * to 1024 bytes, the swizzle's period. wgmma exists in sm_90a code only
 * (CONV_HAVE_WGMMA); elsewhere these compile to traps and the variants never launch.
 * Everything here is inlined into the kernels: ptxas serialises wgmma across calls. For
 * the kernels (.cu) only. */
#ifndef WGMMA_OPS_CUH
#define WGMMA_OPS_CUH

#include <stdint.h>

#include "gemm_tiles.cuh"
#include "wgmma.cuh"

#define WG_BM 128   /* pixels per block: 2 consumer warpgroups of 64 rows */
#define WG_CHUNKS 8 /* 128-byte tile rows */
#define WG_ROWS_PER_GROUP 64
#define WG_IN_FLIGHT 1       /* committed wgmma groups left running at the end of a step */
#define WG_KSTEP_BYTES 32    /* one wgmma's k: 16 2-byte values or 8 TF32 */
#define WG_SWIZZLE_ATOM 1024 /* 8 rows of 128 bytes: the swizzle's period and alignment */

/* Dynamic shared memory rounded up to the swizzle's alignment: launches ask for
 * WG_SWIZZLE_ATOM bytes of slack. */
static __device__ __forceinline__ uint4 *swizzle_aligned(uint4 *smem)
{
    return reinterpret_cast<uint4 *>((reinterpret_cast<uintptr_t>(smem) + WG_SWIZZLE_ATOM - 1) &
                                     ~(uintptr_t)(WG_SWIZZLE_ATOM - 1));
}

/* The descriptor of a K-major tile in the 128-byte swizzle: the leading offset is
 * unused (1, as the ISA asks), the stride is one swizzle atom, 8 rows of 128 bytes. */
static __device__ __forceinline__ uint64_t tile_descriptor(const uint4 *tile)
{
    return smem_descriptor(tile, DESC_UNIT_BYTES, WG_SWIZZLE_ATOM, DESC_SWIZZLE_128B);
}

/* The same tile `bytes` further along its rows: only the start address moves. */
static __device__ __forceinline__ uint64_t descriptor_plus(uint64_t descriptor, int bytes)
{
    return descriptor + ((uint64_t)(bytes / DESC_UNIT_BYTES) << DESC_START_SHIFT);
}

/* One wgmma with 32, 64 or 128 fp32 accumulators d[] per thread (N = 64, 128 or 256) from two
 * shared-memory descriptors, added to what they hold. The asm names each accumulator as
 * an operand: WG_D64(d, i) is d[i..i + 63], and %0.. in the instruction are the operands
 * in order. After the descriptors: scale-d (accumulate: a predicate set to true),
 * scale-a and scale-b 1, and for 16-bit types "neither operand transposed" (TF32 has
 * no transpose). */
#define WG_D8(d, i)                                                                                \
    "+f"(d[i]), "+f"(d[i + 1]), "+f"(d[i + 2]), "+f"(d[i + 3]), "+f"(d[i + 4]), "+f"(d[i + 5]),    \
        "+f"(d[i + 6]), "+f"(d[i + 7])
#define WG_D32(d, i) WG_D8(d, i), WG_D8(d, i + 8), WG_D8(d, i + 16), WG_D8(d, i + 24)
#define WG_D64(d, i) WG_D32(d, i), WG_D32(d, i + 32)
#define WG_OPERANDS_0_31                                                                           \
    "%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, "                       \
    "%16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31"
#define WG_OPERANDS_0_63                                                                           \
    WG_OPERANDS_0_31                                                                               \
    ", "                                                                                           \
    "%32, %33, %34, %35, %36, %37, %38, %39, %40, %41, %42, %43, %44, %45, %46, %47, "             \
    "%48, %49, %50, %51, %52, %53, %54, %55, %56, %57, %58, %59, %60, %61, %62, %63"
#define WG_OPERANDS_64_127                                                                         \
    "%64, %65, %66, %67, %68, %69, %70, %71, %72, %73, %74, %75, %76, %77, %78, %79, "             \
    "%80, %81, %82, %83, %84, %85, %86, %87, %88, %89, %90, %91, %92, %93, %94, %95, "             \
    "%96, %97, %98, %99, %100, %101, %102, %103, %104, %105, %106, %107, "                         \
    "%108, %109, %110, %111, %112, %113, %114, %115, %116, %117, %118, %119, "                     \
    "%120, %121, %122, %123, %124, %125, %126, %127"
#define WG_NOT_TRANSPOSED ", 0, 0"
#define WG_BEGIN "{\n.reg .pred accumulate;\nsetp.ne.b32 accumulate, 1, 0;\n"
#if CONV_HAVE_WGMMA
#define WGMMA_N64(instruction, tail, d, desc_a, desc_b)                                            \
    asm volatile(WG_BEGIN instruction " {" WG_OPERANDS_0_31 "}, %32, %33, accumulate, 1, 1" tail   \
                                      ";\n}\n"                                                     \
                 : WG_D32(d, 0)                                                                    \
                 : "l"(desc_a), "l"(desc_b))
#define WGMMA_N128(instruction, tail, d, desc_a, desc_b)                                           \
    asm volatile(WG_BEGIN instruction " {" WG_OPERANDS_0_63 "}, %64, %65, accumulate, 1, 1" tail   \
                                      ";\n}\n"                                                     \
                 : WG_D64(d, 0)                                                                    \
                 : "l"(desc_a), "l"(desc_b))
#define WGMMA_N256(instruction, tail, d, desc_a, desc_b)                                           \
    asm volatile(WG_BEGIN instruction " {" WG_OPERANDS_0_63 ", " WG_OPERANDS_64_127                \
                                      "}, %128, %129, accumulate, 1, 1" tail ";\n}\n"              \
                 : WG_D64(d, 0), WG_D64(d, 64)                                                     \
                 : "l"(desc_a), "l"(desc_b))
#else
#define WGMMA_N64(instruction, tail, d, desc_a, desc_b) __trap()
#define WGMMA_N128(instruction, tail, d, desc_a, desc_b) __trap()
#define WGMMA_N256(instruction, tail, d, desc_a, desc_b) __trap()
#endif

/* The wgmma of 128 x BN block tiles: m64n<BN>k<K> on the storage type of Op, K being
 * 32 bytes of it (16 fp16 or bf16 values, 8 TF32). */
template <typename Op, int BN> struct wgmma_op;
/* wgmma_op<Op, N> for N = 64, 128 and 256: the instruction m64n<N><shape> of Op's types. */
#define WGMMA_OPS(Op, shape, tail)                                                                 \
    template <int N> struct wgmma_op<Op, N> {                                                      \
        static __device__ __forceinline__ void run(float (&d)[N / 2], uint64_t a, uint64_t b)      \
        {                                                                                          \
            if constexpr (N == 64)                                                                 \
                WGMMA_N64("wgmma.mma_async.sync.aligned.m64n64" shape, tail, d, a, b);             \
            else if constexpr (N == 128)                                                           \
                WGMMA_N128("wgmma.mma_async.sync.aligned.m64n128" shape, tail, d, a, b);           \
            else                                                                                   \
                WGMMA_N256("wgmma.mma_async.sync.aligned.m64n256" shape, tail, d, a, b);           \
        }                                                                                          \
    };
WGMMA_OPS(mma_fp16, "k16.f32.f16.f16", WG_NOT_TRANSPOSED)
WGMMA_OPS(mma_bf16, "k16.f32.bf16.bf16", WG_NOT_TRANSPOSED)
WGMMA_OPS(mma_tf32, "k8.f32.tf32.tf32", "")

/* Starts one k-step of a warpgroup's tile: 4 wgmma.m64n<BN>k16 along the 64 values of k
 * of a stage, committed as one group that keeps running after this returns. B is BN rows
 * of 128 bytes; its descriptor is the same for both widths: the stride from 8 rows to
 * the next 8 is one swizzle atom, whatever N the instruction reads. */
template <typename Op, int BN>
static __device__ __forceinline__ void multiply_step(float (&acc)[BN / 2], const uint4 *a_tile,
                                                     const uint4 *b_tile)
{
    /* [page: multiply-step] */
    const uint64_t a_desc = tile_descriptor(a_tile), b_desc = tile_descriptor(b_tile);
    pin_accumulators(acc);
    wgmma_fence();
    /* Along k inside the swizzled rows: 32 bytes further each time. */
#pragma unroll
    for (int k = 0; k < WG_CHUNKS * CHUNK_BYTES / WG_KSTEP_BYTES; k++)
        wgmma_op<Op, BN>::run(acc, descriptor_plus(a_desc, k * WG_KSTEP_BYTES),
                              descriptor_plus(b_desc, k * WG_KSTEP_BYTES));
    wgmma_commit();
    /* [/page: multiply-step] */
}

/* Adds the bias and stores warpgroup `group`'s 64 rows of a 128 x BN tile. The
 * accumulators of m64nNk16 are laid out like mma.m16n8's, whatever N (PTX ISA, "wgmma
 * Register Fragments"), warp w of the warpgroup holding rows 16 w..16 w + 15: for each
 * 8 channels j < N / 8, acc[4j], acc[4j+1] at row lane / 4, channels 2 (lane % 4) and
 * the next, acc[4j+2], acc[4j+3] 8 rows below. pixel_of(row) is the
 * output pixel (n*H + y)*W + x of tile row `row`, or -1 where the tile has none. */
template <int BN, typename Out, typename PixelOf>
static __device__ __forceinline__ void store_tile(const float (&acc)[BN / 2], Out *output,
                                                  const float *bias, int cout, int j0, int group,
                                                  PixelOf pixel_of)
{
    const int lane = threadIdx.x % 32, warp = threadIdx.x % 128 / 32;
    int pixel[2];
#pragma unroll
    for (int half = 0; half < 2; half++)
        pixel[half] = pixel_of(group * WG_ROWS_PER_GROUP + warp * 16 + lane / 4 + half * 8);
    const bool pairs = cout % 2 == 0;
#pragma unroll
    for (int j = 0; j < BN / 8; j++) {
        const int ch = j0 + j * 8 + lane % 4 * 2;
        const float b0 = bias && ch < cout ? bias[ch] : 0.0f;
        const float b1 = bias && ch + 1 < cout ? bias[ch + 1] : 0.0f;
#pragma unroll
        for (int half = 0; half < 2; half++) {
            if (pixel[half] < 0 || ch >= cout)
                continue;
            Out *dst = output + (size_t)pixel[half] * cout + ch;
            const float v0 = acc[4 * j + 2 * half] + b0, v1 = acc[4 * j + 2 * half + 1] + b1;
            store_pair(dst, v0, v1, pairs);
            if (!pairs && ch + 1 < cout)
                store_pair(dst + 1, v1, 0.0f, false);
        }
    }
}

#endif
