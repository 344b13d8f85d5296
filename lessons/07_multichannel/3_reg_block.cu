/* Lesson 07, variant "reg_block": register blocking. Each thread accumulates 8
 * output channels for 4 neighbouring pixels (32 sums in registers), and the block
 * stages both the input tile and the weights of a chunk of input channels in
 * shared memory, so one 16-byte weight read feeds 16 FMAs and one input value,
 * kept in a sliding register window, feeds 8.
 *
 *   build/bin/07_multichannel --preset unet-128x128 --variant reg_block
 */
#include <stdint.h>

#include "channel_tile.cuh"
#include "cuda_check.h"
#include "kernels.h"

#define RB_PIXELS 4   /* neighbouring output pixels along x per thread */
#define RB_CHANNELS 8 /* output channels per thread, and per block */
#define RB_THREADS_X 8
#define RB_THREADS_Y 16
#define RB_THREADS (RB_THREADS_X * RB_THREADS_Y)
#define RB_WARPS (RB_THREADS / 32)
#define RB_TILE_W (RB_THREADS_X * RB_PIXELS) /* 32 output columns per block */
#define RB_TILE_H RB_THREADS_Y               /* 16 output rows per block */
/* Shared memory for one chunk: three blocks fit in the 64 KB of an sm_75 SM (7
 * channels of a 3x3 layer). A single channel of a 31x31 filter needs 41 KB, over
 * this budget but under the 48 KB a block may have without opting in. */
#define RB_CHUNK_BYTES 20480

struct reg_block_geometry {
    int in_h, in_w; /* input tile with halo */
    int pitch;      /* floats per input tile row */
    int taps;       /* ksize^2 */
    int chunk;      /* input channels staged at once */
};

/* A warp is 4 rows of 8 threads, 4 columns apart: with an odd row pitch those 32
 * threads start in 32 different banks, so window reads are conflict-free. */
static int odd_pitch(int width)
{
    return width | 1;
}

/* The weights of output channels [k0, k0 + 8), input channels [c0, c0 + count),
 * as w_tile[c][tap][kk]: the 8 channels of one tap are two aligned float4. Global
 * reads walk the contiguous [c][tap] run of one output channel. */
__device__ void stage_weights(float *w_tile, const float *__restrict__ weights,
                              const struct conv_shape *s, int k0, int c0, int count, int taps)
{
#pragma unroll
    for (int kk = 0; kk < RB_CHANNELS; kk++) {
        const int k = k0 + kk;
        for (int i = threadIdx.x; i < count * taps; i += RB_THREADS)
            w_tile[i * RB_CHANNELS + kk] =
                k < s->cout ? weights[(k * s->cin + c0) * taps + i] : 0.0f;
    }
}

/* Input channels [c0, c0 + count) of image n around the block's output tile, zero
 * outside the image; a warp copies whole rows. */
__device__ void stage_input(float *in_tile, const float *__restrict__ input,
                            const struct conv_shape *s, const struct reg_block_geometry *g, int n,
                            int c0, int count, int y0, int x0)
{
    const int lane = threadIdx.x % 32;
    const int pad = s->ksize / 2;
    for (int row = threadIdx.x / 32; row < count * g->in_h; row += RB_WARPS) {
        const int c = row / g->in_h;
        const int gy = y0 - pad + row % g->in_h;
        const int row_at = ((n * s->cin + c0 + c) * s->h + gy) * s->w;
        for (int xx = lane; xx < g->in_w; xx += 32) {
            const int gx = x0 - pad + xx;
            const bool inside = gy >= 0 && gy < s->h && gx >= 0 && gx < s->w;
            in_tile[row * g->pitch + xx] = inside ? input[row_at + gx] : 0.0f;
        }
    }
}

__device__ void store_outputs(float *__restrict__ output, const float *__restrict__ bias,
                              const struct conv_shape *s, float sum[RB_CHANNELS][RB_PIXELS], int n,
                              int k0, int y, int x, bool vector_stores)
{
    if (y >= s->h || x >= s->w)
        return;
#pragma unroll
    for (int kk = 0; kk < RB_CHANNELS; kk++) {
        const int k = k0 + kk;
        if (k >= s->cout)
            break;
        const float b = bias ? bias[k] : 0.0f;
        float *out = output + ((n * s->cout + k) * s->h + y) * s->w + x;
        if (vector_stores) {
            *(float4 *)out =
                make_float4(sum[kk][0] + b, sum[kk][1] + b, sum[kk][2] + b, sum[kk][3] + b);
        } else {
#pragma unroll
            for (int p = 0; p < RB_PIXELS; p++)
                if (x + p < s->w)
                    out[p] = sum[kk][p] + b;
        }
    }
}

__global__ void __launch_bounds__(RB_THREADS)
    conv2d_reg_block(const float *__restrict__ input, const float *__restrict__ weights,
                     const float *__restrict__ bias, float *__restrict__ output,
                     struct conv_shape s, struct reg_block_geometry g, bool vector_stores)
{
    extern __shared__ float4 smem4[];
    float *w_tile = (float *)smem4;                           /* [chunk][taps][8] */
    float *in_tile = w_tile + g.chunk * g.taps * RB_CHANNELS; /* [chunk][in_h][pitch] */

    const struct channel_tile block = this_block_tile(&s, RB_TILE_W, RB_TILE_H, RB_CHANNELS);
    const int tx = threadIdx.x % RB_THREADS_X;
    const int ty = threadIdx.x / RB_THREADS_X;

    float sum[RB_CHANNELS][RB_PIXELS] = {{0.0f}};
    for (int c0 = 0; c0 < s.cin; c0 += g.chunk) {
        const int count = min(g.chunk, s.cin - c0);
        stage_weights(w_tile, weights, &s, block.k0, c0, count, g.taps);
        stage_input(in_tile, input, &s, &g, block.n, c0, count, block.y0, block.x0);
        __syncthreads();
        /* [page: reg-block-taps] */
        for (int c = 0; c < count; c++)
            for (int i = 0; i < s.ksize; i++) {
                const float *in_row = in_tile + (c * g.in_h + ty + i) * g.pitch + tx * RB_PIXELS;
                const float4 *w_row =
                    (const float4 *)(w_tile + (c * g.taps + i * s.ksize) * RB_CHANNELS);
                /* The 4 inputs under tap j; tap j + 1 needs them shifted by one. */
                float window[RB_PIXELS];
#pragma unroll
                for (int p = 0; p < RB_PIXELS; p++)
                    window[p] = in_row[p];
                for (int j = 0; j < s.ksize; j++) {
                    if (j > 0) {
#pragma unroll
                        for (int p = 0; p < RB_PIXELS - 1; p++)
                            window[p] = window[p + 1];
                        window[RB_PIXELS - 1] = in_row[j + RB_PIXELS - 1];
                    }
                    const float4 lo = w_row[2 * j], hi = w_row[2 * j + 1];
                    const float w[RB_CHANNELS] = {lo.x, lo.y, lo.z, lo.w, hi.x, hi.y, hi.z, hi.w};
#pragma unroll
                    for (int kk = 0; kk < RB_CHANNELS; kk++)
#pragma unroll
                        for (int p = 0; p < RB_PIXELS; p++)
                            sum[kk][p] = fmaf(w[kk], window[p], sum[kk][p]);
                }
            }
        /* [/page: reg-block-taps] */
        /* The next chunk overwrites both tiles. */
        __syncthreads();
    }
    store_outputs(output, bias, &s, sum, block.n, block.k0, block.y0 + ty,
                  block.x0 + tx * RB_PIXELS, vector_stores);
}

extern "C" void launch_conv2d_reg_block(const struct conv_args *a)
{
    const struct conv_shape *s = &a->shape;
    struct reg_block_geometry g;
    g.in_h = RB_TILE_H + s->ksize - 1;
    g.in_w = RB_TILE_W + s->ksize - 1;
    g.pitch = odd_pitch(g.in_w);
    g.taps = s->ksize * s->ksize;
    const int channel_bytes = (g.taps * RB_CHANNELS + g.in_h * g.pitch) * (int)sizeof(float);
    g.chunk = RB_CHUNK_BYTES / channel_bytes;
    g.chunk = g.chunk < 1 ? 1 : g.chunk > s->cin ? s->cin : g.chunk;
    /* Rows of 4 pixels start at multiples of 4, so with w % 4 == 0 each thread's
     * 4 outputs are one aligned 16-byte store. */
    const bool vector_stores = s->w % RB_PIXELS == 0 && (uintptr_t)output_f32(a) % 16 == 0;
    for_each_tile_grid(
        a, RB_TILE_W, RB_TILE_H, RB_CHANNELS,
        [&](dim3 grid, const float *in, float *out, struct conv_shape part) {
            conv2d_reg_block<<<grid, RB_THREADS, (size_t)g.chunk * channel_bytes, a->stream>>>(
                in, weights_f32(a), a->bias, out, part, g, vector_stores);
            CUDA_CHECK_LAUNCH();
        });
}
