/* Lesson 06, step 2: the two passes fused into one kernel, the intermediate of a
 * block's tile kept in shared memory.
 *
 *   build/bin/06_separable --preset big7 --filter gaussian --variant fused_smem
 */
#include "kernels.h"
#include "separable.cuh"

/* fused_smem: 32 x 8 threads make a tile 128 columns wide and 64 rows tall. */
#define TILE_THREADS_H 8
#define TILE_THREADS (BLOCK_W * TILE_THREADS_H)
#define TILE_W (BLOCK_W * COLUMN_OUTS)
#define TILE_H (TILE_THREADS_H * COLUMN_ROWS)
/* Register budget (__launch_bounds__' minimum blocks per SM), read off ptxas -v: left
 * to itself (0), ptxas spills a few bytes. */
#define FUSED_SMEM_MIN_BLOCKS 2

/* fused_smem: a block's tile in one kernel. First the row pass of the tile's
 * TILE_H rows and the R rows above and below it, each thread one float4 of columns
 * per row, into shared memory; then, after the barrier, the column pass out of
 * shared memory, each thread COLUMN_ROWS rows of its float4 of columns. The
 * intermediate never goes to DRAM. */
template <int R, bool WIDE>
__global__ void __launch_bounds__(TILE_THREADS, FUSED_SMEM_MIN_BLOCKS)
    conv2d_fused_smem(const float *__restrict__ in, float *__restrict__ out, int n, int h, int w,
                      int tiles_x)
{
    constexpr int HALO = WIDE ? (R + VEC - 1) / VEC * VEC : R;
    constexpr int SPAN = COLUMN_OUTS + 2 * HALO;
    /* [page: mid-tile] */
    constexpr int MID_ROWS = TILE_H + 2 * R;
    /* One float4 per thread per row: a warp reads or writes 512 contiguous bytes,
     * free of bank conflicts. */
    __shared__ float4 mid[MID_ROWS][BLOCK_W];
    /* [/page: mid-tile] */

    const int tx = threadIdx.x, ty = threadIdx.y;
    const int x0 = (int)(blockIdx.x % tiles_x) * TILE_W + tx * COLUMN_OUTS;
    const int tile_y0 = (int)(blockIdx.x / tiles_x) * TILE_H;
    for (int p = blockIdx.y; p < n; p += gridDim.y) {
        const float *src = in + (size_t)p * h * w;
        /* [page: two-phases] */
#pragma unroll
        for (int k = 0; k < ceil_div(MID_ROWS, TILE_THREADS_H); ++k) {
            const int row = ty + k * TILE_THREADS_H;
            if (row < MID_ROWS) {
                float v[SPAN], filtered[COLUMN_OUTS];
                load_span<SPAN, WIDE>(v, src, tile_y0 - R + row, x0 - HALO, h, w);
                filter_row<R>(v, filtered);
                mid[row][tx] = make_float4(filtered[0], filtered[1], filtered[2], filtered[3]);
            }
        }
        __syncthreads();
        const int first = ty * COLUMN_ROWS;
        float acc[COLUMN_ROWS][COLUMN_OUTS];
#pragma unroll
        for (int t = 0; t < COLUMN_ROWS + 2 * R; ++t) {
            const float4 q = mid[first + t][tx];
            const float v[COLUMN_OUTS] = {q.x, q.y, q.z, q.w};
            filter_column_step<R, COLUMN_ROWS, COLUMN_OUTS, WIDE>(
                t, v, acc, out + (size_t)p * h * w, tile_y0 + first, x0, h, w);
        }
        /* The next plane's row pass overwrites mid. */
        __syncthreads();
        /* [/page: two-phases] */
    }
}

/* fused_smem for a compile-time radius R, with or without 16-byte loads. */
struct fused_smem {
    template <int R, bool WIDE> static void launch(const struct conv_args *a)
    {
        const struct conv_shape *s = &a->shape;
        const int tiles_x = ceil_div(s->w, TILE_W);
        conv2d_fused_smem<R, WIDE>
            <<<grid_of(s, tiles_x, TILE_H), dim3(BLOCK_W, TILE_THREADS_H), 0, a->stream>>>(
                input_f32(a), output_f32(a), s->n, s->h, s->w, tiles_x);
        CUDA_CHECK_LAUNCH();
    }
};

/* This file's copy of the factors, and the run-time-radius fallback's (1_two_pass.cu). */
extern "C" void setup_fused_smem(const struct conv_args *a)
{
    upload_factors(a);
    setup_two_pass(a);
}

extern "C" void launch_fused_smem(const struct conv_args *a)
{
    launch_for_filter<fused_smem>(a);
}
