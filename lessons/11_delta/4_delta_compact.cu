/* Lesson 11, variant delta_compact: delta_update without the idle blocks. After the
 * threshold step, one thread per output tile appends the tile to a list in the state
 * when a changed input tile reaches it. Then one launch of only as many blocks as the
 * GPU holds at once (the occupancy API times the SM count) walks the list: block b
 * takes work items b, b + gridDim.x, ..., each one 8x8 unit of a listed tile and 64
 * output channels. The host never learns how long the list is, so no copy back and no
 * synchronisation split the frame; the price is that when fewer items than blocks
 * exist, the surplus blocks start and leave. */
#include "conv_tile.cuh"

#define LIST_THREADS 256

__global__ void list_reached_tiles(const uint8_t *__restrict__ tile_changed, int tiles_y,
                                   int tiles_x, int reach, int *__restrict__ list,
                                   int *__restrict__ count)
{
    const int t = blockIdx.x * blockDim.x + threadIdx.x;
    if (t >= tiles_y * tiles_x)
        return;
    /* The order of the list does not matter: every item writes its own outputs. */
    if (delta_tile_reached(tile_changed, tiles_y, tiles_x, reach, t / tiles_x, t % tiles_x))
        list[atomicAdd(count, 1)] = t;
}

template <int K, bool VECTOR>
__global__ void __launch_bounds__(UNIT_THREADS, UNIT_MIN_BLOCKS)
    delta_compact(struct conv_operands o, const int *__restrict__ list,
                  const int *__restrict__ count, int tile)
{
    extern __shared__ float4 smem4[];
    const int units_per_side = tile / DELTA_UNIT;
    const int units_per_tile = units_per_side * units_per_side;
    const int tiles_x = delta_tiles(o.w, tile);
    const int channel_blocks = cout_blocks(o.c);
    /* [page: compact-loop] */
    const int items = *count * units_per_tile * channel_blocks;
    for (int item = blockIdx.x; item < items; item += gridDim.x) {
        const int t = list[item / (units_per_tile * channel_blocks)];
        const int unit = item / channel_blocks % units_per_tile;
        const int uy = t / tiles_x * units_per_side + unit / units_per_side;
        const int ux = t % tiles_x * units_per_side + unit % units_per_side;
        /* Units of a tile cut by the image edge: the whole block skips them together. */
        if (uy * DELTA_UNIT >= o.h || ux * DELTA_UNIT >= o.w)
            continue;
        conv_unit<K, SOURCE_ACTIVE_ONLY, STORE_ADD, VECTOR>(o, uy, ux, item % channel_blocks,
                                                            (float *)smem4);
    }
    /* [/page: compact-loop] */
}

extern "C" size_t delta_compact_state_bytes(const struct delta_args *a)
{
    return delta_state_layout(DELTA_COMPACT, a->h, a->w, a->c, a->ksize, a->tile).bytes;
}

/* Blocks that fit on the GPU at once, but no more than the largest list needs. */
template <typename Kernel>
static int resident_blocks(Kernel kernel, size_t smem_bytes, long long most_items)
{
    int device, sms, per_sm;
    CUDA_CHECK(cudaGetDevice(&device));
    CUDA_CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device));
    CUDA_CHECK(
        cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, kernel, UNIT_THREADS, smem_bytes));
    const long long resident = (long long)sms * (per_sm > 0 ? per_sm : 1);
    return (int)(resident < most_items ? resident : most_items);
}

/* The list of reached tiles, then one launch over it. */
static void update_listed_tiles(const struct delta_args *a, const struct delta_state_layout *l)
{
    int *list = (int *)delta_state_at(a, l->list), *count = (int *)delta_state_at(a, l->list_count);
    const int tiles_y = delta_tiles(a->h, a->tile), tiles_x = delta_tiles(a->w, a->tile);
    const int tiles = tiles_y * tiles_x;
    CUDA_CHECK(cudaMemsetAsync(count, 0, sizeof(int), a->stream));
    list_reached_tiles<<<(tiles + LIST_THREADS - 1) / LIST_THREADS, LIST_THREADS, 0, a->stream>>>(
        (const uint8_t *)delta_state_at(a, l->tile_changed), tiles_y, tiles_x,
        delta_reach(a->ksize, a->tile), list, count);
    CUDA_CHECK_LAUNCH();

    const float *d = (const float *)delta_state_at(a, l->d);
    const struct conv_operands o =
        conv_operands_for(a, d, (const uint8_t *)delta_state_at(a, l->pixel_active), a->out);
    const int units_per_side = a->tile / DELTA_UNIT;
    const long long most_items =
        (long long)tiles * units_per_side * units_per_side * cout_blocks(a->c);
    const bool vector = vector_source(a, d);
    with_ksize(a->ksize, [&](auto k) {
        constexpr int K = decltype(k)::value;
        const size_t smem = unit_tile<K>::SMEM_BYTES;
        auto kernel = vector ? delta_compact<K, true> : delta_compact<K, false>;
        allow_smem(kernel, smem);
        kernel<<<resident_blocks(kernel, smem, most_items), UNIT_THREADS, smem, a->stream>>>(
            o, list, count, a->tile);
    });
    CUDA_CHECK_LAUNCH();
}

extern "C" void launch_delta_compact(const struct delta_args *a)
{
    delta_sparse_frame(a, DELTA_COMPACT, update_listed_tiles);
}
