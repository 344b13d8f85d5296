/* Lesson 11, variant delta_update: the output follows the input by linearity,
 * conv(x_ref + d) = conv(x_ref) + conv(d). After the threshold step has stored the
 * applied delta d (zero at inactive pixels), a block whose output tile a changed input
 * tile reaches adds conv(d), without bias, to the previous output; the others return
 * at once, as in tile_mask. It does the same arithmetic per unit as tile_mask; what it
 * changes is what an update means: the old output plus a correction, which is how a
 * network of such layers passes only deltas from one layer to the next. */
#include "conv_tile.cuh"

__global__ void __launch_bounds__(UNIT_THREADS)
    delta_update(struct conv_operands o, struct conv_geometry g,
                 const uint8_t *__restrict__ tile_changed, int tile, int units_x)
{
    const int uy = blockIdx.x / units_x, ux = blockIdx.x % units_x;
    if (!delta_unit_reached(tile_changed, o.h, o.w, o.ksize, tile, uy, ux))
        return;
    extern __shared__ float4 smem4[];
    conv_unit<SOURCE_ACTIVE_ONLY, STORE_ADD>(o, g, uy, ux, blockIdx.y * UNIT_COUT, (float *)smem4);
}

static struct delta_state_layout layout_of(const struct delta_args *a)
{
    return delta_state_layout(DELTA_UPDATE, a->h, a->w, a->c, a->tile);
}

extern "C" size_t delta_update_state_bytes(const struct delta_args *a)
{
    return layout_of(a).bytes;
}

extern "C" void launch_delta_update(const struct delta_args *a)
{
    const struct delta_state_layout l = layout_of(a);
    if (a->frame_index == 0) {
        delta_first_frame(a, &l);
    } else {
        char *state = (char *)a->state;
        launch_change_mask(a, &l, true);
        const struct conv_geometry g = conv_geometry_for(a->c, a->ksize);
        const int units_x = units_along(a->w);
        const dim3 grid((unsigned)(units_along(a->h) * units_x), (unsigned)cout_blocks(a->c));
        delta_update<<<grid, UNIT_THREADS, g.smem_bytes, a->stream>>>(
            conv_operands_for(a, (const float *)(state + l.d),
                              (const uint8_t *)(state + l.pixel_active), (float *)(state + l.y)),
            g, (const uint8_t *)(state + l.tile_changed), a->tile, units_x);
        CUDA_CHECK_LAUNCH();
    }
    delta_copy_out(a, &l);
}
