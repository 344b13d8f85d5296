/* The pieces both implicit-GEMM kernels of lesson 07 share (4_implicit_gemm.cu and
 * 5_implicit_gemm_async.cu): the tile shape, the weight matrix built by
 * setup_conv2d_implicit_gemm, where a pixel reads its input, how a reduction row
 * walks the (tap, channel) order, the 8x8 outer products and the epilogue. They
 * differ only in how a slice is gathered and travels from global to shared memory. */
#ifndef IMPLICIT_GEMM_TILE_CUH
#define IMPLICIT_GEMM_TILE_CUH

#include "conv_problem.h"

#define GEMM_BM 128      /* output channels per block tile */
#define GEMM_BM_SMALL 64 /* the tile height for layers with at most 64 output channels */
#define GEMM_BN 128      /* pixels per block tile */
#define GEMM_TM 8        /* output channels per thread */
#define GEMM_TN 8        /* pixels per thread */
#define GEMM_BK 8        /* reduction depth of implicit_gemm's slices */
#define WARP_ROWS 4      /* a warp computes 4 x 8 threads' worth of outputs */
#define WARP_COLS 8
/* One thread per 8x8 outputs of a BM x GEMM_BN block tile. */
#define GEMM_THREADS(BM) ((BM)*GEMM_BN / (GEMM_TM * GEMM_TN))
/* Two blocks of 256 threads (four of 128) per SM caps a thread at 128 registers. */
#define GEMM_THREADS_PER_SM 512
/* A pixel past the end of the batch gets this row, which no filter tap (|dy| <= 15)
 * brings back into the image, so its loads are skipped like padding. */
#define OUTSIDE_ROW (-2 * MAX_KSIZE)

/* cout rounded up to 4: the row pitch of the weight matrix, so that 4 output
 * channels of one row are one aligned 16-byte load. */
static inline int padded_cout(const struct conv_shape *s)
{
    return (s->cout + 3) / 4 * 4;
}

/* The weights as a [cin * ksize^2][padded_cout] row-major matrix in (tap, channel)
 * row order, built in a->scratch by setup_conv2d_implicit_gemm (4_implicit_gemm.cu). */
const float *implicit_gemm_matrix(const struct conv_args *a);

/* Where output pixel p (any image of the batch) reads its input: the offset of
 * (image, channel 0, y, x), and y and x to test against the image borders. */
struct __align__(16) pixel_origin
{
    int base, y, x, unused; /* 16 bytes: one shared-memory load */
};
/* One reduction row of the X tile: input channel c under tap (dy, dx), both
 * relative to the output pixel. dy > pad marks a row past the end of the depth. */
struct gather_row {
    int c, dy, dx;
};

static __device__ __forceinline__ struct pixel_origin find_pixel(const struct conv_shape *s,
                                                                 unsigned p)
{
    const int plane = s->h * s->w;
    if (p >= (unsigned)(s->n * plane)) {
        const struct pixel_origin outside = {0, OUTSIDE_ROW, 0, 0};
        return outside;
    }
    const int image = (int)(p / plane), yx = (int)(p % plane);
    const struct pixel_origin o = {image * s->cin * plane + yx, yx / s->w, yx % s->w, 0};
    return o;
}

static __device__ __forceinline__ struct gather_row first_row(const struct conv_shape *s, int l)
{
    const int tap = l / s->cin, pad = s->ksize / 2;
    const struct gather_row r = {l % s->cin, tap / s->ksize - pad, tap % s->ksize - pad};
    return r;
}

/* Moves a row `step` further down the depth: next channels, and the next tap each
 * time the channels run out (several times when cin < step). No division. */
static __device__ __forceinline__ void advance_row(struct gather_row *r, const struct conv_shape *s,
                                                   int step)
{
    const int pad = s->ksize / 2;
    r->c += step;
    while (r->c >= s->cin) {
        r->c -= s->cin;
        if (++r->dx > pad) {
            r->dx = -pad;
            r->dy++;
        }
    }
}

/* True when the input under row r of pixel o lies in the image (not padding, not
 * past the batch, not past the depth). */
static __device__ __forceinline__ bool
input_inside(const struct conv_shape *s, const struct pixel_origin *o, const struct gather_row *r)
{
    return r->dy <= s->ksize / 2 && (unsigned)(o->y + r->dy) < (unsigned)s->h &&
           (unsigned)(o->x + r->dx) < (unsigned)s->w;
}

/* The BK outer products of one staged slice. Thread (ty, tx) owns channels
 * 4ty.. and BM/2+4ty.., pixels 4tx.. and BN/2+4tx..; a warp's 4 x 8 threads then
 * read 4 + 8 distinct float4 per step: no bank conflicts, broadcasts for the rest. */
template <int BM, int BK>
static __device__ __forceinline__ void
multiply_slice(float sum[GEMM_TM][GEMM_TN], const float (*w_tile)[BM],
               const float (*x_tile)[GEMM_BN], int ty, int tx)
{
    /* [page: multiply-slice] */
#pragma unroll
    for (int kk = 0; kk < BK; kk++) {
        const float4 a_lo = *(const float4 *)&w_tile[kk][ty * 4];
        const float4 a_hi = *(const float4 *)&w_tile[kk][BM / 2 + ty * 4];
        const float4 b_lo = *(const float4 *)&x_tile[kk][tx * 4];
        const float4 b_hi = *(const float4 *)&x_tile[kk][GEMM_BN / 2 + tx * 4];
        const float a[GEMM_TM] = {a_lo.x, a_lo.y, a_lo.z, a_lo.w, a_hi.x, a_hi.y, a_hi.z, a_hi.w};
        const float b[GEMM_TN] = {b_lo.x, b_lo.y, b_lo.z, b_lo.w, b_hi.x, b_hi.y, b_hi.z, b_hi.w};
#pragma unroll
        for (int i = 0; i < GEMM_TM; i++)
#pragma unroll
            for (int j = 0; j < GEMM_TN; j++)
                sum[i][j] = fmaf(a[i], b[j], sum[i][j]);
    }
    /* [/page: multiply-slice] */
}

/* Adds bias and writes the thread's 8 channels x 8 pixels: channels
 * m0 + {4ty..4ty+3, BM/2+4ty..}, pixels p0 + {4tx..4tx+3, BN/2+4tx..}. */
template <int BM>
static __device__ __forceinline__ void
store_tile(float *__restrict__ output, const float *__restrict__ bias, const struct conv_shape *s,
           float sum[GEMM_TM][GEMM_TN], int m0, unsigned p0, int ty, int tx, bool vector_stores)
{
    const int plane = s->h * s->w;
    int k[GEMM_TM];
    float b[GEMM_TM];
#pragma unroll
    for (int i = 0; i < GEMM_TM; i++) {
        k[i] = m0 + (i / 4) * (BM / 2) + ty * 4 + i % 4;
        b[i] = bias && k[i] < s->cout ? bias[k[i]] : 0.0f;
    }
#pragma unroll
    for (int half = 0; half < 2; half++) {
        const unsigned p = p0 + half * (GEMM_BN / 2) + tx * 4;
        if (vector_stores) {
            /* plane % 4 == 0: the 4 pixels are in one image and 16-byte aligned. */
            if (p >= (unsigned)(s->n * plane))
                continue;
            const int at = (int)(p / plane) * s->cout * plane + (int)(p % plane);
#pragma unroll
            for (int i = 0; i < GEMM_TM; i++)
                if (k[i] < s->cout)
                    *(float4 *)(output + at + k[i] * plane) =
                        make_float4(sum[i][half * 4] + b[i], sum[i][half * 4 + 1] + b[i],
                                    sum[i][half * 4 + 2] + b[i], sum[i][half * 4 + 3] + b[i]);
        } else {
#pragma unroll
            for (int j = 0; j < 4; j++) {
                const unsigned q = p + j;
                if (q >= (unsigned)(s->n * plane))
                    break;
                const int at = (int)(q / plane) * s->cout * plane + (int)(q % plane);
#pragma unroll
                for (int i = 0; i < GEMM_TM; i++)
                    if (k[i] < s->cout)
                        output[at + k[i] * plane] = sum[i][half * 4 + j] + b[i];
            }
        }
    }
}

#endif
