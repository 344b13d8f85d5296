/* Lesson 06, step 3: the two passes fused with no shared memory at all, each
 * thread's row pass kept in registers.
 *
 *   build/bin/06_separable --preset big7 --filter gaussian --variant fused_registers
 */
#include "kernels.h"
#include "separable.cuh"

/* fused_registers: a thread's patch, 4 columns (one float4) by fused_rows(R) rows. */
#define FUSED_OUTS 4

/* Rows of a fused_registers patch. The unrolled code holds all rows + 2R input
 * rows of it; beyond radius 4, 8 rows need more than 255 registers (ptxas -v shows
 * the spills), so larger filters get 4. */
__host__ __device__ constexpr int fused_rows(int r)
{
    return r <= 4 ? 8 : 4;
}

/* fused_registers: no shared memory and no barrier. Each thread walks down the
 * ROWS + 2R input rows of its patch, filters each along the row into
 * registers and feeds the result straight into the column filter; the row pass
 * of the 2R halo rows is recomputed by the thread above or below. */
template <int R, bool WIDE>
__global__ void __launch_bounds__(BLOCK_THREADS)
    conv2d_fused_registers(const float *__restrict__ in, float *__restrict__ out, int n, int h,
                           int w, int tiles_x)
{
    constexpr int HALO = WIDE ? (R + VEC - 1) / VEC * VEC : R;
    constexpr int SPAN = FUSED_OUTS + 2 * HALO;
    constexpr int ROWS = fused_rows(R);
    const int x0 = ((int)(blockIdx.x % tiles_x) * BLOCK_W + (int)threadIdx.x) * FUSED_OUTS;
    const int y0 = ((int)(blockIdx.x / tiles_x) * BLOCK_H + (int)threadIdx.y) * ROWS;
    if (x0 >= w || y0 >= h)
        return;
    for (int p = blockIdx.y; p < n; p += gridDim.y) {
        const float *src = in + (size_t)p * h * w;
        /* [page: fused-walk] */
        float acc[ROWS][FUSED_OUTS];
#pragma unroll
        for (int t = 0; t < ROWS + 2 * R; ++t) {
            float v[SPAN], filtered[FUSED_OUTS];
            load_span<SPAN, WIDE>(v, src, y0 - R + t, x0 - HALO, h, w);
            filter_row<R>(v, filtered);
            filter_column_step<R, ROWS, FUSED_OUTS, WIDE>(t, filtered, acc, out + (size_t)p * h * w,
                                                          y0, x0, h, w);
        }
        /* [/page: fused-walk] */
    }
}

/* fused_registers for a compile-time radius R, with or without 16-byte loads. */
struct fused_registers {
    template <int R, bool WIDE> static void launch(const struct conv_args *a)
    {
        const struct conv_shape *s = &a->shape;
        const int tiles_x = ceil_div(s->w, BLOCK_W * FUSED_OUTS);
        const dim3 grid = grid_of(s, tiles_x, BLOCK_H * fused_rows(R));
        conv2d_fused_registers<R, WIDE><<<grid, dim3(BLOCK_W, BLOCK_H), 0, a->stream>>>(
            input_f32(a), output_f32(a), s->n, s->h, s->w, tiles_x);
        CUDA_CHECK_LAUNCH();
    }
};

/* This file's copy of the factors, and the run-time-radius fallback's (1_two_pass.cu). */
extern "C" void setup_fused_registers(const struct conv_args *a)
{
    upload_factors(a);
    setup_two_pass(a);
}

extern "C" void launch_fused_registers(const struct conv_args *a)
{
    launch_for_filter<fused_registers>(a);
}
