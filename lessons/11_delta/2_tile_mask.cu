/* Lesson 11, variant tile_mask: skip the output tiles that no changed input tile
 * reaches (reached_units.cuh) and recompute the others from x_ref, the layer plus its
 * bias. x_ref equals the frame at every pixel whose change passed the threshold and is
 * within the threshold of it everywhere else, so the output stays within the bound. */
#include "reached_units.cuh"

/* [page: recompute-reached] */
static void recompute_reached(const struct delta_args *a, const struct delta_state_layout *l)
{
    launch_reached_units<SOURCE_ALL, STORE_WITH_BIAS>(
        a, l, (const float *)delta_state_at(a, l->x_ref), NULL);
}
/* [/page: recompute-reached] */

extern "C" size_t tile_mask_state_bytes(const struct delta_args *a)
{
    return delta_state_layout(DELTA_TILE_MASK, a->h, a->w, a->c, a->ksize, a->tile).bytes;
}

extern "C" void launch_delta_tile_mask(const struct delta_args *a)
{
    delta_sparse_frame(a, DELTA_TILE_MASK, recompute_reached);
}
