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
#include <stdio.h>

#include "cuda_check.h"
#include "gpu_info.h"
#include "session.h"

#define CHAINS 8 /* independent accumulators per warp */
#define ITERATIONS 4096
#define WARPS_PER_BLOCK 8
#define BLOCKS_PER_SM 2
#define WARMUP 2
#define REPS 5

enum mma_kind { B1_AND, B1_XOR, F16_F32 };

static const char *const kind_names[] = {"m16n8k256 b1, AND + popcount",
                                         "m16n8k256 b1, XOR + popcount",
                                         "m16n8k16 fp16, fp32 accumulate"};
/* Operations of one mma (2 per multiply-add, as TOPS and FLOP/s count them). */
static const double ops_per_mma[] = {2.0 * 16 * 8 * 256, 2.0 * 16 * 8 * 256, 2.0 * 16 * 8 * 16};

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

template <int KIND> static void measure(const struct gpu_info *g, uint32_t *sink)
{
    const int blocks = g->sm_count * BLOCKS_PER_SM;
    cudaEvent_t start, stop;
    CUDA_CHECK(cudaEventCreate(&start));
    CUDA_CHECK(cudaEventCreate(&stop));
    float best_ms = 0.0f;
    for (int r = 0; r < WARMUP + REPS; r++) {
        CUDA_CHECK(cudaEventRecord(start));
        mma_loop<KIND><<<blocks, WARPS_PER_BLOCK * 32>>>(0x12345u + r, sink);
        CUDA_CHECK_LAUNCH();
        CUDA_CHECK(cudaEventRecord(stop));
        CUDA_CHECK(cudaEventSynchronize(stop));
        float ms;
        CUDA_CHECK(cudaEventElapsedTime(&ms, start, stop));
        if (r >= WARMUP && (best_ms == 0.0f || ms < best_ms))
            best_ms = ms;
    }
    CUDA_CHECK(cudaEventDestroy(start));
    CUDA_CHECK(cudaEventDestroy(stop));
    const double ops = (double)blocks * WARPS_PER_BLOCK * ITERATIONS * CHAINS * ops_per_mma[KIND];
    const double per_second = ops / (best_ms * 1e-3);
    printf("mma.sync %-32s %8.1f TOPS  %7.0f ops per clock per SM  (fastest of %d runs, %.3f "
           "ms)\n",
           kind_names[KIND], per_second / 1e12,
           per_second / ((double)g->clock_khz * 1e3 * g->sm_count), REPS, best_ms);
}

int main(void)
{
    const char *why = NULL;
    if (gpu_count(&why) == 0)
        return report_no_gpu("mma_rate", why);
    struct gpu_info g;
    gpu_query(0, &g);
    if (g.cc_major < 8) {
        fprintf(stderr, "skipped: mma.sync m16n8k256 b1 and m16n8k16 need compute capability "
                        "8.0; %s is %d.%d\n",
                g.name, g.cc_major, g.cc_minor);
        return EXIT_NO_GPU;
    }
    printf("mma_rate | %s | cc %d.%d | %d SMs | clock %d MHz (the attribute: per-clock rates "
           "assume it) | %d warps per SM, %d chains each\n",
           g.name, g.cc_major, g.cc_minor, g.sm_count, g.clock_khz / 1000,
           BLOCKS_PER_SM * WARPS_PER_BLOCK, CHAINS);
    uint32_t *sink;
    CUDA_CHECK(cudaMalloc(&sink, sizeof *sink));
    measure<B1_AND>(&g, sink);
    measure<B1_XOR>(&g, sink);
    measure<F16_F32>(&g, sink);
    CUDA_CHECK(cudaFree(sink));
    return 0;
}
