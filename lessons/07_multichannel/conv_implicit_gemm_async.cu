/* Lesson 07, variant "implicit_gemm_async": the implicit GEMM of conv_implicit_gemm.cu,
 * but each slice is copied global -> shared by cp.async (sm_80+) into a ring of three
 * stages, so the copies need no registers and no shared stores; freed of them, a thread
 * owns one pixel column and gathers 16-row slices with one border test per tap.
 *
 *   build/bin/07_multichannel --preset unet-128x128 --variant implicit_gemm_async
 */
#include <stdint.h>

#include "cp_async.cuh"
#include "cuda_check.h"
#include "implicit_gemm_tile.cuh"
#include "kernels.h"

#define ASYNC_BK 16    /* reduction depth of one slice: 1024 FMAs per thread per barrier */
#define ASYNC_STAGES 3 /* slices in the ring: one computed, up to two in flight */

/* Rows l0.. of the weight slice: thread t copies float4 column t % (BM/4) of rows
 * t / (BM/4) + step * j. A float4 lies wholly inside or outside [0, kpad) because
 * kpad and the column are multiples of 4. */
template <int BM, int THREADS>
static __device__ __forceinline__ void copy_weight_slice(float (*w_tile)[BM],
                                                         const float *__restrict__ matrix, int kpad,
                                                         int depth, int m0, int l0)
{
    constexpr int STEP = THREADS / (BM / 4);
    static_assert(ASYNC_BK % STEP == 0, "whole weight rows per pass");
    const int row = threadIdx.x / (BM / 4), col = threadIdx.x % (BM / 4) * 4;
#pragma unroll
    for (int j = 0; j < ASYNC_BK / STEP; j++) {
        const int i = row + j * STEP;
        const bool inside = m0 + col < kpad && l0 + i < depth;
        copy_16_async(&w_tile[i][col],
                      inside ? matrix + (size_t)(l0 + i) * kpad + m0 + col : matrix, inside);
    }
}

/* ROWS consecutive rows of the X slice, starting at row r, for the thread's pixel
 * column. In (tap, channel) order they are usually channels c..c+ROWS-1 of one tap:
 * one border test, then one copy per channel plane. */
template <int ROWS>
static __device__ __forceinline__ void
copy_input_rows(float (*x_rows)[GEMM_BN], int column, const float *__restrict__ input,
                const struct conv_shape *s, const struct pixel_origin *pixel, struct gather_row r)
{
    const int plane = s->h * s->w;
    if (r.c + ROWS <= s->cin) {
        const bool inside = input_inside(s, pixel, &r);
        /* Outside, every copy reads from channel plane i of image 0 (valid, since
         * i < ROWS <= cin) and writes zeros. */
        const float *src = input + (inside ? pixel->base + r.c * plane + r.dy * s->w + r.dx : 0);
#pragma unroll
        for (int i = 0; i < ROWS; i++)
            copy_4_async(&x_rows[i][column], src + (size_t)i * plane, inside);
    } else {
        /* The rows cross a tap (or cin < ROWS): each row on its own. */
#pragma unroll
        for (int i = 0; i < ROWS; i++) {
            const bool inside = input_inside(s, pixel, &r);
            copy_4_async(&x_rows[i][column],
                         input + (inside ? pixel->base + r.c * plane + r.dy * s->w + r.dx : 0),
                         inside);
            advance_row(&r, s, 1);
        }
    }
}

template <int BM>
__global__ void __launch_bounds__(GEMM_THREADS(BM), GEMM_THREADS_PER_SM / GEMM_THREADS(BM))
    conv2d_implicit_gemm_async(const float *__restrict__ input, const float *__restrict__ matrix,
                               const float *__restrict__ bias, float *__restrict__ output,
                               struct conv_shape s, int kpad, bool vector_stores)
{
    constexpr int THREADS = GEMM_THREADS(BM);
    constexpr int WARPS_X = GEMM_BN / GEMM_TN / WARP_COLS;
    constexpr int GROUPS = THREADS / GEMM_BN;     /* threads sharing a pixel column */
    constexpr int GROUP_ROWS = ASYNC_BK / GROUPS; /* X-slice rows each of them copies */
    static_assert(GROUPS * GROUP_ROWS == ASYNC_BK, "whole X-slice rows per thread");

    __shared__ __align__(16) float w_tile[ASYNC_STAGES][ASYNC_BK][BM];
    __shared__ __align__(16) float x_tile[ASYNC_STAGES][ASYNC_BK][GEMM_BN];

    const int lane = threadIdx.x % 32, warp = threadIdx.x / 32;
    const int m0 = blockIdx.y * BM;
    const unsigned p0 = blockIdx.x * GEMM_BN; /* p0 + 127 may pass INT_MAX */
    const int depth = s.cin * s.ksize * s.ksize;
    const int slices = (depth + ASYNC_BK - 1) / ASYNC_BK;
    const int ty = warp / WARPS_X * WARP_ROWS + lane / WARP_COLS;
    const int tx = warp % WARPS_X * WARP_COLS + lane % WARP_COLS;

    /* Thread t copies pixel column t % 128, rows (t / 128) * GROUP_ROWS.. of every
     * slice: a warp copies 32 neighbouring pixels of one channel plane, coalesced. The
     * pixel's origin stays in 3 registers for the whole kernel. */
    const int column = threadIdx.x % GEMM_BN, group = threadIdx.x / GEMM_BN;
    const struct pixel_origin pixel = find_pixel(&s, p0 + column);
    struct gather_row next_row = first_row(&s, group * GROUP_ROWS);

    float sum[GEMM_TM][GEMM_TN] = {{0.0f}};

    /* Fill all stages but one; a group is committed even when empty so that
     * "group t is complete" always means "slice t has landed". */
    for (int t = 0; t < ASYNC_STAGES - 1; t++) {
        if (t < slices) {
            copy_weight_slice<BM, THREADS>(w_tile[t], matrix, kpad, depth, m0, t * ASYNC_BK);
            copy_input_rows<GROUP_ROWS>(&x_tile[t][group * GROUP_ROWS], column, input, &s, &pixel,
                                        next_row);
            advance_row(&next_row, &s, ASYNC_BK);
        }
        commit_copies();
    }

    int stage = 0, fill_stage = ASYNC_STAGES - 1;
    for (int t = 0; t < slices; t++) {
        wait_copies<ASYNC_STAGES - 2>(); /* this thread's copies of slice t landed */
        /* Everyone's copies of slice t landed, and everyone finished computing slice
         * t - 1, whose stage is refilled next: one barrier per slice. */
        __syncthreads();
        const int fill = t + ASYNC_STAGES - 1;
        if (fill < slices) {
            copy_weight_slice<BM, THREADS>(w_tile[fill_stage], matrix, kpad, depth, m0,
                                           fill * ASYNC_BK);
            copy_input_rows<GROUP_ROWS>(&x_tile[fill_stage][group * GROUP_ROWS], column, input, &s,
                                        &pixel, next_row);
            advance_row(&next_row, &s, ASYNC_BK);
        }
        commit_copies();
        multiply_slice<BM, ASYNC_BK>(sum, w_tile[stage], x_tile[stage], ty, tx);
        stage = stage + 1 == ASYNC_STAGES ? 0 : stage + 1;
        fill_stage = fill_stage + 1 == ASYNC_STAGES ? 0 : fill_stage + 1;
    }
    store_tile<BM>(output, bias, &s, sum, m0, p0, ty, tx, vector_stores);
}

template <int BM> static void launch_tile(const struct conv_args *a, bool vector_stores)
{
    const struct conv_shape *s = &a->shape;
    const long long pixels = (long long)s->n * s->h * s->w;
    const dim3 grid((unsigned)((pixels + GEMM_BN - 1) / GEMM_BN), (s->cout + BM - 1) / BM);
    conv2d_implicit_gemm_async<BM><<<grid, GEMM_THREADS(BM), 0, a->stream>>>(
        input_f32(a), implicit_gemm_matrix(a), a->bias, output_f32(a), *s, padded_cout(s),
        vector_stores);
    CUDA_CHECK_LAUNCH();
}

extern "C" void launch_conv2d_implicit_gemm_async(const struct conv_args *a)
{
    const struct conv_shape *s = &a->shape;
    const bool vector_stores = (s->h * s->w) % 4 == 0 && (uintptr_t)output_f32(a) % 16 == 0;
    if (s->cout <= GEMM_BM_SMALL)
        launch_tile<GEMM_BM_SMALL>(a, vector_stores);
    else
        launch_tile<GEMM_BM>(a, vector_stores);
}
