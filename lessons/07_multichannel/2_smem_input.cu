/* Lesson 07, variant "smem_input": a block stages a 16x16 input tile plus its halo
 * for a chunk of input channels in shared memory, and every thread keeps 8 output
 * channels of its pixel, so each input value read from shared memory feeds 8
 * multiply-adds. The weights still come from global memory, one load per FMA.
 *
 *   build/bin/07_multichannel --preset unet-128x128 --variant smem_input
 */
#include "channel_tile.cuh"
#include "cuda_check.h"
#include "kernels.h"

#define SI_TILE 16          /* output tile side = block side */
#define SI_CHANNELS 8       /* output channels per block, accumulated per thread */
#define SI_TILE_BYTES 16384 /* shared memory for the input tiles of one chunk */
#define SI_WARPS (SI_TILE * SI_TILE / 32)

/* Copies input channels [c0, c0 + count) of image n, window [y0 - pad, x0 - pad]
 * of side `side`, to tile[count][side][side], zero outside the image. A warp
 * copies whole rows, so the division by the side happens once per row. */
__device__ void stage_input_tile(float *tile, const float *__restrict__ input,
                                 const struct conv_shape *s, int n, int c0, int count, int y0,
                                 int x0, int side)
{
    const int lane = threadIdx.x % 32;
    const int warp = threadIdx.x / 32;
    const int pad = s->ksize / 2;
    for (int row = warp; row < count * side; row += SI_WARPS) {
        const int c = row / side;
        const int gy = y0 - pad + row % side;
        const int row_at = ((n * s->cin + c0 + c) * s->h + gy) * s->w;
        for (int xx = lane; xx < side; xx += 32) {
            const int gx = x0 - pad + xx;
            const bool inside = gy >= 0 && gy < s->h && gx >= 0 && gx < s->w;
            tile[row * side + xx] = inside ? input[row_at + gx] : 0.0f;
        }
    }
}

__global__ void __launch_bounds__(SI_TILE *SI_TILE)
    conv2d_smem_input(const float *__restrict__ input, const float *__restrict__ weights,
                      const float *__restrict__ bias, float *__restrict__ output,
                      struct conv_shape s, int chunk)
{
    extern __shared__ float tile[];
    const struct channel_tile block = this_block_tile(&s, SI_TILE, SI_TILE, SI_CHANNELS);
    const int tx = threadIdx.x % SI_TILE;
    const int ty = threadIdx.x / SI_TILE;
    const int side = SI_TILE + s.ksize - 1;
    const int taps = s.ksize * s.ksize;

    /* Past the last output channel, read the last channel's weights instead: the
     * loads stay in bounds and branch-free, and those sums are never stored. */
    int w_row[SI_CHANNELS];
#pragma unroll
    for (int kk = 0; kk < SI_CHANNELS; kk++)
        w_row[kk] = min(block.k0 + kk, s.cout - 1) * s.cin * taps;

    /* [page: smem-chunk-loop] */
    float sum[SI_CHANNELS] = {0.0f};
    for (int c0 = 0; c0 < s.cin; c0 += chunk) {
        const int count = min(chunk, s.cin - c0);
        stage_input_tile(tile, input, &s, block.n, c0, count, block.y0, block.x0, side);
        __syncthreads();
        for (int c = 0; c < count; c++) {
            const int w_c = (c0 + c) * taps;
            for (int i = 0; i < s.ksize; i++)
                for (int j = 0; j < s.ksize; j++) {
                    const float v = tile[(c * side + ty + i) * side + tx + j];
                    const int tap = w_c + i * s.ksize + j;
#pragma unroll
                    for (int kk = 0; kk < SI_CHANNELS; kk++)
                        sum[kk] = fmaf(v, weights[w_row[kk] + tap], sum[kk]);
                }
        }
        /* The next chunk overwrites the tile. */
        __syncthreads();
    }
    /* [/page: smem-chunk-loop] */

    const int x = block.x0 + tx, y = block.y0 + ty;
    if (x >= s.w || y >= s.h)
        return;
#pragma unroll
    for (int kk = 0; kk < SI_CHANNELS; kk++) {
        const int k = block.k0 + kk;
        if (k < s.cout)
            output[((block.n * s.cout + k) * s.h + y) * s.w + x] =
                sum[kk] + (bias ? bias[k] : 0.0f);
    }
}

extern "C" void launch_conv2d_smem_input(const struct conv_args *a)
{
    const struct conv_shape *s = &a->shape;
    const int side = SI_TILE + s->ksize - 1;
    const int channel_bytes = side * side * (int)sizeof(float);
    /* At least one channel: 46x46 floats (ksize 31) is 8.5 KB, under the budget. */
    int chunk = SI_TILE_BYTES / channel_bytes;
    chunk = chunk < 1 ? 1 : chunk > s->cin ? s->cin : chunk;
    const size_t tile_bytes = (size_t)chunk * channel_bytes;
    for_each_tile_grid(a, SI_TILE, SI_TILE, SI_CHANNELS,
                       [&](dim3 grid, const float *in, float *out, struct conv_shape part) {
                           conv2d_smem_input<<<grid, SI_TILE * SI_TILE, tile_bytes, a->stream>>>(
                               in, weights_f32(a), a->bias, out, part, chunk);
                           CUDA_CHECK_LAUNCH();
                       });
}
