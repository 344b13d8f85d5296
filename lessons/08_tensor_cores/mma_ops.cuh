/* The warp-level tensor-core instructions of lesson 08, one wrapper each, and what
 * each storage type means to them. A tensor-core instruction is issued by a whole
 * warp: every lane holds a few elements of the A, B and C tiles (a fragment), in an
 * order the PTX ISA fixes for each shape ("Matrix Fragments for mma.m16n8k16").
 *
 *   fp16, bf16   mma.m16n8k16: A 16x16, B 16x8, 2 elements per 32-bit register
 *   tf32         mma.m16n8k8:  A 16x8,  B 8x8,  1 element per register
 *
 * Both shapes read 32 bytes of k per row, so the kernels move data in 16-byte
 * chunks and one code path serves every type: a k-step is two chunks. */
#ifndef MMA_OPS_CUH
#define MMA_OPS_CUH

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <stdint.h>

#include "ldmatrix.cuh"
#include "mma_m16n8.cuh"

#define CHUNK_BYTES 16
#define KSTEP_CHUNKS 2 /* 32 bytes of k per mma */

/* One warp's tile: acc[i][j] += a[i] * b[j] for MT 16-row fragments of A and NT
 * 8-column fragments of B, with the mma `Mma`. */
template <typename Mma, int MT, int NT>
static __device__ __forceinline__ void
multiply_fragments(float (&acc)[MT][NT][4], const uint32_t (&a)[MT][4], const uint32_t (&b)[NT][2])
{
#pragma unroll
    for (int i = 0; i < MT; i++)
#pragma unroll
        for (int j = 0; j < NT; j++)
            Mma::run(acc[i][j], a[i], b[j]);
}

/* d += a * b for one 16x8 tile (mma_m16n8.cuh): every mma of this lesson takes 4 fp32
 * accumulators, 4 registers of A and 2 of B; only the instruction's name differs. */
#if __CUDA_ARCH__ >= 800
#define MMA_SYNC(instruction, d, a, b) MMA_M16N8(instruction, "f", d, a, b)
#else
#define MMA_SYNC(instruction, d, a, b) __trap()
#endif

struct mma_f16_m16n8k16 {
    static __device__ __forceinline__ void run(float d[4], const uint32_t a[4], const uint32_t b[2])
    {
        MMA_SYNC("mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32", d, a, b);
    }
};

struct mma_bf16_m16n8k16 {
    static __device__ __forceinline__ void run(float d[4], const uint32_t a[4], const uint32_t b[2])
    {
        MMA_SYNC("mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32", d, a, b);
    }
};

struct mma_tf32_m16n8k8 {
    static __device__ __forceinline__ void run(float d[4], const uint32_t a[4], const uint32_t b[2])
    {
        MMA_SYNC("mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32", d, a, b);
    }
};

/* A pair of neighbouring output channels (or one, when pair is false), in the
 * output's type: fp16 and bf16 layers write their own type, as the library does; the
 * others write fp32. */
static __device__ __forceinline__ void store_pair(__half *p, float v0, float v1, bool pair)
{
    if (pair)
        *reinterpret_cast<__half2 *>(p) = __floats2half2_rn(v0, v1);
    else
        *p = __float2half_rn(v0);
}

static __device__ __forceinline__ void store_pair(__nv_bfloat16 *p, float v0, float v1, bool pair)
{
    if (pair)
        *reinterpret_cast<__nv_bfloat162 *>(p) = __floats2bfloat162_rn(v0, v1);
    else
        *p = __float2bfloat16_rn(v0);
}

static __device__ __forceinline__ void store_pair(float *p, float v0, float v1, bool pair)
{
    if (pair)
        *reinterpret_cast<float2 *>(p) = make_float2(v0, v1);
    else
        *p = v0;
}

/* f(i, j, e) for every accumulator e of every mma tile (i, j) of a warp's MT x NT. */
template <int MT, int NT, typename F>
static __device__ __forceinline__ void each_accumulator(const F &f)
{
#pragma unroll
    for (int i = 0; i < MT; i++)
#pragma unroll
        for (int j = 0; j < NT; j++)
#pragma unroll
            for (int e = 0; e < 4; e++)
                f(i, j, e);
}

template <int MT, int NT> static __device__ __forceinline__ void zero(float (&x)[MT][NT][4])
{
    each_accumulator<MT, NT>([&](int i, int j, int e) { x[i][j][e] = 0.0f; });
}

/* sum += part with fp32 adds, rounded to nearest: off the tensor cores. */
template <int MT, int NT>
static __device__ __forceinline__ void add_to(float (&sum)[MT][NT][4],
                                              const float (&part)[MT][NT][4])
{
    each_accumulator<MT, NT>([&](int i, int j, int e) { sum[i][j][e] += part[i][j][e]; });
}

/* A storage type multiplied by one mma per product: its element (also the output's
 * type), its instruction, and a warp's accumulators for MT x NT mma tiles. A kernel
 * calls begin_stage() before the k-steps of a stage in shared memory, multiply() per
 * k-step, end_stage() after them, and finish() before it reads sum. */
template <typename Elem, typename Mma> struct one_mma {
    typedef Elem elem;
    typedef Elem out;
    template <int MT, int NT> struct accumulators {
        float sum[MT][NT][4] = {};
        __device__ __forceinline__ void begin_stage()
        {
        }
        __device__ __forceinline__ void multiply(uint32_t (&a)[MT][4], uint32_t (&b)[NT][2])
        {
            multiply_fragments<Mma>(sum, a, b);
        }
        __device__ __forceinline__ void end_stage()
        {
        }
        __device__ __forceinline__ void finish()
        {
        }
    };
};

typedef one_mma<__half, mma_f16_m16n8k16> mma_fp16;
typedef one_mma<__nv_bfloat16, mma_bf16_m16n8k16> mma_bf16;
/* fp32 data in TF32: the tensor core reads the top 19 bits of each operand (sign,
 * exponent, 10 mantissa bits) and ignores the rest: what PyTorch does by default
 * for convolutions. */
typedef one_mma<float, mma_tf32_m16n8k8> mma_tf32;

/* The extern "C" entry points PREFIX_fp16, PREFIX_bf16 and PREFIX_tf32: launch<Op> on
 * each storage type. */
#define PRECISION_LAUNCHERS(PREFIX, launch)                                                        \
    extern "C" void PREFIX##_fp16(const struct conv_args *a)                                       \
    {                                                                                              \
        launch<mma_fp16>(a);                                                                       \
    }                                                                                              \
    extern "C" void PREFIX##_bf16(const struct conv_args *a)                                       \
    {                                                                                              \
        launch<mma_bf16>(a);                                                                       \
    }                                                                                              \
    extern "C" void PREFIX##_tf32(const struct conv_args *a)                                       \
    {                                                                                              \
        launch<mma_tf32>(a);                                                                       \
    }

/* The 13 low mantissa bits that TF32 drops. */
#define TF32_DROPPED_BITS 0x1fffu

/* x rounded to the nearest TF32 value, as a 32-bit pattern with the dropped bits
 * cleared, so that the split below subtracts exactly the value the tensor core
 * multiplies. */
static __device__ __forceinline__ uint32_t to_tf32(float x)
{
    uint32_t r;
#if __CUDA_ARCH__ >= 800
    asm("cvt.rna.tf32.f32 %0, %1;\n" : "=r"(r) : "f"(x));
#else
    r = __float_as_uint(x);
#endif
    return r & ~TF32_DROPPED_BITS;
}

/* Splits n fp32 patterns x into big = tf32(x) (in place) and small = tf32(x - big). */
template <int N>
static __device__ __forceinline__ void split_tf32(uint32_t (&x)[N], uint32_t (&small)[N])
{
#pragma unroll
    for (int i = 0; i < N; i++) {
        const float v = __uint_as_float(x[i]);
        x[i] = to_tf32(v);
        small[i] = to_tf32(v - __uint_as_float(x[i]));
    }
}

/* 3xTF32: each fp32 operand is split as big + small, which together keep about 21
 * of its 24 bits, and a*b ~ big_a*big_b + big_a*small_b + small_a*big_b (small*small
 * is below fp32's rounding): fp32 accuracy from three tensor-core products.
 *
 * Splitting is not enough. The tensor core adds into its accumulator with truncation
 * (round toward zero), so an accumulator that runs over all of K drifts, always the
 * same way: measured, its error grew in proportion to K, to 37 times cuDNN's fp32
 * error at K = 9216 (docs/08_tensor_cores.md). So the big products of one tile go
 * into `tile`, which starts from zero (small, so its truncation is small), and the
 * kernel adds it to the running sum with an ordinary rounded fp32 add; the small
 * products, 2^-11 of the big ones, accumulate in `small` over all K, where their drift
 * is negligible. The stage is the tile: each begin_stage() starts `tile` from zero. */
struct mma_3xtf32 {
    typedef float elem;
    typedef float out;
    /* [page: split-accumulators] */
    template <int MT, int NT> struct accumulators {
        float sum[MT][NT][4] = {};
        float tile[MT][NT][4];       /* this stage's big products */
        float small[MT][NT][4] = {}; /* every small product */
        __device__ __forceinline__ void begin_stage()
        {
            zero(tile);
        }
        __device__ __forceinline__ void end_stage()
        {
            add_to(sum, tile);
        }
        __device__ __forceinline__ void finish()
        {
            add_to(sum, small);
        }
        /* [/page: split-accumulators] */
        __device__ __forceinline__ void multiply(uint32_t (&a)[MT][4], uint32_t (&b)[NT][2])
        {
            uint32_t a_small[MT][4], b_small[NT][2];
#pragma unroll
            for (int i = 0; i < MT; i++)
                split_tf32(a[i], a_small[i]);
#pragma unroll
            for (int j = 0; j < NT; j++)
                split_tf32(b[j], b_small[j]);
            multiply_fragments<mma_tf32_m16n8k8>(small, a_small, b);
            multiply_fragments<mma_tf32_m16n8k8>(small, a, b_small);
            multiply_fragments<mma_tf32_m16n8k8>(tile, a, b);
        }
    };
};

#endif
