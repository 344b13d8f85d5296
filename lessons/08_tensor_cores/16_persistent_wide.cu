/* Lesson 08, step 16, variant "wgmma_fp16_persistent": step 8's 128 x 256 tile, both
 * consumer warpgroups on one tile, in step 10's persistent blocks, with step 14's
 * stores. Step 14's ping-pong hides each tile's epilogue behind the other warpgroup's
 * multiplies, but its 128 x 128 tiles move more bytes per product than step 8's: a
 * wgmma.m64n128k16 reads 2 KB of A and 4 KB of B from shared memory for 64 x 128 x 16
 * products, a wgmma.m64n256k16 2 KB and 8 KB for twice as many, and a 128-wide stage
 * brings 1.33 times the bytes per product from L2. Here:
 *   - one block per SM walks the layer's 128 x 256 tiles (128 x 128 below 256 output
 *     channels, as step 8), the producer loading without a pause across tiles, so the
 *     next tile's first stages land while this one's epilogue runs;
 *   - the two consumer warpgroups multiply the tile's two 64-row halves together, as in
 *     step 7: a stage's empty barrier waits for all 8 consumer warps;
 *   - the epilogue is step 14's, staged and stored by the TMA, one 128-byte column block
 *     at a time through two 8 KB buffers per warpgroup: the ring keeps its stages (4 of 48
 *     KB; 6 of 32 KB at 128 x 128). A TMA store runs on while the warpgroup stages the
 *     next block and multiplies the next tile; only the staging is not hidden.
 * Where the TMA cannot store the output (rows of channels not whole 16-byte chunks), step
 * 8's kernel. Nsight Compute on unet-512x512, at its locked 1.2 GHz: steps 14 and 16 take
 * the same cycles at 86-87 % of the SM's throughput, step 16 with 16 % fewer shared-memory
 * wavefronts and L2 35.6 % busy against 64.3 %; at the GPU's own clocks step 16 is 1.02 to
 * 1.03 times faster from unet-256x256 on: run for seconds, both sit at the power cap, and
 * step 16, moving fewer bytes, holds a 6 % higher SM clock (results/h200/08_notes.md).
 *
 *   build/bin/08_tensor_cores --preset unet-512x512 --variant wgmma_fp16_persistent
 */
#include <limits.h>

#include <utility>

#include "kernels.h"
#include "tma_conv.cuh"
#include "wgmma_steps.h"

#define PW_CONSUMER_THREADS 256 /* warpgroups 0 and 1; the producer is warpgroup 2 */
#define PW_THREADS (PW_CONSUMER_THREADS + 128)
#define PW_CONSUMER_WARPS 8
#define PW_PRODUCER_REGISTERS 40 /* 128 x 40 + 256 x 232 = 64512 registers */
#define PW_CONSUMER_REGISTERS 232
#define PW_BUFFERS 2 /* output buffers per consumer warpgroup, taken in turn */
#define PW_BUFFER_BYTES (WG_ROWS_PER_GROUP * TMA_ROW_BYTES) /* 64 rows of one column block */

/* The block's shared memory: step 8's ring, then the consumers' output buffers. */
template <typename Op, int BN> struct persistent_layout {
    typedef tma_tile<typename Op::elem, BN> tile_t;
    static constexpr int STAGES = tile_t::STAGES;
    static constexpr int BUFFERS_BYTES = 2 * PW_BUFFERS * PW_BUFFER_BYTES;
    static constexpr int SMEM_BYTES = tile_t::SMEM_BYTES + BUFFERS_BYTES;
    static constexpr int COLUMN_BLOCKS = BN * (int)sizeof(typename Op::out) / TMA_ROW_BYTES;
    static_assert(SMEM_BYTES <= TMA_SMEM_LIMIT, "the ring and the buffers fit one block");
    /* Every tile starts with buffer 0 and leaves the last store in flight: its last block
     * must have used the other buffer. */
    static_assert(COLUMN_BLOCKS % PW_BUFFERS == 0, "a tile's blocks fill the buffers evenly");
};

/* A warpgroup's 64 rows of the tile, column block by column block: staged into buffer
 * B % 2 once the store that last read it is done, then stored as one box at channel c0
 * + B x 128 bytes, pixel (x, y) of image n. */
template <int BN, typename Out, int... B>
static __device__ __forceinline__ void
store_column_blocks(std::integer_sequence<int, B...>, const float (&acc)[BN / 2], const float *bias,
                    int cout, int j0, uint4 *buffers, const CUtensorMap *map, int x, int y, int n)
{
    const int lane = threadIdx.x % 32;
    auto bias_of = [&](int j, int e) {
        const int ch = j0 + j * 8 + lane % 4 * 2 + e;
        return bias && ch < cout ? bias[ch] : 0.0f;
    };
    /* [page: column-blocks] */
    (
        [&] {
            uint4 *buffer = buffers + B % PW_BUFFERS * (PW_BUFFER_BYTES / CHUNK_BYTES);
            buffer_free<PW_BUFFERS>();
            stage_rows<BN, Out, B, 1>(acc, bias_of, buffer);
            if (buffer_written()) {
                tma_store_4d(map, buffer, j0 + B * TMA_ROW_BYTES / (int)sizeof(Out), x, y, n);
                bulk_commit();
            }
        }(),
        ...);
    /* [/page: column-blocks] */
}

/* CLUSTER = 2 is step 17's kernel: clusters of two blocks on neighbouring rectangles
 * with the same output channels, each block loading half of every step's weights into
 * both (tma_loader), a stage given back to both producers, every tap walked. */
template <typename Op, int BN, int CLUSTER>
__global__ void __launch_bounds__(PW_THREADS, 1)
    conv2d_wgmma_persistent(const __grid_constant__ CUtensorMap input_map,
                            const __grid_constant__ CUtensorMap weight_map,
                            const __grid_constant__ CUtensorMap output_map,
                            const float *__restrict__ bias, struct conv_shape s,
                            struct pixel_tiling tiling, int channel_tiles, int items)
{
    typedef typename Op::elem E;
    typedef tma_tile<E, BN> tile_t;
    typedef persistent_layout<Op, BN> L;
    constexpr int STAGES = L::STAGES;
    extern __shared__ uint4 smem[];
    __shared__ uint64_t full[STAGES], empty[STAGES];
    uint4 *ring = swizzle_aligned(smem);

    if (threadIdx.x == 0) {
        for (int i = 0; i < STAGES; i++) {
            barrier_init(&full[i], 1);
            barrier_init(&empty[i], PW_CONSUMER_WARPS * CLUSTER);
        }
        barrier_init_fence();
    }
    if (CLUSTER > 1)
        cluster_sync(); /* the other block's barriers too, before its first arrival */
    else
        __syncthreads();

    if (threadIdx.x >= PW_CONSUMER_THREADS) {
        registers_down<PW_PRODUCER_REGISTERS>();
        /* The producer: step 10's, every step of every tile of the block, in order. */
        if (threadIdx.x == PW_CONSUMER_THREADS)
            load_tiles<E, BN, STAGES, CLUSTER>(&input_map, &weight_map, ring, full, empty, s,
                                               tiling, channel_tiles, items);
        if (CLUSTER > 1)
            cluster_sync(); /* see the end */
        return;
    }
    registers_up<PW_CONSUMER_REGISTERS>();

    /* The consumers: warpgroup `group` multiplies pixels 64 group.. of every tile, as step
     * 7's consumers do, giving the tile's last stage back too. */
    const int group = threadIdx.x / 128;
    uint4 *buffers =
        ring + STAGES * tile_t::CHUNKS + group * PW_BUFFERS * (PW_BUFFER_BYTES / CHUNK_BYTES);
    ring_position<STAGES> at;
    for (int item = blockIdx.x / CLUSTER; item < items; item += gridDim.x / CLUSTER) {
        const tma_block<E, BN> block = walk_tile<E, BN, CLUSTER>(s, tiling, channel_tiles, item);
        float acc[tile_t::ACCUMULATORS] = {};
        multiply_tile<Op, BN, tile_t, true, CLUSTER>(acc, ring, full, empty, at, block.steps,
                                                     group);
        const int first = group * WG_ROWS_PER_GROUP; /* the warpgroup's first pixel */
        store_column_blocks<BN, typename Op::out>(
            std::make_integer_sequence<int, L::COLUMN_BLOCKS>(), acc, bias, s.cout, block.j0,
            buffers, &output_map, block.x0 + (first & ((1 << tiling.width_log2) - 1)),
            block.y0 + (first >> tiling.width_log2), block.n);
    }
    if (threadIdx.x % 128 == 0)
        bulk_wait(); /* the last stores done before the block's shared memory goes */
    if (CLUSTER > 1)
        cluster_sync(); /* nor before the other block's last arrivals and loads into it */
}

/* One block per SM (of those a->sms leaves it), or one per tile where there are fewer;
 * in clusters of CLUSTER blocks, one walk item (CLUSTER tiles) per cluster. */
template <typename Op, int BN, int CLUSTER> static void launch_persistent(const struct conv_args *a)
{
    typedef persistent_layout<Op, BN> L;
    const struct conv_shape *s = &a->shape;
    const struct pixel_tiling tiling = pixel_tiling_of(s);
    const int channel_tiles = ceil_div(s->cout, BN);
    const long long rectangles = (long long)s->n * tiling.tiles_y * tiling.tiles_x;
    const long long items = (rectangles + CLUSTER - 1) / CLUSTER * channel_tiles;
    if (items * CLUSTER > INT_MAX) { /* a tile index is an int: step 8's kernel walks such layers */
        launch_warp_specialised<Op, BN, 1>(a);
        return;
    }
    CUtensorMap input_map, weight_map, output_map;
    encode_layer_maps<typename Op::elem, BN / CLUSTER>(a, tiling, &input_map, &weight_map);
    encode_group_output_map<typename Op::out>(a, tiling, &output_map);
    auto kernel = conv2d_wgmma_persistent<Op, BN, CLUSTER>;
    CUDA_CHECK(
        cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, L::SMEM_BYTES));
    const int slots = max(persistent_sms(a) / CLUSTER, 1);
    const int blocks = (int)(items < slots ? items : slots) * CLUSTER;
    /* The launch with its cluster's size (a cluster of one: an ordinary launch). */
    cudaLaunchAttribute cluster = {};
    cluster.id = cudaLaunchAttributeClusterDimension;
    cluster.val.clusterDim.x = CLUSTER;
    cluster.val.clusterDim.y = 1;
    cluster.val.clusterDim.z = 1;
    cudaLaunchConfig_t config = {};
    config.gridDim = dim3(blocks);
    config.blockDim = dim3(PW_THREADS);
    config.dynamicSmemBytes = L::SMEM_BYTES;
    config.stream = a->stream;
    config.attrs = &cluster;
    config.numAttrs = CLUSTER > 1 ? 1 : 0;
    CUDA_CHECK(cudaLaunchKernelEx(&config, kernel, input_map, weight_map, output_map, a->bias, *s,
                                  tiling, channel_tiles, (int)items));
}

template <typename Op, int CLUSTER> void launch_persistent_wide(const struct conv_args *a)
{
    if (!chunks_are_vectors(&a->shape, sizeof(typename Op::elem), a->input, a->weights))
        launch_wgmma_cp_async<Op>(a);
    else if (!output_is_tma_storable<typename Op::out>(a))
        launch_wide_tile<Op>(a);
    else if (a->shape.cout >= TMA_WIDE_COUT)
        launch_persistent<Op, 256, CLUSTER>(a);
    else
        launch_persistent<Op, 128, CLUSTER>(a);
}

/* The final kernels beyond steps 12 and 13: this step's 128 x 256 tiles where the layer
 * has 256 output channels or more and a long reduction, step 14's ping-pong elsewhere.
 * The shorter the reduction, the larger the share of a tile's epilogue, which ping-pong
 * hides and this step does not: on unet-128x256 (C*R*S = 1152) step 14 took 0.0613 ms
 * and this step 0.0617, on unet-256x256 (2304) 0.1100 and 0.1084 (one run, H200). */
#define PERSISTENT_MIN_K 2048

template <typename Op> void launch_wide_or_staged(const struct conv_args *a)
{
    const struct conv_shape *s = &a->shape;
    if (s->cout >= TMA_WIDE_COUT && s->cin * s->ksize * s->ksize >= PERSISTENT_MIN_K)
        launch_persistent_wide<Op, 1>(a);
    else
        launch_staged_store<Op>(a);
}

template void launch_wide_or_staged<mma_fp16>(const struct conv_args *a);
template void launch_wide_or_staged<mma_bf16>(const struct conv_args *a);
template void launch_wide_or_staged<mma_tf32>(const struct conv_args *a);

template void launch_persistent_wide<mma_fp16, 2>(const struct conv_args *a); /* step 17 */

extern "C" void launch_conv2d_wgmma_fp16_persistent(const struct conv_args *a)
{
    launch_persistent_wide<mma_fp16, 1>(a);
}
