/* Lesson 07, variant "implicit_gemm_async" and the four steps that lead to it from
 * 4_implicit_gemm.cu, one idea each, as switches of one kernel:
 *   implicit_gemm_column  a thread gathers one pixel column of every slice, the pixel's
 *                         origin in registers (implicit_gemm's double buffering: loads
 *                         into registers, stored into shared memory after the FMAs)
 *   implicit_gemm_tap     rows of one tap share one border test
 *   implicit_gemm_cp      slices copied global -> shared by cp.async (sm_80+): no
 *                         registers, no shared stores
 *   implicit_gemm_bk16    slices 16 rows deep instead of 8
 *   implicit_gemm_async   a ring of three stages instead of two
 *
 *   build/bin/07_multichannel --preset unet-128x128 --variant implicit_gemm_async
 */
#include <stdint.h>

#include "cp_async.cuh"
#include "cuda_check.h"
#include "implicit_gemm.h"
#include "implicit_gemm_tile.cuh"

#define ASYNC_BK 16     /* reduction depth of one slice: 1024 FMAs per thread per barrier */
#define ASYNC_STAGES 3  /* slices in the ring: one computed, up to two in flight */
#define DOUBLE_BUFFER 2 /* implicit_gemm's stages: one slice computed, one on its way */

/* float4s of a weight slice BK rows deep that each of THREADS threads copies. */
__host__ __device__ constexpr int weight_copies(int bm, int threads, int bk)
{
    return bk / (threads / (bm / 4));
}

/* One copy of 4 bytes from src (a valid address either way) into dst, zero when
 * !inside: by cp.async, or (!ASYNC) as a load into held, stored into dst later. */
template <bool ASYNC>
static __device__ __forceinline__ void copy_float(float *dst, float &held, const float *src,
                                                  bool inside)
{
    /* [page: copy-float] */
    if constexpr (ASYNC)
        copy_4_async(dst, src, inside);
    else
        held = inside ? __ldg(src) : 0.0f;
    /* [/page: copy-float] */
}

/* Rows l0.. of the weight slice: thread t copies float4 column t % (BM/4) of rows
 * t / (BM/4) + step * j. A float4 lies wholly inside or outside [0, kpad) because
 * kpad and the column are multiples of 4. Without ASYNC into held (store_weight_slice). */
template <int BM, int THREADS, int BK, bool ASYNC>
static __device__ __forceinline__ void
copy_weight_slice(float (*w_tile)[BM], float4 (&held)[weight_copies(BM, THREADS, BK)],
                  const float *__restrict__ matrix, int kpad, int depth, int m0, int l0)
{
    constexpr int STEP = THREADS / (BM / 4);
    static_assert(BK % STEP == 0, "whole weight rows per pass");
    const int row = threadIdx.x / (BM / 4), col = threadIdx.x % (BM / 4) * 4;
#pragma unroll
    for (int j = 0; j < BK / STEP; j++) {
        const int i = row + j * STEP;
        const bool inside = m0 + col < kpad && l0 + i < depth;
        const float *src = inside ? matrix + (size_t)(l0 + i) * kpad + m0 + col : matrix;
        if constexpr (ASYNC)
            copy_16_async(&w_tile[i][col], src, inside);
        else
            held[j] = inside ? __ldg((const float4 *)src) : make_float4(0.0f, 0.0f, 0.0f, 0.0f);
    }
}

template <int BM, int THREADS, int BK>
static __device__ __forceinline__ void
store_weight_slice(float (*w_tile)[BM], const float4 (&held)[weight_copies(BM, THREADS, BK)])
{
    constexpr int STEP = THREADS / (BM / 4);
    const int row = threadIdx.x / (BM / 4), col = threadIdx.x % (BM / 4) * 4;
#pragma unroll
    for (int j = 0; j < BK / STEP; j++)
        *(float4 *)&w_tile[row + j * STEP][col] = held[j];
}

/* ROWS consecutive rows of the X slice, starting at row r, for the thread's pixel
 * column. In (tap, channel) order they are usually channels c..c+ROWS-1 of one tap:
 * with TAP_TEST, one border test, then one copy per channel plane. Without ASYNC
 * into held (store_input_rows). */
template <int ROWS, bool TAP_TEST, bool ASYNC>
static __device__ __forceinline__ void
copy_input_rows(float (*x_rows)[GEMM_BN], float (&held)[ROWS], int column,
                const float *__restrict__ input, const struct conv_shape *s,
                const struct pixel_origin *pixel, struct gather_row r)
{
    const int plane = s->h * s->w;
    if (TAP_TEST && r.c + ROWS <= s->cin) {
        const bool inside = input_inside(s, pixel, &r);
        /* Outside, every copy reads from channel plane i of image 0 (valid, since
         * i < ROWS <= cin) and writes zeros. */
        const float *src = input + (inside ? pixel->base + r.c * plane + r.dy * s->w + r.dx : 0);
#pragma unroll
        for (int i = 0; i < ROWS; i++)
            copy_float<ASYNC>(&x_rows[i][column], held[i], src + (size_t)i * plane, inside);
    } else {
        /* The rows cross a tap (or cin < ROWS, or no TAP_TEST): each row on its own. */
#pragma unroll
        for (int i = 0; i < ROWS; i++) {
            const bool inside = input_inside(s, pixel, &r);
            copy_float<ASYNC>(&x_rows[i][column], held[i],
                              input + (inside ? pixel->base + r.c * plane + r.dy * s->w + r.dx : 0),
                              inside);
            advance_row(&r, s, 1);
        }
    }
}

template <int ROWS>
static __device__ __forceinline__ void store_input_rows(float (*x_rows)[GEMM_BN], int column,
                                                        const float (&held)[ROWS])
{
#pragma unroll
    for (int i = 0; i < ROWS; i++)
        x_rows[i][column] = held[i];
}

/* A slice of BK rows per barrier in a ring of STAGES; ASYNC: copied by cp.async, or
 * loaded into registers before the FMAs of a slice and stored after them; TAP_TEST:
 * one border test per tap for a thread's rows of a slice. */
template <int BM, int BK, int STAGES, bool ASYNC, bool TAP_TEST>
__global__ void __launch_bounds__(GEMM_THREADS(BM), GEMM_THREADS_PER_SM / GEMM_THREADS(BM))
    conv2d_implicit_gemm_async(const float *__restrict__ input, const float *__restrict__ matrix,
                               const float *__restrict__ bias, float *__restrict__ output,
                               struct conv_shape s, int kpad, bool vector_stores)
{
    constexpr int THREADS = GEMM_THREADS(BM);
    constexpr int WARPS_X = GEMM_BN / GEMM_TN / WARP_COLS;
    constexpr int GROUPS = THREADS / GEMM_BN; /* threads sharing a pixel column */
    constexpr int GROUP_ROWS = BK / GROUPS;   /* X-slice rows each of them copies */
    static_assert(GROUPS * GROUP_ROWS == BK, "whole X-slice rows per thread");

    __shared__ __align__(16) float w_tile[STAGES][BK][BM];
    __shared__ __align__(16) float x_tile[STAGES][BK][GEMM_BN];

    const int lane = threadIdx.x % 32, warp = threadIdx.x / 32;
    const int m0 = blockIdx.y * BM;
    const unsigned p0 = blockIdx.x * GEMM_BN; /* p0 + 127 may pass INT_MAX */
    const int depth = s.cin * s.ksize * s.ksize;
    const int slices = (depth + BK - 1) / BK;
    const int ty = warp / WARPS_X * WARP_ROWS + lane / WARP_COLS;
    const int tx = warp % WARPS_X * WARP_COLS + lane % WARP_COLS;

    /* Thread t copies pixel column t % 128, rows (t / 128) * GROUP_ROWS.. of every
     * slice: a warp copies 32 neighbouring pixels of one channel plane, coalesced. The
     * pixel's origin stays in 3 registers for the whole kernel. */
    const int column = threadIdx.x % GEMM_BN, group = threadIdx.x / GEMM_BN;
    const struct pixel_origin pixel = find_pixel(&s, p0 + column);
    struct gather_row next_row = first_row(&s, group * GROUP_ROWS);

    float sum[GEMM_TM][GEMM_TN] = {{0.0f}};
    /* Without ASYNC: this thread's copies of the slice on its way. */
    float4 w_held[weight_copies(BM, THREADS, BK)];
    float x_held[GROUP_ROWS];

    /* Fill all stages but one; a group is committed even when empty so that
     * "group t is complete" always means "slice t has landed". */
    for (int t = 0; t < STAGES - 1; t++) {
        if (t < slices) {
            copy_weight_slice<BM, THREADS, BK, ASYNC>(w_tile[t], w_held, matrix, kpad, depth, m0,
                                                      t * BK);
            copy_input_rows<GROUP_ROWS, TAP_TEST, ASYNC>(&x_tile[t][group * GROUP_ROWS], x_held,
                                                         column, input, &s, &pixel, next_row);
            advance_row(&next_row, &s, BK);
            if constexpr (!ASYNC) {
                store_weight_slice<BM, THREADS, BK>(w_tile[t], w_held);
                store_input_rows<GROUP_ROWS>(&x_tile[t][group * GROUP_ROWS], column, x_held);
            }
        }
        if constexpr (ASYNC)
            commit_copies();
    }

    /* [page: ring-loop] */
    int stage = 0, fill_stage = STAGES - 1;
    for (int t = 0; t < slices; t++) {
        if constexpr (ASYNC)
            wait_copies<STAGES - 2>(); /* this thread's copies of slice t landed */
        /* Everyone's copies of slice t landed, and everyone finished computing slice
         * t - 1, whose stage is refilled next: one barrier per slice. */
        __syncthreads();
        const int fill = t + STAGES - 1;
        if (fill < slices) {
            copy_weight_slice<BM, THREADS, BK, ASYNC>(w_tile[fill_stage], w_held, matrix, kpad,
                                                      depth, m0, fill * BK);
            copy_input_rows<GROUP_ROWS, TAP_TEST, ASYNC>(&x_tile[fill_stage][group * GROUP_ROWS],
                                                         x_held, column, input, &s, &pixel,
                                                         next_row);
            advance_row(&next_row, &s, BK);
        }
        if constexpr (ASYNC)
            commit_copies();
        multiply_slice<BM, BK>(sum, w_tile[stage], x_tile[stage], ty, tx);
        /* Without ASYNC the loads of slice fill had the FMAs to land. */
        if constexpr (!ASYNC) {
            if (fill < slices) {
                store_weight_slice<BM, THREADS, BK>(w_tile[fill_stage], w_held);
                store_input_rows<GROUP_ROWS>(&x_tile[fill_stage][group * GROUP_ROWS], column,
                                             x_held);
            }
        }
        stage = stage + 1 == STAGES ? 0 : stage + 1;
        fill_stage = fill_stage + 1 == STAGES ? 0 : fill_stage + 1;
    }
    /* [/page: ring-loop] */
    store_tile<BM>(output, bias, &s, sum, m0, p0, ty, tx, vector_stores);
}

template <int BM, int BK, int STAGES, bool ASYNC, bool TAP_TEST>
static void launch_tile(const struct conv_args *a, bool vector_stores)
{
    const struct conv_shape *s = &a->shape;
    const long long pixels = (long long)s->n * s->h * s->w;
    const dim3 grid((unsigned)((pixels + GEMM_BN - 1) / GEMM_BN), (s->cout + BM - 1) / BM);
    conv2d_implicit_gemm_async<BM, BK, STAGES, ASYNC, TAP_TEST>
        <<<grid, GEMM_THREADS(BM), 0, a->stream>>>(input_f32(a), implicit_gemm_matrix(a), a->bias,
                                                   output_f32(a), *s, padded_cout(s),
                                                   vector_stores);
    CUDA_CHECK_LAUNCH();
}

template <int BK, int STAGES, bool ASYNC, bool TAP_TEST>
static void launch_gemm(const struct conv_args *a)
{
    const struct conv_shape *s = &a->shape;
    const bool vector_stores = (s->h * s->w) % 4 == 0 && (uintptr_t)output_f32(a) % 16 == 0;
    if (s->cout <= GEMM_BM_SMALL)
        launch_tile<GEMM_BM_SMALL, BK, STAGES, ASYNC, TAP_TEST>(a, vector_stores);
    else
        launch_tile<GEMM_BM, BK, STAGES, ASYNC, TAP_TEST>(a, vector_stores);
}

extern "C" void launch_conv2d_implicit_gemm_column(const struct conv_args *a)
{
    launch_gemm<GEMM_BK, DOUBLE_BUFFER, false, false>(a);
}

extern "C" void launch_conv2d_implicit_gemm_tap(const struct conv_args *a)
{
    launch_gemm<GEMM_BK, DOUBLE_BUFFER, false, true>(a);
}

extern "C" void launch_conv2d_implicit_gemm_cp(const struct conv_args *a)
{
    launch_gemm<GEMM_BK, DOUBLE_BUFFER, true, true>(a);
}

extern "C" void launch_conv2d_implicit_gemm_bk16(const struct conv_args *a)
{
    launch_gemm<ASYNC_BK, DOUBLE_BUFFER, true, true>(a);
}

extern "C" void launch_conv2d_implicit_gemm_async(const struct conv_args *a)
{
    launch_gemm<ASYNC_BK, ASYNC_STAGES, true, true>(a);
}
