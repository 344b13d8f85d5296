/* Lesson 05's kernel for filters past the unrolled radii (ksize 17..31), which every
 * variant falls back on.
 *
 *   build/bin/05_register_tiling --ksize 21
 */
#include "register_tiling.cuh"

/* Outputs per thread of the run-time-radius kernel. */
#define ANY_RADIUS_OUTS 4

/* Filters larger than 15x15. With a run-time radius no loop over the filter can
 * unroll, and a register array indexed by a run-time value is spilled to local
 * memory, so the only arrays here are indexed by the unrolled m: input column
 * x0 - r + t streams past the ANY_RADIUS_OUTS accumulators, meeting output m at
 * filter column t - m, read from the constant bank at a run-time address. */
__global__ void __launch_bounds__(BLOCK_THREADS)
    conv2d_any_radius(const float *__restrict__ in, float *__restrict__ out, int n, int h, int w,
                      int r, int tiles_x)
{
    const int k = 2 * r + 1;
    const int x0 = ((int)(blockIdx.x % tiles_x) * BLOCK_W + (int)threadIdx.x) * ANY_RADIUS_OUTS;
    const int y = (int)(blockIdx.x / tiles_x) * BLOCK_H + (int)threadIdx.y;
    if (x0 >= w || y >= h)
        return;
    for (int p = blockIdx.y; p < n; p += gridDim.y) {
        const float *src = in + (size_t)p * h * w;
        float acc[ANY_RADIUS_OUTS];
#pragma unroll
        for (int m = 0; m < ANY_RADIUS_OUTS; ++m)
            acc[m] = filter_bias;
        for (int i = 0; i < k; ++i) {
            const int in_y = y - r + i;
            if ((unsigned)in_y >= (unsigned)h)
                continue;
            const float *row = src + (size_t)in_y * w;
            for (int t = 0; t < k + ANY_RADIUS_OUTS - 1; ++t) {
                const int c = x0 - r + t;
                const float x = (unsigned)c < (unsigned)w ? __ldg(row + c) : 0.0f;
#pragma unroll
                for (int m = 0; m < ANY_RADIUS_OUTS; ++m) {
                    const int j = t - m;
                    if (j >= 0 && j < k)
                        acc[m] = fmaf(x, filter_taps[i * k + j], acc[m]);
                }
            }
        }
        float *row = out + (size_t)p * h * w + (size_t)y * w;
#pragma unroll
        for (int m = 0; m < ANY_RADIUS_OUTS; ++m)
            if (x0 + m < w)
                row[x0 + m] = acc[m];
    }
}

void setup_any_radius(const struct conv_args *a)
{
    upload_filter(a);
}

void launch_any_radius(const struct conv_args *a)
{
    const struct conv_shape *s = &a->shape;
    const int tiles_x = ceil_div(s->w, BLOCK_W * ANY_RADIUS_OUTS);
    const int tiles_y = ceil_div(s->h, BLOCK_H);
    const dim3 grid(tiles_x * tiles_y, grid_planes(s->n));
    conv2d_any_radius<<<grid, dim3(BLOCK_W, BLOCK_H), 0, a->stream>>>(
        input_f32(a), output_f32(a), s->n, s->h, s->w, s->ksize / 2, tiles_x);
    CUDA_CHECK_LAUNCH();
}
