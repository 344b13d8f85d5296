/* Lesson 11, variant dense: the layer recomputed on every frame, whatever changed. It
 * is the yardstick: a direct NHWC convolution (conv_tile.cuh), one block per 8x8-pixel
 * unit and 64 output channels, writing straight into out. */
#include "conv_tile.cuh"

__global__ void __launch_bounds__(UNIT_THREADS)
    delta_dense(struct conv_operands o, struct conv_geometry g, int units_x)
{
    extern __shared__ float4 smem4[];
    conv_unit<SOURCE_ALL, STORE_WITH_BIAS>(o, g, blockIdx.x / units_x, blockIdx.x % units_x,
                                           blockIdx.y * UNIT_COUT, (float *)smem4);
}

extern "C" size_t dense_state_bytes(const struct delta_args *a)
{
    (void)a;
    return 0;
}

extern "C" void launch_delta_dense(const struct delta_args *a)
{
    const struct conv_geometry g = conv_geometry_for(a->c, a->ksize);
    const int units_x = units_along(a->w);
    const dim3 grid((unsigned)(units_along(a->h) * units_x), (unsigned)cout_blocks(a->c));
    delta_dense<<<grid, UNIT_THREADS, g.smem_bytes, a->stream>>>(
        conv_operands_for(a, a->frame, NULL, a->out), g, units_x);
    CUDA_CHECK_LAUNCH();
}
