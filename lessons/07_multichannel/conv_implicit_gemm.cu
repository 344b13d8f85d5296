/* Lesson 07, variant "implicit_gemm": the convolution is the matrix product
 * out[k][p] = sum_l W[k][l] * X[l][p] with k the output channel, p a pixel of any
 * image of the batch and l = (tap, input channel), so it runs as an SGEMM-style
 * kernel (128x128 block tile, 8x8 outputs per thread, 16-byte shared-memory reads,
 * double buffering) whose X tiles are gathered straight from the NCHW input.
 *
 *   build/bin/07_multichannel --preset unet-128x128 --variant implicit_gemm
 */
#include <stdint.h>

#include "conv_problem.h"
#include "cuda_check.h"
#include "kernels.h"

#define GEMM_BM 128      /* output channels per block tile */
#define GEMM_BM_SMALL 64 /* the tile height for layers with at most 64 output channels */
#define GEMM_BN 128      /* pixels per block tile */
#define GEMM_BK 8        /* reduction depth of one staged slice */
#define GEMM_TM 8        /* output channels per thread */
#define GEMM_TN 8        /* pixels per thread */
#define WARP_ROWS 4      /* a warp computes 4 x 8 threads' worth of outputs */
#define WARP_COLS 8
/* One thread per 8x8 outputs of a BM x GEMM_BN block tile. */
#define GEMM_THREADS(BM) ((BM)*GEMM_BN / (GEMM_TM * GEMM_TN))
/* Two blocks of 256 threads (four of 128) per SM caps a thread at 128 registers. */
#define GEMM_THREADS_PER_SM 512
/* A pixel past the end of the batch gets this row, which no filter tap (|dy| <= 15)
 * brings back into the image, so its loads are skipped like padding. */
#define OUTSIDE_ROW (-2 * MAX_KSIZE)
#define TRANSPOSE_BLOCK 256
#define TRANSPOSE_MAX_BLOCKS 65536

/* The weights as a [depth][kpad] row-major matrix, depth = cin * ksize^2 in
 * (tap, channel) order and kpad = cout rounded up to 4 (zero columns), so a block
 * reads a slice of it with aligned 16-byte loads. Built once by prepare. */
static float *weight_matrix;
static size_t weight_matrix_bytes;

static int padded_cout(const struct conv_shape *s)
{
    return (s->cout + 3) / 4 * 4;
}

/* Row l of the matrix is tap l / cin of input channel l % cin: consecutive rows
 * read the same shifted window of consecutive channel planes. */
__global__ void weights_to_matrix(const float *__restrict__ weights, float *__restrict__ matrix,
                                  struct conv_shape s, int kpad)
{
    const long long taps = (long long)s.ksize * s.ksize;
    const long long total = taps * s.cin * kpad;
    for (long long at = (long long)blockIdx.x * blockDim.x + threadIdx.x; at < total;
         at += (long long)gridDim.x * blockDim.x) {
        const int k = (int)(at % kpad);
        const long long l = at / kpad;
        const long long c = l % s.cin, tap = l / s.cin;
        matrix[at] = k < s.cout ? weights[(k * s.cin + c) * taps + tap] : 0.0f;
    }
}

extern "C" void prepare_conv2d_implicit_gemm(const struct conv_args *a)
{
    const struct conv_shape *s = &a->shape;
    const int kpad = padded_cout(s);
    const long long total = (long long)s->ksize * s->ksize * s->cin * kpad;
    const size_t bytes = (size_t)total * sizeof(float);
    if (bytes > weight_matrix_bytes) {
        CUDA_CHECK(cudaFree(weight_matrix));
        CUDA_CHECK(cudaMalloc(&weight_matrix, bytes));
        weight_matrix_bytes = bytes;
    }
    long long blocks = (total + TRANSPOSE_BLOCK - 1) / TRANSPOSE_BLOCK;
    blocks = blocks < TRANSPOSE_MAX_BLOCKS ? blocks : TRANSPOSE_MAX_BLOCKS;
    weights_to_matrix<<<(int)blocks, TRANSPOSE_BLOCK>>>(a->weights, weight_matrix, *s, kpad);
    CUDA_CHECK_LAUNCH();
}

/* Where output pixel p (any image of the batch) reads its input: the offset of
 * (image, channel 0, y, x), and y and x to test against the image borders. Kept
 * in a per-block shared table rather than 12 registers per thread, which the
 * 8x8 accumulators cannot spare. */
struct __align__(16) pixel_origin
{
    int base, y, x, unused; /* 16 bytes: one shared-memory load */
};
/* One reduction row of the X tile: input channel c under tap (dy, dx), both
 * relative to the output pixel. dy > pad marks a row past the end of the depth. */
struct gather_row {
    int c, dy, dx;
};

__device__ struct pixel_origin find_pixel(const struct conv_shape *s, unsigned p)
{
    const int plane = s->h * s->w;
    const int image = (int)(p / plane), yx = (int)(p % plane);
    struct pixel_origin o = {image * s->cin * plane + yx, yx / s->w, yx % s->w, 0};
    if (p >= (unsigned)(s->n * plane))
        o.y = OUTSIDE_ROW;
    return o;
}

__device__ struct gather_row first_row(const struct conv_shape *s, int l)
{
    const int tap = l / s->cin, pad = s->ksize / 2;
    struct gather_row r = {l % s->cin, tap / s->ksize - pad, tap % s->ksize - pad};
    return r;
}

/* Moves a row GEMM_BK further down the depth: next channels, and the next tap
 * each time the channels run out (several times when cin < GEMM_BK). */
__device__ void advance_row(struct gather_row *r, const struct conv_shape *s)
{
    const int pad = s->ksize / 2;
    r->c += GEMM_BK;
    while (r->c >= s->cin) {
        r->c -= s->cin;
        if (++r->dx > pad) {
            r->dx = -pad;
            r->dy++;
        }
    }
}

/* One row of the X tile for the thread's pixels (lane + 32 j of the block's);
 * zero where the tap falls in the padding, past the batch, or past the depth. */
__device__ void gather(float v[GEMM_BN / 32], const float *__restrict__ input,
                       const struct conv_shape *s, const struct pixel_origin *pixel_table,
                       const struct gather_row *r)
{
    const bool row_inside = r->dy <= s->ksize / 2;
    const int offset = r->c * s->h * s->w + r->dy * s->w + r->dx;
#pragma unroll
    for (int j = 0; j < GEMM_BN / 32; j++) {
        const struct pixel_origin o = pixel_table[threadIdx.x % 32 + 32 * j];
        const bool inside = row_inside && (unsigned)(o.y + r->dy) < (unsigned)s->h &&
                            (unsigned)(o.x + r->dx) < (unsigned)s->w;
        v[j] = inside ? __ldg(input + o.base + offset) : 0.0f;
    }
}

/* Adds bias and writes the thread's 8 channels x 8 pixels: channels
 * m0 + {4ty..4ty+3, BM/2+4ty..}, pixels p0 + {4tx..4tx+3, BN/2+4tx..}. */
template <int BM>
__device__ void store_tile(float *__restrict__ output, const float *__restrict__ bias,
                           const struct conv_shape *s, float sum[GEMM_TM][GEMM_TN], int m0,
                           unsigned p0, int ty, int tx, bool vector_stores)
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

template <int BM>
__global__ void __launch_bounds__(GEMM_THREADS(BM), GEMM_THREADS_PER_SM / GEMM_THREADS(BM))
    conv2d_implicit_gemm(const float *__restrict__ input, const float *__restrict__ matrix,
                         const float *__restrict__ bias, float *__restrict__ output,
                         struct conv_shape s, int kpad, bool vector_stores)
{
    constexpr int THREADS = GEMM_THREADS(BM);
    constexpr int WARPS = THREADS / 32;
    constexpr int WARPS_X = GEMM_BN / GEMM_TN / WARP_COLS;
    constexpr int B_ROWS = GEMM_BK / WARPS; /* X-tile rows each thread gathers */
    constexpr int B_PIXELS = GEMM_BN / 32;
    static_assert(GEMM_BK * BM / 4 == THREADS, "one float4 of weights per thread per slice");
    static_assert(B_ROWS * WARPS == GEMM_BK, "whole X-tile rows per warp");

    __shared__ __align__(16) float w_tile[2][GEMM_BK][BM];
    __shared__ __align__(16) float x_tile[2][GEMM_BK][GEMM_BN];
    __shared__ struct pixel_origin pixel_table[GEMM_BN];

    const int lane = threadIdx.x % 32, warp = threadIdx.x / 32;
    const int m0 = blockIdx.y * BM;
    const unsigned p0 = blockIdx.x * GEMM_BN; /* p0 + 127 may pass INT_MAX */
    const int depth = s.cin * s.ksize * s.ksize;

    /* Thread (ty, tx) owns channels 4ty.. and BM/2+4ty.., pixels 4tx.. and 64+4tx..;
     * a warp's 4 x 8 threads then read 4 + 8 distinct float4 per step: no bank
     * conflicts, and broadcasts for the rest. */
    const int ty = warp / WARPS_X * WARP_ROWS + lane / WARP_COLS;
    const int tx = warp % WARPS_X * WARP_COLS + lane % WARP_COLS;

    /* Weight slice: thread t loads one float4 of row t / (BM/4). A float4 lies
     * wholly inside or outside [0, kpad) because kpad and the column are multiples of 4. */
    const int w_row = threadIdx.x / (BM / 4), w_col = threadIdx.x % (BM / 4) * 4;
    const bool w_col_inside = m0 + w_col < kpad;
    const float *w_src = matrix + (size_t)w_row * kpad + m0 + w_col;

    if (threadIdx.x < GEMM_BN)
        pixel_table[threadIdx.x] = find_pixel(&s, p0 + threadIdx.x);
    __syncthreads();
    struct gather_row rows[B_ROWS];
#pragma unroll
    for (int i = 0; i < B_ROWS; i++)
        rows[i] = first_row(&s, warp + i * WARPS);

    float4 w_next = make_float4(0.0f, 0.0f, 0.0f, 0.0f);
    float x_next[B_ROWS][B_PIXELS];
    float sum[GEMM_TM][GEMM_TN] = {{0.0f}};

    /* Slice 0 goes straight to buffer 0. */
    if (w_col_inside && w_row < depth)
        w_next = __ldg((const float4 *)w_src);
#pragma unroll
    for (int i = 0; i < B_ROWS; i++) {
        gather(x_next[i], input, &s, pixel_table, &rows[i]);
        advance_row(&rows[i], &s);
    }
    *(float4 *)&w_tile[0][w_row][w_col] = w_next;
#pragma unroll
    for (int i = 0; i < B_ROWS; i++)
#pragma unroll
        for (int j = 0; j < B_PIXELS; j++)
            x_tile[0][warp + i * WARPS][lane + 32 * j] = x_next[i][j];
    __syncthreads();

    int buf = 0;
    for (int l0 = 0; l0 < depth; l0 += GEMM_BK) {
        const bool more = l0 + GEMM_BK < depth;
        /* Issue the next slice's global loads now; they land while we compute. */
        if (more) {
            const int l = l0 + GEMM_BK;
            w_next = w_col_inside && l + w_row < depth
                         ? __ldg((const float4 *)(w_src + (size_t)l * kpad))
                         : make_float4(0.0f, 0.0f, 0.0f, 0.0f);
#pragma unroll
            for (int i = 0; i < B_ROWS; i++) {
                gather(x_next[i], input, &s, pixel_table, &rows[i]);
                advance_row(&rows[i], &s);
            }
        }
#pragma unroll
        for (int kk = 0; kk < GEMM_BK; kk++) {
            const float4 a_lo = *(const float4 *)&w_tile[buf][kk][ty * 4];
            const float4 a_hi = *(const float4 *)&w_tile[buf][kk][BM / 2 + ty * 4];
            const float4 b_lo = *(const float4 *)&x_tile[buf][kk][tx * 4];
            const float4 b_hi = *(const float4 *)&x_tile[buf][kk][GEMM_BN / 2 + tx * 4];
            const float a[GEMM_TM] = {a_lo.x, a_lo.y, a_lo.z, a_lo.w,
                                      a_hi.x, a_hi.y, a_hi.z, a_hi.w};
            const float b[GEMM_TN] = {b_lo.x, b_lo.y, b_lo.z, b_lo.w,
                                      b_hi.x, b_hi.y, b_hi.z, b_hi.w};
#pragma unroll
            for (int i = 0; i < GEMM_TM; i++)
#pragma unroll
                for (int j = 0; j < GEMM_TN; j++)
                    sum[i][j] = fmaf(a[i], b[j], sum[i][j]);
        }
        /* The other buffer was last read before the previous barrier, so it can
         * be refilled now; one barrier per slice then suffices. */
        if (more) {
            *(float4 *)&w_tile[buf ^ 1][w_row][w_col] = w_next;
#pragma unroll
            for (int i = 0; i < B_ROWS; i++)
#pragma unroll
                for (int j = 0; j < B_PIXELS; j++)
                    x_tile[buf ^ 1][warp + i * WARPS][lane + 32 * j] = x_next[i][j];
        }
        __syncthreads();
        buf ^= 1;
    }
    store_tile<BM>(output, bias, &s, sum, m0, p0, ty, tx, vector_stores);
}

template <int BM> static void launch_tile(const struct conv_args *a, bool vector_stores)
{
    const struct conv_shape *s = &a->shape;
    const long long pixels = (long long)s->n * s->h * s->w;
    const dim3 grid((unsigned)((pixels + GEMM_BN - 1) / GEMM_BN), (s->cout + BM - 1) / BM);
    conv2d_implicit_gemm<BM><<<grid, GEMM_THREADS(BM)>>>(
        a->input, weight_matrix, a->bias, a->output, *s, padded_cout(s), vector_stores);
    CUDA_CHECK_LAUNCH();
}

extern "C" void launch_conv2d_implicit_gemm(const struct conv_args *a)
{
    const struct conv_shape *s = &a->shape;
    const bool vector_stores = (s->h * s->w) % 4 == 0 && (uintptr_t)a->output % 16 == 0;
    /* A 128-row tile on a 64-channel layer would spend half its FMAs on zeros. */
    if (s->cout <= GEMM_BM_SMALL)
        launch_tile<GEMM_BM_SMALL>(a, vector_stores);
    else
        launch_tile<GEMM_BM>(a, vector_stores);
}
