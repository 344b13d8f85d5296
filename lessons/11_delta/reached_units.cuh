/* The skipping shared by tile_mask and delta_update: dense's grid of units, but a
 * block first reads the changed bytes of the input tiles around its unit (the 3x3
 * tiles around it, for any filter up to 17 wide) and returns at once when none
 * changed. The others run conv_unit, with the source and store of the variant. The
 * idle blocks still cost a launch slot and nine byte reads each. */
#ifndef REACHED_UNITS_CUH
#define REACHED_UNITS_CUH

#include "conv_tile.cuh"

/* [page: reached-kernel] */
template <int K, enum conv_source SOURCE, enum conv_store STORE, bool VECTOR>
__global__ void __launch_bounds__(UNIT_THREADS, UNIT_MIN_BLOCKS)
    reached_units(struct conv_operands o, const uint8_t *__restrict__ tile_changed, int tile,
                  int units_x)
{
    const int uy = blockIdx.x / units_x, ux = blockIdx.x % units_x;
    if (!delta_unit_reached(tile_changed, o.h, o.w, K, tile, uy, ux))
        return;
    extern __shared__ float4 smem4[];
    conv_unit<K, SOURCE, STORE, VECTOR>(o, uy, ux, blockIdx.y, (float *)smem4);
}
/* [/page: reached-kernel] */

template <enum conv_source SOURCE, enum conv_store STORE>
static void launch_reached_units(const struct delta_args *a, const struct delta_state_layout *l,
                                 const float *src, const uint8_t *src_active)
{
    const int units_x = units_along(a->w);
    const dim3 grid((unsigned)(units_along(a->h) * units_x), (unsigned)cout_blocks(a->c));
    const struct conv_operands o = conv_operands_for(a, src, src_active, a->out);
    const uint8_t *tile_changed = (const uint8_t *)delta_state_at(a, l->tile_changed);
    const bool vector = vector_source(a, src);
    with_ksize(a->ksize, [&](auto k) {
        constexpr int K = decltype(k)::value;
        const size_t smem = unit_tile<K>::SMEM_BYTES;
        auto kernel =
            vector ? reached_units<K, SOURCE, STORE, true> : reached_units<K, SOURCE, STORE, false>;
        allow_smem(kernel, smem);
        kernel<<<grid, UNIT_THREADS, smem, a->stream>>>(o, tile_changed, a->tile, units_x);
    });
    CUDA_CHECK_LAUNCH();
}

#endif
