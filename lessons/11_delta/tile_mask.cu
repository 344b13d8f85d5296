/* Lesson 11, variant tile_mask: skip the output tiles that no changed input tile
 * reaches. After the threshold step (change_mask.cu) the grid is dense's, but a block
 * first reads the changed bytes of the input tiles around its unit and returns at once
 * when there is none; the others recompute their unit from x_ref, which equals the
 * frame at every pixel that changed past the threshold. The idle blocks still cost a
 * launch slot and a few byte reads each. */
#include "conv_tile.cuh"

__global__ void __launch_bounds__(UNIT_THREADS)
    delta_tile_mask(struct conv_operands o, struct conv_geometry g,
                    const uint8_t *__restrict__ tile_changed, int tile, int units_x)
{
    const int uy = blockIdx.x / units_x, ux = blockIdx.x % units_x;
    if (!delta_unit_reached(tile_changed, o.h, o.w, o.ksize, tile, uy, ux))
        return;
    extern __shared__ float4 smem4[];
    conv_unit<SOURCE_ALL, STORE_WITH_BIAS>(o, g, uy, ux, blockIdx.y * UNIT_COUT, (float *)smem4);
}

static struct delta_state_layout layout_of(const struct delta_args *a)
{
    return delta_state_layout(DELTA_TILE_MASK, a->h, a->w, a->c, a->tile);
}

extern "C" size_t tile_mask_state_bytes(const struct delta_args *a)
{
    return layout_of(a).bytes;
}

extern "C" void launch_delta_tile_mask(const struct delta_args *a)
{
    const struct delta_state_layout l = layout_of(a);
    if (a->frame_index == 0) {
        delta_first_frame(a, &l);
    } else {
        char *state = (char *)a->state;
        launch_change_mask(a, &l, false);
        const struct conv_geometry g = conv_geometry_for(a->c, a->ksize);
        const int units_x = units_along(a->w);
        const dim3 grid((unsigned)(units_along(a->h) * units_x), (unsigned)cout_blocks(a->c));
        delta_tile_mask<<<grid, UNIT_THREADS, g.smem_bytes, a->stream>>>(
            conv_operands_for(a, (const float *)(state + l.x_ref), NULL, (float *)(state + l.y)), g,
            (const uint8_t *)(state + l.tile_changed), a->tile, units_x);
        CUDA_CHECK_LAUNCH();
    }
    delta_copy_out(a, &l);
}
