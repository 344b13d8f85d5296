/* Lesson 07, variant "implicit_gemm": the convolution is the matrix product
 * out[k][p] = sum_l W[k][l] * X[l][p] with k the output channel, p a pixel of any
 * image of the batch and l = (tap, input channel), so it runs as an SGEMM-style
 * kernel (128x128 block tile, 8x8 outputs per thread, 16-byte shared-memory reads,
 * double buffering) whose X tiles are gathered straight from the NCHW input.
 *
 *   build/bin/07_multichannel --preset unet-128x128 --variant implicit_gemm
 */
#include <stdint.h>

#include "cuda_check.h"
#include "implicit_gemm.h"
#include "implicit_gemm_tile.cuh"

#define TRANSPOSE_BLOCK 256
#define TRANSPOSE_MAX_BLOCKS 65536

/* The weights as a [depth][kpad] row-major matrix, depth = cin * ksize^2 in
 * (tap, channel) order and kpad = cout rounded up to 4 (zero columns), so a block
 * reads a slice of it with aligned 16-byte loads. Built once by setup, in the
 * scratch memory the harness owns. */
static long long matrix_elements(const struct conv_shape *s)
{
    return (long long)s->ksize * s->ksize * s->cin * padded_cout(s);
}

extern "C" size_t implicit_gemm_scratch_bytes(const struct conv_shape *s)
{
    return (size_t)matrix_elements(s) * sizeof(float);
}

const float *implicit_gemm_matrix(const struct conv_args *a)
{
    return (const float *)a->scratch;
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

extern "C" void setup_conv2d_implicit_gemm(const struct conv_args *a)
{
    const struct conv_shape *s = &a->shape;
    const long long total = matrix_elements(s);
    long long blocks = (total + TRANSPOSE_BLOCK - 1) / TRANSPOSE_BLOCK;
    blocks = blocks < TRANSPOSE_MAX_BLOCKS ? blocks : TRANSPOSE_MAX_BLOCKS;
    weights_to_matrix<<<(int)blocks, TRANSPOSE_BLOCK, 0, a->stream>>>(
        weights_f32(a), (float *)a->scratch, *s, padded_cout(s));
    CUDA_CHECK_LAUNCH();
}

/* One row of the X tile for the thread's pixels (lane + 32 j of the block's);
 * zero where the tap falls in the padding, past the batch, or past the depth. */
__device__ void gather(float v[GEMM_BN / 32], const float *__restrict__ input,
                       const struct conv_shape *s, const struct pixel_origin *pixel_table,
                       const struct gather_row *r)
{
    /* [page: gather] */
    const bool row_inside = r->dy <= s->ksize / 2;
    const int offset = r->c * s->h * s->w + r->dy * s->w + r->dx;
#pragma unroll
    for (int j = 0; j < GEMM_BN / 32; j++) {
        const struct pixel_origin o = pixel_table[threadIdx.x % 32 + 32 * j];
        const bool inside = row_inside && (unsigned)(o.y + r->dy) < (unsigned)s->h &&
                            (unsigned)(o.x + r->dx) < (unsigned)s->w;
        v[j] = inside ? __ldg(input + o.base + offset) : 0.0f;
    }
    /* [/page: gather] */
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

    /* Thread (ty, tx) owns channels 4ty.. and BM/2+4ty.., pixels 4tx.. and 64+4tx..
     * (multiply_slice). */
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
        advance_row(&rows[i], &s, GEMM_BK);
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
                advance_row(&rows[i], &s, GEMM_BK);
            }
        }
        multiply_slice<BM, GEMM_BK>(sum, w_tile[buf], x_tile[buf], ty, tx);
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
    conv2d_implicit_gemm<BM><<<grid, GEMM_THREADS(BM), 0, a->stream>>>(
        input_f32(a), implicit_gemm_matrix(a), a->bias, output_f32(a), *s, padded_cout(s),
        vector_stores);
    CUDA_CHECK_LAUNCH();
}

extern "C" void launch_conv2d_implicit_gemm(const struct conv_args *a)
{
    const struct conv_shape *s = &a->shape;
    const bool vector_stores = (s->h * s->w) % 4 == 0 && (uintptr_t)output_f32(a) % 16 == 0;
    /* A 128-row tile on a 64-channel layer would spend half its FMAs on zeros. */
    if (s->cout <= GEMM_BM_SMALL)
        launch_tile<GEMM_BM_SMALL>(a, vector_stores);
    else
        launch_tile<GEMM_BM>(a, vector_stores);
}
