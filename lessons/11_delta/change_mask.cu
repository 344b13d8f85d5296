/* Lesson 11: the threshold step with carry-over, shared by the three sparse variants.
 * One block per input tile; a warp takes 8 pixels at a time, its lanes along the
 * channels (the warp-per-pixel pattern of DeltaCNN that seed 003 asks about): with
 * NHWC data a warp's reads of one pixel are contiguous, and the pixel's decision, the
 * largest |frame - x_ref| over its channels, is one warp reduction. An inactive pixel
 * is left alone, x_ref included: its change stays in frame - x_ref and is carried into
 * the next frame's test. */
#include "cuda_check.h"
#include "kernels.h"

#define MASK_THREADS 256
#define WARP_SIZE 32
#define MASK_WARPS (MASK_THREADS / WARP_SIZE)
#define FULL_WARP 0xffffffffu
/* Pixels a warp tests at once: their loads are all in flight together before any
 * reduction waits on them (one pixel at a time left 60 % of the bandwidth unused). */
#define WARP_PIXELS 8

template <bool WRITE_DELTA>
__global__ void __launch_bounds__(MASK_THREADS)
    change_mask(const float *__restrict__ frame, float *__restrict__ x_ref, float *__restrict__ d,
                uint8_t *__restrict__ pixel_active, uint8_t *__restrict__ tile_changed, int h,
                int w, int c, int tile, float threshold)
{
    const int tiles_x = delta_tiles(w, tile);
    const int y0 = blockIdx.x / tiles_x * tile, x0 = blockIdx.x % tiles_x * tile;
    const int tile_h = min(tile, h - y0), tile_w = min(tile, w - x0);
    const int lane = threadIdx.x % WARP_SIZE, warp = threadIdx.x / WARP_SIZE;
    bool changed = false;
    for (int first = warp * WARP_PIXELS; first < tile_h * tile_w;
         first += MASK_WARPS * WARP_PIXELS) {
        size_t at[WARP_PIXELS];
        float largest[WARP_PIXELS];
#pragma unroll
        for (int b = 0; b < WARP_PIXELS; b++) {
            const int p = min(first + b, tile_h * tile_w - 1); /* past the end: a repeat */
            at[b] = nhwc_at(w, c, y0 + p / tile_w, x0 + p % tile_w, 0);
            largest[b] = 0.0f;
        }
        /* [page: mask-pixels] */
        for (int ch = lane; ch < c; ch += WARP_SIZE)
#pragma unroll
            for (int b = 0; b < WARP_PIXELS; b++)
                largest[b] = fmaxf(largest[b], fabsf(frame[at[b] + ch] - x_ref[at[b] + ch]));
#pragma unroll
        for (int b = 0; b < WARP_PIXELS; b++) {
            for (int offset = WARP_SIZE / 2; offset > 0; offset /= 2)
                largest[b] = fmaxf(largest[b], __shfl_xor_sync(FULL_WARP, largest[b], offset));
            const int p = first + b;
            if (p >= tile_h * tile_w)
                break;
            const bool active = largest[b] > threshold;
            if (active)
                for (int ch = lane; ch < c; ch += WARP_SIZE) {
                    const float now = frame[at[b] + ch];
                    if (WRITE_DELTA)
                        d[at[b] + ch] = now - x_ref[at[b] + ch];
                    x_ref[at[b] + ch] = now;
                }
            if (WRITE_DELTA && lane == 0)
                pixel_active[(y0 + p / tile_w) * w + x0 + p % tile_w] = active;
            changed = changed || active;
        /* [/page: mask-pixels] */
        }
    }
    /* [page: mask-tile] */
    changed = __syncthreads_or(changed);
    if (threadIdx.x == 0)
        tile_changed[blockIdx.x] = changed;
    /* [/page: mask-tile] */
}

extern "C" void launch_change_mask(const struct delta_args *a, const struct delta_state_layout *l,
                                   bool write_delta)
{
    float *x_ref = (float *)delta_state_at(a, l->x_ref), *d = (float *)delta_state_at(a, l->d);
    uint8_t *pixel_active = (uint8_t *)delta_state_at(a, l->pixel_active);
    uint8_t *tile_changed = (uint8_t *)delta_state_at(a, l->tile_changed);
    const unsigned tiles = (unsigned)(delta_tiles(a->h, a->tile) * delta_tiles(a->w, a->tile));
    if (write_delta)
        change_mask<true><<<tiles, MASK_THREADS, 0, a->stream>>>(a->frame, x_ref, d, pixel_active,
                                                                 tile_changed, a->h, a->w, a->c,
                                                                 a->tile, a->threshold);
    else
        change_mask<false><<<tiles, MASK_THREADS, 0, a->stream>>>(a->frame, x_ref, d, pixel_active,
                                                                  tile_changed, a->h, a->w, a->c,
                                                                  a->tile, a->threshold);
    CUDA_CHECK_LAUNCH();
}
