/* wgmma_rate: how fast one SM runs Hopper's warpgroup MMA (wgmma), the instruction of
 * lesson 08's steps 5-10 and of a 1-bit lesson 09 kernel still to be written: fp16 with
 * fp32 accumulation (m64n128k16) and 1-bit AND + popcount with s32 accumulation
 * (m64n128k256), in ops per clock per SM and TOPS. No datasheet gives the 1-bit rate of
 * wgmma; lesson 09's issue asks for it before a kernel is judged against it.
 *
 * Each warpgroup issues wgmmas on the same shared-memory tiles (their values do not
 * change the rate) into its accumulators, keeping one committed group in flight, so that
 * the count measures throughput. wgmma is sm_90a code: elsewhere the tool says so and
 * exits 77.
 *
 *   build/bin/wgmma_rate
 */
#include <stdint.h>

#include "cuda_check.h"
#include "instruction_rate.h"
#include "session.h"
#include "wgmma.cuh"

#define WARPGROUPS 2 /* per block, one block per SM */
#define ITERATIONS 2048
#define TILE_BYTES (256 * 128) /* enough shared memory for either operand */
/* wgmmas of one run on each SM */
#define WGMMAS_PER_SM ((double)WARPGROUPS * ITERATIONS * 4)

enum wgmma_kind { F16_F32, B1_AND };

/* 64 accumulators per thread, each named as an operand of the asm. */
#define D8(c, d, i)                                                                                \
    c(d[i]), c(d[i + 1]), c(d[i + 2]), c(d[i + 3]), c(d[i + 4]), c(d[i + 5]), c(d[i + 6]),         \
        c(d[i + 7])
#define D64(c, d)                                                                                  \
    D8(c, d, 0), D8(c, d, 8), D8(c, d, 16), D8(c, d, 24), D8(c, d, 32), D8(c, d, 40),              \
        D8(c, d, 48), D8(c, d, 56)
#define F(x) "+f"(x)
#define R(x) "+r"(x)
#define OPERANDS_0_63                                                                              \
    "%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, "                       \
    "%16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31, "             \
    "%32, %33, %34, %35, %36, %37, %38, %39, %40, %41, %42, %43, %44, %45, %46, %47, "             \
    "%48, %49, %50, %51, %52, %53, %54, %55, %56, %57, %58, %59, %60, %61, %62, %63"

/* A K-major tile without swizzle: the leading and stride offsets only need to be valid. */
static __device__ __forceinline__ uint64_t descriptor(const void *tile)
{
    return smem_descriptor(tile, 128, 1024, DESC_SWIZZLE_NONE);
}

template <int KIND>
static __device__ __forceinline__ void wgmma(uint32_t (&d)[64], uint64_t a, uint64_t b)
{
#if CONV_HAVE_WGMMA
    if (KIND == F16_F32) /* fp32 accumulators travel as their bit patterns */
        asm volatile("{\n.reg .pred p;\nsetp.ne.b32 p, 1, 0;\n"
                     "wgmma.mma_async.sync.aligned.m64n128k16.f32.f16.f16 {" OPERANDS_0_63
                     "}, %64, %65, p, 1, 1, 0, 0;\n}\n"
                     : D64(F, reinterpret_cast<float(&)[64]>(d))
                     : "l"(a), "l"(b));
    else
        asm volatile("{\n.reg .pred p;\nsetp.ne.b32 p, 1, 0;\n"
                     "wgmma.mma_async.sync.aligned.m64n128k256.s32.b1.b1.and.popc {" OPERANDS_0_63
                     "}, %64, %65, p;\n}\n"
                     : D64(R, d)
                     : "l"(a), "l"(b));
#endif
}

template <int KIND>
__global__ void __launch_bounds__(128 * WARPGROUPS, 1) wgmma_loop(uint32_t *sink)
{
    extern __shared__ __align__(1024) uint8_t tiles[];
    for (int i = threadIdx.x; i < 2 * TILE_BYTES; i += blockDim.x)
        tiles[i] = (uint8_t)(i * 37 + threadIdx.x);
    __syncthreads();
    fence_async_proxy();
    __syncthreads();
    const uint64_t a = descriptor(tiles), b = descriptor(tiles + TILE_BYTES);
    uint32_t acc[64] = {};
    for (int it = 0; it < ITERATIONS; it++) {
        wgmma_fence();
#pragma unroll
        for (int k = 0; k < 4; k++)
            wgmma<KIND>(acc, a, b);
        wgmma_commit();
        wgmma_wait<1>();
    }
    wgmma_wait<0>();
    uint32_t x = 0;
    for (int i = 0; i < 64; i++)
        x ^= acc[i];
    if (x == 0x9e3779b9u) /* never in practice; keeps the results live */
        sink[0] = x;
}

template <int KIND> static void launch(int run, const struct gpu_info *g, uint32_t *sink)
{
    (void)run;
    wgmma_loop<KIND><<<g->sm_count, 128 * WARPGROUPS, 2 * TILE_BYTES>>>(sink);
}

/* Each wgmma's operations: 2 per multiply-add, as TOPS and FLOP/s count them. */
static const struct rate_kind kinds[] = {
    {"m64n128k16 fp16, fp32 accumulate", WGMMAS_PER_SM * 2 * 64 * 128 * 16, launch<F16_F32>},
    {"m64n128k256 b1, AND + popcount", WGMMAS_PER_SM * 2 * 64 * 128 * 256, launch<B1_AND>},
};

/* The two tiles are more dynamic shared memory than a kernel may have unless it asks. */
template <int KIND> static void allow_tiles(void)
{
    CUDA_CHECK(cudaFuncSetAttribute(wgmma_loop<KIND>, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                    2 * TILE_BYTES));
}

static bool runs_wgmma(const struct gpu_info *g)
{
    return wgmma_built_cc() == 90 && g->cc_major == 9 && g->cc_minor == 0;
}

int main(void)
{
    struct gpu_info g;
    const int rc = rate_open(&g, "wgmma_rate", runs_wgmma,
                             "wgmma needs a 9.0 GPU and a build for 90 (sm_90a code)",
                             "%d warpgroups per SM", WARPGROUPS);
    if (rc != EXIT_PASS)
        return rc;
    allow_tiles<F16_F32>();
    allow_tiles<B1_AND>();
    rate_measure(&g, "wgmma", 34, kinds, (int)(sizeof kinds / sizeof kinds[0]));
    return 0;
}
