/* Lesson 11: the threshold step with carry-over, shared by the three sparse variants.
 * One block per input tile; one warp per pixel, its lanes along the channels (the
 * pattern of DeltaCNN that seed 003 asks about): with NHWC data a warp's reads of one
 * pixel are contiguous, and the pixel's decision, the largest |frame - x_ref| over its
 * channels, is one warp reduction. An inactive pixel is left alone, x_ref included:
 * its change stays in frame - x_ref and is carried into the next frame's test. */
#include "cuda_check.h"
#include "kernels.h"

#define MASK_THREADS 256
#define WARP_SIZE 32
#define MASK_WARPS (MASK_THREADS / WARP_SIZE)
#define FULL_WARP 0xffffffffu

template <bool WRITE_DELTA>
__global__ void __launch_bounds__(MASK_THREADS)
    change_mask(const float *__restrict__ frame, float *__restrict__ x_ref, float *__restrict__ d,
                uint8_t *__restrict__ pixel_active, uint8_t *__restrict__ tile_changed, int h,
                int w, int c, int tile, float threshold)
{
    const int tiles_x = delta_tiles(w, tile);
    const int y0 = blockIdx.x / tiles_x * tile, x0 = blockIdx.x % tiles_x * tile;
    const int tile_h = min(tile, h - y0), tile_w = min(tile, w - x0);
    const int lane = threadIdx.x % WARP_SIZE;
    bool changed = false;
    for (int p = threadIdx.x / WARP_SIZE; p < tile_h * tile_w; p += MASK_WARPS) {
        const int y = y0 + p / tile_w, x = x0 + p % tile_w;
        const size_t at = nhwc_at(w, c, y, x, 0);
        float largest = 0.0f;
        for (int ch = lane; ch < c; ch += WARP_SIZE)
            largest = fmaxf(largest, fabsf(frame[at + ch] - x_ref[at + ch]));
        for (int offset = WARP_SIZE / 2; offset > 0; offset /= 2)
            largest = fmaxf(largest, __shfl_xor_sync(FULL_WARP, largest, offset));
        const bool active = largest > threshold;
        if (active)
            for (int ch = lane; ch < c; ch += WARP_SIZE) {
                const float now = frame[at + ch];
                if (WRITE_DELTA)
                    d[at + ch] = now - x_ref[at + ch];
                x_ref[at + ch] = now;
            }
        if (WRITE_DELTA && lane == 0)
            pixel_active[y * w + x] = active;
        changed = changed || active;
    }
    changed = __syncthreads_or(changed);
    if (threadIdx.x == 0)
        tile_changed[blockIdx.x] = changed;
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
