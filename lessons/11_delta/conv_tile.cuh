/* The convolution every variant of lesson 11 runs on the units it decides to compute:
 * a direct NHWC convolution of one 8x8-pixel unit and 64 output channels per block of
 * 128 threads (the ideas of lesson 07's reg_block, laid out for channels-last data).
 *
 * Per chunk of input channels the block stages in shared memory
 *   - the unit's input with its halo, (8+k-1)^2 pixels x chunk channels, with an odd
 *     pitch per pixel so the four pixels a warp reads at once sit in four banks;
 *   - the chunk's weights for the block's 64 output channels as rows [tap][ci] of 64
 *     floats, padded to 68: the 8 input channels x 4 output channels a warp stores at
 *     once land in 32 different banks, and every row stays 16-byte aligned.
 * Each thread then owns 4 neighbouring pixels of one row x 8 output channels (32 sums
 * in registers): per tap and channel one new input from shared memory (a sliding
 * window along the row), two 16-byte weight reads, 32 FMAs. Its channels are
 * 4g..4g+3 and 32+4g..32+4g+3 for g = threadIdx.x % 8, so each quarter-warp's
 * 16-byte weight reads cover 128 consecutive bytes: no bank conflict.
 *
 * conv_unit() reads its source in one of two ways and stores in one of two ways:
 *   SOURCE_ALL          every pixel of src (the frame, or x_ref)
 *   SOURCE_ACTIVE_ONLY  src at pixels whose src_active byte is set, zero elsewhere (d)
 *   STORE_WITH_BIAS     dst = conv + bias
 *   STORE_ADD           dst += conv (a delta's contribution, no bias) */
#ifndef CONV_TILE_CUH
#define CONV_TILE_CUH

#include <stdint.h>

#include "cuda_check.h"
#include "kernels.h"

#define UNIT_COUT 64 /* output channels per block */
#define THREAD_PIXELS 4
#define THREAD_COUT 8
#define COUT_GROUPS (UNIT_COUT / THREAD_COUT)                                /* 8 */
#define UNIT_THREADS (DELTA_UNIT * DELTA_UNIT / THREAD_PIXELS * COUT_GROUPS) /* 128 */
#define HALF_COUT (UNIT_COUT / 2)
#define W_PITCH (UNIT_COUT + 4) /* floats per weight row: 16-byte rows, no store conflicts */
/* Shared memory for one chunk: 8 input channels of a 3x3 layer take 23 184 bytes, so
 * several blocks share an SM; one channel of a 7x7 layer takes 14 112, so no size the
 * lesson takes passes the 48 KB a block gets without opting in. */
#define CONV_CHUNK_BYTES 24576
#define CONV_MAX_CHUNK 16

enum conv_source { SOURCE_ALL, SOURCE_ACTIVE_ONLY };
enum conv_store { STORE_WITH_BIAS, STORE_ADD };

struct conv_operands {
    const float *src;
    const uint8_t *src_active; /* SOURCE_ACTIVE_ONLY: one byte per pixel */
    const float *weights;
    const float *bias;
    float *dst;
    int h, w, c, ksize;
    bool vector_stores; /* c % 4 == 0 and dst 16-byte aligned */
};

struct conv_geometry {
    int side;  /* input pixels per row of the staged tile: 8 + k - 1 */
    int chunk; /* input channels staged at once, a power of two */
    int pitch; /* floats per staged pixel: chunk rounded up to odd */
    size_t smem_bytes;
};

static inline struct conv_geometry conv_geometry_for(int c, int ksize)
{
    struct conv_geometry g;
    g.side = DELTA_UNIT + ksize - 1;
    const size_t per_channel = sizeof(float) * ((size_t)ksize * ksize * W_PITCH + g.side * g.side);
    g.chunk = 1;
    while (g.chunk * 2 <= CONV_MAX_CHUNK && g.chunk * 2 * per_channel <= CONV_CHUNK_BYTES &&
           g.chunk < c)
        g.chunk *= 2;
    g.pitch = g.chunk | 1;
    g.smem_bytes = sizeof(float) *
                   ((size_t)g.chunk * ksize * ksize * W_PITCH + (size_t)g.side * g.side * g.pitch);
    return g;
}

/* Weights of input channels [c0, c0 + count) for output channels [co0, co0 + 64) as
 * w_tile[tap * chunk + ci][co]; zero past the last output channel. Consecutive threads
 * take 8 input channels (32 contiguous bytes of a K x R x S x C row) of 4 output
 * channels. */
__device__ inline void stage_weights(float *w_tile, const struct conv_operands &o,
                                     const struct conv_geometry &g, int c0, int count, int co0)
{
    const int taps = o.ksize * o.ksize;
    for (int e = threadIdx.x; e < count * 4 * taps * (UNIT_COUT / 4); e += UNIT_THREADS) {
        const int ci = e % count;
        const int co_low = e / count % 4;
        const int tap = e / (count * 4) % taps;
        const int co = e / (count * 4 * taps) * 4 + co_low;
        const int k = co0 + co;
        w_tile[(tap * g.chunk + ci) * W_PITCH + co] =
            k < o.c ? o.weights[krsc_at(o.ksize, o.c, k, tap / o.ksize, tap % o.ksize, c0 + ci)]
                    : 0.0f;
    }
}

/* The unit's input with halo, channels [c0, c0 + count), as in_tile[pixel][ci]; zero
 * outside the image and, for SOURCE_ACTIVE_ONLY, at inactive pixels. Consecutive
 * threads take consecutive channels of one pixel: contiguous NHWC reads. */
template <enum conv_source SOURCE>
__device__ inline void stage_input(float *in_tile, const struct conv_operands &o,
                                   const struct conv_geometry &g, int c0, int count, int y0, int x0)
{
    const int r = o.ksize / 2;
    for (int e = threadIdx.x; e < g.side * g.side * count; e += UNIT_THREADS) {
        const int ci = e % count, p = e / count;
        const int y = y0 - r + p / g.side, x = x0 - r + p % g.side;
        bool use = y >= 0 && y < o.h && x >= 0 && x < o.w;
        if (SOURCE == SOURCE_ACTIVE_ONLY)
            use = use && o.src_active[y * o.w + x];
        in_tile[p * g.pitch + ci] = use ? o.src[nhwc_at(o.w, o.c, y, x, c0 + ci)] : 0.0f;
    }
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

/* Unit (uy, ux) for output channels [co0, co0 + 64), in a block of UNIT_THREADS.
 * Every thread of the block must call it (it synchronises). */
template <enum conv_source SOURCE, enum conv_store STORE>
__device__ void conv_unit(const struct conv_operands &o, const struct conv_geometry &g, int uy,
                          int ux, int co0, float *smem)
{
    float *w_tile = smem; /* [chunk * taps][W_PITCH], 16-byte aligned rows */
    float *in_tile = smem + g.chunk * o.ksize * o.ksize * W_PITCH; /* [side^2][pitch] */
    const int y0 = uy * DELTA_UNIT, x0 = ux * DELTA_UNIT;
    const int group = threadIdx.x % COUT_GROUPS;
    const int row = threadIdx.x / COUT_GROUPS / 2;
    const int col = threadIdx.x / COUT_GROUPS % 2 * THREAD_PIXELS;

    float sum[THREAD_COUT][THREAD_PIXELS] = {{0.0f}};
    for (int c0 = 0; c0 < o.c; c0 += g.chunk) {
        const int count = min(g.chunk, o.c - c0);
        stage_weights(w_tile, o, g, c0, count, co0);
        stage_input<SOURCE>(in_tile, o, g, c0, count, y0, x0);
        __syncthreads();
        for (int ci = 0; ci < count; ci++)
            for (int i = 0; i < o.ksize; i++) {
                const float *in_row = in_tile + ((row + i) * g.side + col) * g.pitch + ci;
                float window[THREAD_PIXELS];
#pragma unroll
                for (int p = 0; p < THREAD_PIXELS; p++)
                    window[p] = in_row[p * g.pitch];
                for (int j = 0; j < o.ksize; j++) {
                    if (j > 0) {
#pragma unroll
                        for (int p = 0; p < THREAD_PIXELS - 1; p++)
                            window[p] = window[p + 1];
                        window[THREAD_PIXELS - 1] = in_row[(j + THREAD_PIXELS - 1) * g.pitch];
                    }
                    const float4 *w_row =
                        (const float4 *)(w_tile + ((i * o.ksize + j) * g.chunk + ci) * W_PITCH);
                    const float4 lo = w_row[group], hi = w_row[HALF_COUT / 4 + group];
                    const float w[THREAD_COUT] = {lo.x, lo.y, lo.z, lo.w, hi.x, hi.y, hi.z, hi.w};
#pragma unroll
                    for (int k = 0; k < THREAD_COUT; k++)
#pragma unroll
                        for (int p = 0; p < THREAD_PIXELS; p++)
                            sum[k][p] = fmaf(w[k], window[p], sum[k][p]);
                }
            }
        /* The next chunk overwrites both tiles. */
        __syncthreads();
    }

    const int y = y0 + row;
#pragma unroll
    for (int p = 0; p < THREAD_PIXELS; p++) {
        const int x = x0 + col + p;
        if (y >= o.h || x >= o.w)
            continue;
#pragma unroll
        for (int half = 0; half < 2; half++) {
            const int co = co0 + half * HALF_COUT + group * 4;
            if (co >= o.c)
                continue;
            const float four[4] = {sum[half * 4][p], sum[half * 4 + 1][p], sum[half * 4 + 2][p],
                                   sum[half * 4 + 3][p]};
            store_channels<STORE>(o, nhwc_at(o.w, o.c, y, x, co), co, four);
        }
    }
}

static inline __host__ __device__ int units_along(int extent)
{
    return (extent + DELTA_UNIT - 1) / DELTA_UNIT;
}

static inline __host__ __device__ int cout_blocks(int c)
{
    return (c + UNIT_COUT - 1) / UNIT_COUT;
}

/* The operands of a launch whose output goes to dst. */
static inline struct conv_operands conv_operands_for(const struct delta_args *a, const float *src,
                                                     const uint8_t *src_active, float *dst)
{
    struct conv_operands o;
    o.src = src;
    o.src_active = src_active;
    o.weights = a->weights;
    o.bias = a->bias;
    o.dst = dst;
    o.h = a->h;
    o.w = a->w;
    o.c = a->c;
    o.ksize = a->ksize;
    o.vector_stores = a->c % 4 == 0 && (uintptr_t)dst % 16 == 0 && (uintptr_t)a->bias % 16 == 0;
    return o;
}

#endif
