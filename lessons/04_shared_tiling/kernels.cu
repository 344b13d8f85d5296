/* Lesson 04: a block copies the input pixels it shares into shared memory once, so
 * the ksize^2 reads of each output hit shared memory instead of global memory. Three
 * ways to cut the image into tiles, all with the filter in __constant__ memory.
 *
 *   build/bin/04_shared_tiling --preset big3      (or --preset seed000, --ksize 9, ...)
 */
#include "conv_args.h"
#include "conv_problem.h"
#include "cuda_check.h"
#include "grid_chunks.cuh"
#include "kernels.h"

/* tile_in: a block is a 32x32 input tile, big enough to keep a 2x2 output tile
 * inside the largest halo (radius 15). */
#define IN_TILE 32
#define IN_TILE_THREADS (IN_TILE * IN_TILE)
/* tile_out and tile_cached_halo: a block is a 32x8 output tile, lesson 03's shape. */
#define BLOCK_W 32
#define BLOCK_H 8
#define BLOCK_THREADS (BLOCK_W * BLOCK_H)
#define MAX_RADIUS (MAX_KSIZE / 2)
/* Radii with an unrolled instantiation, as in lesson 03. */
#define MAX_UNROLLED_RADIUS 7
/* Template argument for "radius known only at run time": the same kernel body
 * serves the unrolled instantiations and the fallback for ksize 17..31. */
#define RUNTIME_RADIUS (-1)

__constant__ float filter_const[MAX_KSIZE * MAX_KSIZE];

typedef void (*tiled_kernel)(const float *in, const float *bias, float *out, int h, int w,
                             int ksize, int first_row);

/* (a) One thread per input pixel of the tile. All of them load; only the inner
 * (IN_TILE - 2r)^2 compute, so the halo threads idle through the arithmetic. */
template <int R>
__global__ void __launch_bounds__(IN_TILE_THREADS)
    conv2d_tile_in(const float *in, const float *bias, float *out, int h, int w, int ksize,
                   int first_row)
{
    __shared__ float tile[IN_TILE][IN_TILE];
    const int r = R == RUNTIME_RADIUS ? ksize / 2 : R;
    const int k = 2 * r + 1;
    const int out_tile = IN_TILE - 2 * r;
    /* int copies: threadIdx is unsigned, and tx - r must be able to go below zero. */
    const int tx = threadIdx.x, ty = threadIdx.y;
    /* The input tile starts r pixels before the block's first output. */
    const int x = (int)blockIdx.x * out_tile + tx - r;
    const int y = first_row + (int)blockIdx.y * out_tile + ty - r;
    const size_t plane = (size_t)blockIdx.z * h * w;
    const bool in_image = x >= 0 && x < w && y >= 0 && y < h;
    tile[ty][tx] = in_image ? in[plane + y * w + x] : 0.0f;
    __syncthreads();

    const bool computes = tx >= r && tx < r + out_tile && ty >= r && ty < r + out_tile;
    if (!computes || !in_image)
        return;
    float acc = 0.0f;
#pragma unroll
    for (int i = 0; i < k; ++i)
#pragma unroll
        for (int j = 0; j < k; ++j)
            acc += tile[ty - r + i][tx - r + j] * filter_const[i * k + j];
    out[plane + y * w + x] = (bias ? bias[0] : 0.0f) + acc;
}

/* (b) One thread per output pixel. The (BLOCK_H + 2r) x (BLOCK_W + 2r) input tile has
 * more pixels than the block has threads, so the block loads it in several passes
 * of BLOCK_W x BLOCK_H; no thread idles while computing. */
template <int R>
__global__ void __launch_bounds__(BLOCK_THREADS)
    conv2d_tile_out(const float *in, const float *bias, float *out, int h, int w, int ksize,
                    int first_row)
{
    /* The run-time fallback sizes its tile for the largest radius: 9.4 KB. */
    constexpr int TILE_R = R == RUNTIME_RADIUS ? MAX_RADIUS : R;
    __shared__ float tile[BLOCK_H + 2 * TILE_R][BLOCK_W + 2 * TILE_R];
    const int r = R == RUNTIME_RADIUS ? ksize / 2 : R;
    const int k = 2 * r + 1;
    const int x0 = (int)blockIdx.x * BLOCK_W;
    const int y0 = first_row + (int)blockIdx.y * BLOCK_H;
    const int tx = threadIdx.x, ty = threadIdx.y;
    const size_t plane = (size_t)blockIdx.z * h * w;
    for (int load_y = ty; load_y < BLOCK_H + 2 * r; load_y += BLOCK_H) {
        const int y = y0 + load_y - r;
        for (int load_x = tx; load_x < BLOCK_W + 2 * r; load_x += BLOCK_W) {
            const int x = x0 + load_x - r;
            const bool in_image = x >= 0 && x < w && y >= 0 && y < h;
            tile[load_y][load_x] = in_image ? in[plane + y * w + x] : 0.0f;
        }
    }
    __syncthreads();

    const int x = x0 + tx, y = y0 + ty;
    if (x >= w || y >= h)
        return;
    float acc = 0.0f;
#pragma unroll
    for (int i = 0; i < k; ++i)
#pragma unroll
        for (int j = 0; j < k; ++j)
            acc += tile[ty + i][tx + j] * filter_const[i * k + j];
    out[plane + y * w + x] = (bias ? bias[0] : 0.0f) + acc;
}

/* (c) One thread per output pixel, and shared memory holds only the block's own
 * BLOCK_W x BLOCK_H input pixels. A neighbour outside them is read from global
 * memory, betting that the neighbouring block's load left it in L1 or L2. */
template <int R>
__global__ void __launch_bounds__(BLOCK_THREADS)
    conv2d_tile_cached_halo(const float *in, const float *bias, float *out, int h, int w, int ksize,
                            int first_row)
{
    __shared__ float tile[BLOCK_H][BLOCK_W];
    const int r = R == RUNTIME_RADIUS ? ksize / 2 : R;
    const int k = 2 * r + 1;
    const int tx = threadIdx.x, ty = threadIdx.y;
    const int x = (int)blockIdx.x * BLOCK_W + tx;
    const int y = first_row + (int)blockIdx.y * BLOCK_H + ty;
    const size_t plane = (size_t)blockIdx.z * h * w;
    const bool in_image = x < w && y < h;
    tile[ty][tx] = in_image ? in[plane + y * w + x] : 0.0f;
    __syncthreads();

    if (!in_image)
        return;
    float acc = 0.0f;
#pragma unroll
    for (int i = 0; i < k; ++i) {
#pragma unroll
        for (int j = 0; j < k; ++j) {
            const int tile_y = ty + i - r, tile_x = tx + j - r;
            const int in_y = y + i - r, in_x = x + j - r;
            float v;
            if (tile_y >= 0 && tile_y < BLOCK_H && tile_x >= 0 && tile_x < BLOCK_W)
                v = tile[tile_y][tile_x];
            else if (in_y >= 0 && in_y < h && in_x >= 0 && in_x < w)
                v = in[plane + in_y * w + in_x];
            else
                v = 0.0f;
            acc += v * filter_const[i * k + j];
        }
    }
    out[plane + y * w + x] = (bias ? bias[0] : 0.0f) + acc;
}

/* One launch per grid chunk (common/ops/conv/kernel/grid_chunks.cuh): one in practice. */
static void launch_over_image(tiled_kernel kernel, dim3 block, int tile_w, int tile_h,
                              const struct conv_args *a)
{
    const struct conv_shape *s = &a->shape;
    for_each_grid_chunk(s, tile_w, tile_h, [&](dim3 grid, int plane, int first_row) {
        const size_t offset = (size_t)plane * s->h * s->w;
        kernel<<<grid, block, 0, a->stream>>>(input_f32(a) + offset, a->bias,
                                              output_f32(a) + offset, s->h, s->w, s->ksize,
                                              first_row);
        CUDA_CHECK_LAUNCH();
    });
}

/* Each scheme's unrolled instantiations, indexed by radius; larger radii take the
 * RUNTIME_RADIUS instantiation. */
static const tiled_kernel tile_in_unrolled[MAX_UNROLLED_RADIUS + 1] = {
    conv2d_tile_in<0>, conv2d_tile_in<1>, conv2d_tile_in<2>, conv2d_tile_in<3>,
    conv2d_tile_in<4>, conv2d_tile_in<5>, conv2d_tile_in<6>, conv2d_tile_in<7>};
static const tiled_kernel tile_out_unrolled[MAX_UNROLLED_RADIUS + 1] = {
    conv2d_tile_out<0>, conv2d_tile_out<1>, conv2d_tile_out<2>, conv2d_tile_out<3>,
    conv2d_tile_out<4>, conv2d_tile_out<5>, conv2d_tile_out<6>, conv2d_tile_out<7>};
static const tiled_kernel tile_cached_halo_unrolled[MAX_UNROLLED_RADIUS + 1] = {
    conv2d_tile_cached_halo<0>, conv2d_tile_cached_halo<1>, conv2d_tile_cached_halo<2>,
    conv2d_tile_cached_halo<3>, conv2d_tile_cached_halo<4>, conv2d_tile_cached_halo<5>,
    conv2d_tile_cached_halo<6>, conv2d_tile_cached_halo<7>};

static tiled_kernel for_radius(const tiled_kernel *unrolled, tiled_kernel runtime, int r)
{
    return r <= MAX_UNROLLED_RADIUS ? unrolled[r] : runtime;
}

extern "C" void copy_filter_to_constant(const struct conv_args *a)
{
    const size_t bytes = (size_t)a->shape.ksize * a->shape.ksize * sizeof(float);
    CUDA_CHECK(
        cudaMemcpyToSymbol(filter_const, weights_f32(a), bytes, 0, cudaMemcpyDeviceToDevice));
}

extern "C" void launch_conv2d_tile_in(const struct conv_args *a)
{
    const int r = a->shape.ksize / 2;
    const int out_tile = IN_TILE - 2 * r;
    launch_over_image(for_radius(tile_in_unrolled, conv2d_tile_in<RUNTIME_RADIUS>, r),
                      dim3(IN_TILE, IN_TILE), out_tile, out_tile, a);
}

extern "C" void launch_conv2d_tile_out(const struct conv_args *a)
{
    const int r = a->shape.ksize / 2;
    launch_over_image(for_radius(tile_out_unrolled, conv2d_tile_out<RUNTIME_RADIUS>, r),
                      dim3(BLOCK_W, BLOCK_H), BLOCK_W, BLOCK_H, a);
}

extern "C" void launch_conv2d_tile_cached_halo(const struct conv_args *a)
{
    const int r = a->shape.ksize / 2;
    launch_over_image(
        for_radius(tile_cached_halo_unrolled, conv2d_tile_cached_halo<RUNTIME_RADIUS>, r),
        dim3(BLOCK_W, BLOCK_H), BLOCK_W, BLOCK_H, a);
}
