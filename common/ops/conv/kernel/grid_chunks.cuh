/* CUDA limits gridDim.y and gridDim.z to 65535 blocks. A tall image (--size allows
 * a million rows) or a large batch would pass that, so a launcher walks its grid in
 * chunks: in practice one launch, more only where a limit would be passed. Each
 * chunk is told its first image plane and its first output row, because a kernel
 * still needs the rows above that one as halo. For the kernels (.cu) only. */
#ifndef GRID_CHUNKS_CUH
#define GRID_CHUNKS_CUH

#include "conv_problem.h"

#define MAX_GRID_YZ 65535

__host__ __device__ constexpr int ceil_div(int a, int b)
{
    return (a + b - 1) / b;
}

/* Planes a grid of one block row per plane can hold in gridDim.y or z; kernels that
 * put the planes there loop over the rest themselves, or the launcher walks the
 * batch with for_each_batch_chunk. */
static inline int grid_planes(int n)
{
    return min(n, MAX_GRID_YZ);
}

/* Calls launch(first_image, images) for consecutive runs of at most MAX_GRID_YZ
 * images of a batch of n: one call in practice. */
template <typename Launch> void for_each_batch_chunk(int n, Launch launch)
{
    for (int first = 0; first < n; first += MAX_GRID_YZ)
        launch(first, min(n - first, MAX_GRID_YZ));
}

/* Calls launch(grid, first_plane, first_row) for every chunk of the grid of
 * ceil(w / tile_w) x ceil(h / tile_h) x n blocks that covers the output. */
template <typename Launch>
void for_each_grid_chunk(const struct conv_shape *s, int tile_w, int tile_h, Launch launch)
{
    const int tiles_x = ceil_div(s->w, tile_w);
    const int tiles_y = ceil_div(s->h, tile_h);
    for_each_batch_chunk(s->n, [&](int plane, int planes) {
        for (int tile_y = 0; tile_y < tiles_y; tile_y += MAX_GRID_YZ) {
            const dim3 grid(tiles_x, min(tiles_y - tile_y, MAX_GRID_YZ), planes);
            launch(grid, plane, tile_y * tile_h);
        }
    });
}

#endif
