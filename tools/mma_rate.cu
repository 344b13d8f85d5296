/* mma_rate: how fast one SM runs the warp-level tensor-core instruction (mma.sync) of
 * lessons 08 and 09, per clock and in TOPS: binary m16n8k256 with AND and with XOR
 * popcount, and fp16 m16n8k16 with fp32 accumulation for comparison with the
 * datasheet. No datasheet gives the binary rate of sm_90 (common/measure/roofline.c), so
 * lesson 09 takes its bit tensor-core roof from this measurement.
 *
 * Every warp runs CHAINS independent accumulator chains, so that the latency of one
 * mma is hidden behind the others and the count measures throughput.
 *
 *   build/bin/mma_rate
 */
#include <stdint.h>

#include "instruction_rate.h"
#include "session.h"

#define CHAINS 8 /* independent accumulators per warp */
#define ITERATIONS 4096
#define WARPS_PER_BLOCK 8
#define BLOCKS_PER_SM 2
/* mmas of one run on each SM */
#define MMAS_PER_SM ((double)BLOCKS_PER_SM * WARPS_PER_BLOCK * ITERATIONS * CHAINS)

enum mma_kind { B1_AND, B1_XOR, F16_F32 };

template <int KIND> static __device__ __forceinline__ void mma(uint32_t (&d)[4],
                                                               const uint32_t (&a)[4],
                                                               const uint32_t (&b)[2])
{
#if __CUDA_ARCH__ >= 800
    if (KIND == B1_AND)
        asm volatile("mma.sync.aligned.m16n8k256.row.col.s32.b1.b1.s32.and.popc "
                     "{%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, {%0, %1, %2, %3};\n"
                     : "+r"(d[0]), "+r"(d[1]), "+r"(d[2]), "+r"(d[3])
                     : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]));
    else if (KIND == B1_XOR)
        asm volatile("mma.sync.aligned.m16n8k256.row.col.s32.b1.b1.s32.xor.popc "
                     "{%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, {%0, %1, %2, %3};\n"
                     : "+r"(d[0]), "+r"(d[1]), "+r"(d[2]), "+r"(d[3])
                     : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]));
    else /* fp32 accumulators travel as their bit patterns */
        asm volatile("mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 "
                     "{%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, {%0, %1, %2, %3};\n"
                     : "+r"(d[0]), "+r"(d[1]), "+r"(d[2]), "+r"(d[3])
                     : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]));
#else
    __trap();
#endif
}

template <int KIND> __global__ void mma_loop(uint32_t seed, uint32_t *sink)
{
    uint32_t a[4], b[2], acc[CHAINS][4] = {};
    /* Any bits: the rate does not depend on the values (fp16 NaNs included). */
    for (int i = 0; i < 4; i++)
        a[i] = seed ^ (threadIdx.x * 0x9e3779b9u + i);
    for (int i = 0; i < 2; i++)
        b[i] = seed ^ (threadIdx.x * 0x85ebca6bu + i);
    for (int it = 0; it < ITERATIONS; it++)
#pragma unroll
        for (int c = 0; c < CHAINS; c++)
            mma<KIND>(acc[c], a, b);
    uint32_t x = 0;
    for (int c = 0; c < CHAINS; c++)
        x ^= acc[c][0] ^ acc[c][1] ^ acc[c][2] ^ acc[c][3];
    if (x == seed) /* never in practice; keeps the results live */
        sink[0] = x;
}

template <int KIND> static void launch(int run, const struct gpu_info *g, uint32_t *sink)
{
    mma_loop<KIND><<<g->sm_count * BLOCKS_PER_SM, WARPS_PER_BLOCK * 32>>>(0x12345u + run, sink);
}

/* Each mma's operations: 2 per multiply-add, as TOPS and FLOP/s count them. */
static const struct rate_kind kinds[] = {
    {"m16n8k256 b1, AND + popcount", MMAS_PER_SM * 2 * 16 * 8 * 256, launch<B1_AND>},
    {"m16n8k256 b1, XOR + popcount", MMAS_PER_SM * 2 * 16 * 8 * 256, launch<B1_XOR>},
    {"m16n8k16 fp16, fp32 accumulate", MMAS_PER_SM * 2 * 16 * 8 * 16, launch<F16_F32>},
};

static bool runs_mma(const struct gpu_info *g)
{
    return g->cc_major >= 8;
}

int main(void)
{
    struct gpu_info g;
    const int rc = rate_open(
        &g, "mma_rate", runs_mma, "mma.sync m16n8k256 b1 and m16n8k16 need compute capability 8.0",
        "%d warps per SM, %d chains each", BLOCKS_PER_SM * WARPS_PER_BLOCK, CHAINS);
    if (rc != EXIT_PASS)
        return rc;
    rate_measure(&g, "mma.sync", 32, kinds, (int)(sizeof kinds / sizeof kinds[0]));
    return 0;
}
