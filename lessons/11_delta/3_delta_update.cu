/* Lesson 11, variant delta_update: the output follows the input by linearity,
 * conv(x_ref + d) = conv(x_ref) + conv(d). The threshold step has stored the applied
 * delta d (read as zero at inactive pixels); a unit that a changed input tile reaches
 * adds conv(d), without bias, to the previous output, and the others are skipped as in
 * tile_mask (reached_units.cuh). The arithmetic per unit is tile_mask's; what changes is
 * what an update means: a correction of the old output, which is the form in which a
 * network of such layers passes changes from one layer to the next. */
#include "reached_units.cuh"

/* [page: add-reached-deltas] */
static void add_reached_deltas(const struct delta_args *a, const struct delta_state_layout *l)
{
    launch_reached_units<SOURCE_ACTIVE_ONLY, STORE_ADD>(
        a, l, (const float *)delta_state_at(a, l->d),
        (const uint8_t *)delta_state_at(a, l->pixel_active));
}
/* [/page: add-reached-deltas] */

extern "C" size_t delta_update_state_bytes(const struct delta_args *a)
{
    return delta_state_layout(DELTA_UPDATE, a->h, a->w, a->c, a->ksize, a->tile).bytes;
}

extern "C" void launch_delta_update(const struct delta_args *a)
{
    delta_sparse_frame(a, DELTA_UPDATE, add_reached_deltas);
}
