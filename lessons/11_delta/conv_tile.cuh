/* The convolution every variant of lesson 11 runs on the units it decides to compute:
 * one 8x8-pixel unit and 64 output channels per block of 64 threads, NHWC, the
 * filter size a template parameter.
 *
 * Each thread owns one output row of the unit (8 pixels) x 8 output channels: 64
 * sums in registers. Its channels are 4g..4g+3 and 32+4g..32+4g+3 for
 * g = threadIdx.x % 8, so the eight threads of a row read 128 consecutive bytes of
 * a weight row with their 16-byte loads, and the four rows of a warp read the same
 * ones (a broadcast): no bank conflict.
 *
 * The input channels arrive 4 at a time (one 16-byte piece of an NHWC pixel), through
 * a two-stage ring in shared memory filled by cp.async (common/device/cp_async.cuh): while
 * the block multiplies one chunk, the next one is in flight. A stage holds
 *   - the chunk's weights for the block's 64 output channels, [tap][ci][co]: copied
 *     as they are from the arranged weights (delta_arranged_weights in problem.h,
 *     written once on frame 0 by 1_dense.cu's arrange_weights), so staging them is a
 *     straight 16-byte copy with no index arithmetic;
 *   - the unit's input with its halo, (8+k-1)^2 pixels x 4 channels: one 16-byte
 *     copy per pixel, zero-filled outside the image (and, for SOURCE_ACTIVE_ONLY, at
 *     inactive pixels).
 * Per filter row and channel a thread loads its row of the window (8+k-1 values)
 * once; per tap and channel it then makes two 16-byte weight loads for 64 FMAs.
 * Where c is not a multiple of 4 (or the source is not 16-byte aligned) the input is
 * copied 4 bytes at a time instead, zero past channel c.
 *
 * conv_unit() reads its source in one of two ways and stores in one of two ways:
 *   SOURCE_ALL          every pixel of src (the frame, or x_ref)
 *   SOURCE_ACTIVE_ONLY  src at pixels whose src_active byte is set, zero elsewhere (d)
 *   STORE_WITH_BIAS     dst = conv + bias
 *   STORE_ADD           dst += conv (a delta's contribution, no bias) */
#ifndef CONV_TILE_CUH
#define CONV_TILE_CUH

#include <stdint.h>

#include <type_traits>

#include "cp_async.cuh"
#include "cuda_check.h"
#include "kernels.h"

#define UNIT_COUT DELTA_UNIT_COUT /* output channels per block */
#define CHUNK DELTA_CHUNK         /* input channels per stage */
#define THREAD_COUT 8
#define COUT_GROUPS (UNIT_COUT / THREAD_COUT)   /* 8 */
#define UNIT_THREADS (DELTA_UNIT * COUT_GROUPS) /* 64: a thread per row and group */
#define HALF_COUT (UNIT_COUT / 2)
#define STAGES 2
/* Blocks of 64 threads per SM: 6 lets ptxas use 168 registers, and measured 8 % faster
 * on vtest-c64 than 8 blocks at 128 registers (a few bytes spilled). */
#define UNIT_MIN_BLOCKS 6
#define DEFAULT_SMEM_LIMIT (48 * 1024)

/* The shared memory of one filter size, in floats. */
template <int K> struct unit_tile {
    static constexpr int SIDE = DELTA_UNIT + K - 1;            /* input pixels per staged row */
    static constexpr int W_FLOATS = K * K * CHUNK * UNIT_COUT; /* a stage's weights */
    static constexpr int IN_FLOATS = SIDE * SIDE * CHUNK;      /* a stage's input */
    static constexpr int STAGE_FLOATS = W_FLOATS + IN_FLOATS;
    static constexpr size_t SMEM_BYTES = sizeof(float) * STAGES * STAGE_FLOATS;
};

struct conv_operands {
    const float *src;
    const uint8_t *src_active; /* SOURCE_ACTIVE_ONLY: one byte per pixel */
    const float *arranged;     /* the weights as delta_arranged_weights lays them out */
    const float *bias;
    float *dst;
    int h, w, c;
    bool vector_stores; /* c % 4 == 0 and dst 16-byte aligned */
};

enum conv_source { SOURCE_ALL, SOURCE_ACTIVE_ONLY };
enum conv_store { STORE_WITH_BIAS, STORE_ADD };

static inline __host__ __device__ int units_along(int extent)
{
    return (extent + DELTA_UNIT - 1) / DELTA_UNIT;
}

static inline __host__ __device__ int cout_blocks(int c)
{
    return (c + UNIT_COUT - 1) / UNIT_COUT;
}

static inline __host__ __device__ int chunks_of(int c)
{
    return (c + CHUNK - 1) / CHUNK;
}

/* Chunk q into one stage: the weights of the block's output channels, then the unit's
 * input with halo. Closes one group of copies. */
template <int K, enum conv_source SOURCE, bool VECTOR>
__device__ inline void stage_chunk(float *stage, const struct conv_operands &o,
                                   const float *block_weights, int q, int y0, int x0)
{
    typedef unit_tile<K> T;
    const float *w = block_weights + (size_t)q * T::W_FLOATS;
    for (int e = threadIdx.x; e < T::W_FLOATS / 4; e += UNIT_THREADS)
        copy_16_async(stage + 4 * e, w + 4 * e, true);
    float *in = stage + T::W_FLOATS;
    const int c0 = q * CHUNK;
    for (int p = threadIdx.x; p < T::SIDE * T::SIDE; p += UNIT_THREADS) {
        const int y = y0 - K / 2 + p / T::SIDE, x = x0 - K / 2 + p % T::SIDE;
        bool use = y >= 0 && y < o.h && x >= 0 && x < o.w;
        if (SOURCE == SOURCE_ACTIVE_ONLY)
            use = use && o.src_active[y * o.w + x];
        const float *src = use ? o.src + nhwc_at(o.w, o.c, y, x, c0) : o.src;
        if (VECTOR) {
            copy_16_async(in + p * CHUNK, src, use);
        } else {
#pragma unroll
            for (int ci = 0; ci < CHUNK; ci++) {
                const bool here = use && c0 + ci < o.c;
                copy_4_async(in + p * CHUNK + ci, here ? src + ci : o.src, here);
            }
        }
    }
    commit_copies();
}

/* Output channels co .. co+3 of one pixel (those below c). */
template <enum conv_store STORE>
__device__ inline void store_channels(const struct conv_operands &o, size_t at, int co,
                                      const float sum[4])
{
    float *out = o.dst + at;
    if (o.vector_stores) {
        float4 v = make_float4(sum[0], sum[1], sum[2], sum[3]);
        if (STORE == STORE_WITH_BIAS) {
            const float4 b = *(const float4 *)(o.bias + co);
            v.x += b.x, v.y += b.y, v.z += b.z, v.w += b.w;
        } else {
            const float4 old = *(const float4 *)out;
            v.x += old.x, v.y += old.y, v.z += old.z, v.w += old.w;
        }
        *(float4 *)out = v;
        return;
    }
    for (int e = 0; e < 4 && co + e < o.c; e++)
        out[e] = STORE == STORE_WITH_BIAS ? sum[e] + o.bias[co + e] : out[e] + sum[e];
}

/* Unit (uy, ux) for output-channel block `block`, in a block of UNIT_THREADS with
 * unit_tile<K>::SMEM_BYTES of dynamic shared memory. Every thread of the block must
 * call it (it synchronises). */
template <int K, enum conv_source SOURCE, enum conv_store STORE, bool VECTOR>
__device__ void conv_unit(const struct conv_operands &o, int uy, int ux, int block, float *smem)
{
    typedef unit_tile<K> T;
    const int y0 = uy * DELTA_UNIT, x0 = ux * DELTA_UNIT;
    const int group = threadIdx.x % COUT_GROUPS, row = threadIdx.x / COUT_GROUPS;
    const int chunks = chunks_of(o.c);
    const float *block_weights = o.arranged + (size_t)block * chunks * T::W_FLOATS;

    /* [page: conv-unit-ring] */
    float sum[THREAD_COUT][DELTA_UNIT] = {{0.0f}};
    stage_chunk<K, SOURCE, VECTOR>(smem, o, block_weights, 0, y0, x0);
    for (int q = 0; q < chunks; q++) {
        if (q + 1 < chunks) {
            stage_chunk<K, SOURCE, VECTOR>(smem + (q + 1) % STAGES * T::STAGE_FLOATS, o,
                                           block_weights, q + 1, y0, x0);
            wait_copies<1>();
        } else {
            wait_copies<0>();
        }
        __syncthreads(); /* chunk q has landed, everyone's copies of it */
        const float *w_tile = smem + q % STAGES * T::STAGE_FLOATS;
        const float *in_tile = w_tile + T::W_FLOATS;
    /* [/page: conv-unit-ring] */
        /* [page: conv-unit-fma] */
#pragma unroll(K <= 3 ? K : 1)
        for (int i = 0; i < K; i++)
#pragma unroll
            for (int ci = 0; ci < CHUNK; ci++) {
                float window[T::SIDE]; /* row + i of the unit's input, channel ci */
#pragma unroll
                for (int x = 0; x < T::SIDE; x++)
                    window[x] = in_tile[((row + i) * T::SIDE + x) * CHUNK + ci];
#pragma unroll
                for (int j = 0; j < K; j++) {
                    const float4 *w_row =
                        (const float4 *)(w_tile + ((i * K + j) * CHUNK + ci) * UNIT_COUT);
                    const float4 lo = w_row[group], hi = w_row[HALF_COUT / 4 + group];
                    const float w[THREAD_COUT] = {lo.x, lo.y, lo.z, lo.w, hi.x, hi.y, hi.z, hi.w};
#pragma unroll
                    for (int p = 0; p < DELTA_UNIT; p++)
#pragma unroll
                        for (int k = 0; k < THREAD_COUT; k++)
                            sum[k][p] = fmaf(w[k], window[p + j], sum[k][p]);
                }
            }
        /* The stage read here is refilled at the top of the next iteration. */
        __syncthreads();
        /* [/page: conv-unit-fma] */
    }

    const int y = y0 + row;
    if (y >= o.h)
        return;
#pragma unroll
    for (int p = 0; p < DELTA_UNIT; p++) {
        const int x = x0 + p;
        if (x >= o.w)
            continue;
#pragma unroll
        for (int half = 0; half < 2; half++) {
            const int co = block * UNIT_COUT + half * HALF_COUT + group * 4;
            if (co >= o.c)
                continue;
            const float four[4] = {sum[half * 4][p], sum[half * 4 + 1][p], sum[half * 4 + 2][p],
                                   sum[half * 4 + 3][p]};
            store_channels<STORE>(o, nhwc_at(o.w, o.c, y, x, co), co, four);
        }
    }
}

/* Calls f(std::integral_constant<int, K>()) for the layer's filter size K (odd, up to
 * DELTA_MAX_KSIZE = 7, as delta_shape_problem checks), so that a launcher
 * instantiates its kernel for it. */
template <typename F> static void with_ksize(int ksize, F f)
{
    switch (ksize) {
    case 1: f(std::integral_constant<int, 1>()); break;
    case 3: f(std::integral_constant<int, 3>()); break;
    case 5: f(std::integral_constant<int, 5>()); break;
    default: f(std::integral_constant<int, DELTA_MAX_KSIZE>()); break; /* 7 */
    }
}

/* The 16-byte input path needs whole 16-byte pieces of every pixel. */
static inline bool vector_source(const struct delta_args *a, const float *src)
{
    return a->c % CHUNK == 0 && (uintptr_t)src % 16 == 0;
}

/* Above 48 KB (a 5x5 or 7x7 layer) a kernel must opt in to its shared memory. */
template <typename Kernel> static void allow_smem(Kernel kernel, size_t bytes)
{
    if (bytes > DEFAULT_SMEM_LIMIT)
        CUDA_CHECK(
            cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)bytes));
}

/* The operands of a launch whose output goes to dst; the arranged weights are the
 * first part of every variant's state. */
static inline struct conv_operands conv_operands_for(const struct delta_args *a, const float *src,
                                                     const uint8_t *src_active, float *dst)
{
    struct conv_operands o;
    o.src = src;
    o.src_active = src_active;
    o.arranged = (const float *)a->state;
    o.bias = a->bias;
    o.dst = dst;
    o.h = a->h;
    o.w = a->w;
    o.c = a->c;
    o.vector_stores = a->c % 4 == 0 && (uintptr_t)dst % 16 == 0 && (uintptr_t)a->bias % 16 == 0;
    return o;
}

#endif
