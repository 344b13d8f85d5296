/* Lesson 08, step 10, variant "wgmma_fp16_pingpong": a persistent kernel whose two
 * consumer warpgroups take turns. Steps 7-9 start a block per tile: each block pays a
 * pipeline fill (its first loads' latency, with nothing to multiply) and an epilogue
 * (its accumulators to global memory) during which the SM's tensor cores idle, and the
 * blocks of a wave start together, so they fill together and store together. Here:
 *   - one block per SM, which walks the layer's tiles (blockIdx.x, then every
 *     gridDim.x-th): the producer loads their steps one after the other into the ring
 *     without a pause, so the next tile's first stages land while this tile ends;
 *   - each consumer warpgroup computes a whole 128 x BN tile (two wgmma.m64n<BN> per 16
 *     values of k, BN accumulators per thread), the two warpgroups taking the block's
 *     tiles in turn. The ring hands out the steps in order, so warpgroup 1 multiplies
 *     its tile while warpgroup 0 stores the one before, and the other way round: the
 *     epilogues hide behind the other warpgroup's multiplies (CUTLASS's "ping-pong").
 *   - A stage is read by one warpgroup only: its empty barrier waits for 4 warps. A
 *     warpgroup steps its ring position over the other's tiles without reading them.
 *   - The warpgroups take turns through an mbarrier each (`turn`): one starts a tile's
 *     multiplies only once the other has waited for every stage of its tile. Without
 *     it, a warpgroup that stepped over the other's tile could wait on a stage's `full`
 *     barrier two rounds ahead of the loads, and a parity wait cannot tell round r from
 *     round r + 2: it would read the stage before its bytes have landed.
 *
 * Step 10 runs BN = 128; step 11 (11_narrow_tile.cu) launches the same kernel with
 * BN = 64 too, and on bf16 and TF32 (wgmma.m64n<BN>k8.tf32: 32 channels per 128-byte row);
 * step 14 (14_staged_store.cu) with STAGED: the output through shared memory and TMA
 * stores, as step 13's.
 *
 *   build/bin/08_tensor_cores --preset unet-64x128 --variant wgmma_fp16_pingpong
 */
#include <limits.h>

#include "kernels.h"
#include "tma_conv.cuh"
#include "wgmma_steps.h"

#define PP_BN 128      /* step 10's tile width */
#define PP_CONSUMERS 2 /* warpgroups 0 and 1; the producer is warpgroup 2 */
#define PP_THREADS (128 * (PP_CONSUMERS + 1))
#define PP_WARPS_PER_CONSUMER 4
#define PP_PRODUCER_REGISTERS 40 /* 128 x 40 + 256 x 232 = 64512 registers */
#define PP_CONSUMER_REGISTERS 232

/* One step of a warpgroup's 128 x BN tile: for each 16 values of k, the wgmma of rows
 * 0..63 and of rows 64..127 (8 KB further in A), committed as one group. */
template <typename Op, int BN>
static __device__ __forceinline__ void multiply_tile_step(float (&acc)[2][BN / 2],
                                                          const uint4 *a_tile, const uint4 *b_tile)
{
    const uint64_t a_desc = tile_descriptor(a_tile), b_desc = tile_descriptor(b_tile);
    pin_accumulators(acc[0]);
    pin_accumulators(acc[1]);
    wgmma_fence();
#pragma unroll
    for (int k = 0; k < WG_CHUNKS * CHUNK_BYTES / WG_KSTEP_BYTES; k++)
#pragma unroll
        for (int half = 0; half < 2; half++)
            wgmma_op<Op, BN>::run(
                acc[half],
                descriptor_plus(a_desc, half * WG_ROWS_PER_GROUP * WG_CHUNKS * CHUNK_BYTES +
                                            k * WG_KSTEP_BYTES),
                descriptor_plus(b_desc, k * WG_KSTEP_BYTES));
    wgmma_commit();
}

/* The block's shared memory: step 10's ring, and with STAGED (step 14) a buffer of 64
 * rows x BN output channels per consumer warpgroup, the ring one stage shorter where
 * both would not fit (TF32 at BN = 128: 5 stages of 32 KB and 2 x 32 KB). */
template <typename Op, int BN, bool STAGED> struct pingpong_layout {
    typedef tma_tile<typename Op::elem, BN> tile_t;
    static constexpr int STAGING_BYTES =
        STAGED ? WG_ROWS_PER_GROUP * BN * (int)sizeof(typename Op::out) : 0;
    static constexpr int STAGES =
        tile_t::SMEM_BYTES + PP_CONSUMERS * STAGING_BYTES <= TMA_SMEM_LIMIT ? tile_t::STAGES
                                                                            : tile_t::STAGES - 1;
    static constexpr int SMEM_BYTES =
        STAGES * tile_t::STAGE_BYTES + WG_SWIZZLE_ATOM + PP_CONSUMERS * STAGING_BYTES;
    static_assert(SMEM_BYTES <= TMA_SMEM_LIMIT, "the ring and the buffers fit one block");
};

template <typename Op, int BN, bool STAGED>
__global__ void __launch_bounds__(PP_THREADS, 1)
    conv2d_wgmma_pingpong(const __grid_constant__ CUtensorMap input_map,
                          const __grid_constant__ CUtensorMap weight_map,
                          const __grid_constant__ CUtensorMap output_map,
                          const float *__restrict__ bias, typename Op::out *__restrict__ output,
                          struct conv_shape s, struct pixel_tiling tiling, int channel_tiles,
                          int tiles)
{
    typedef typename Op::elem E;
    typedef tma_tile<E, BN> tile_t;
    typedef pingpong_layout<Op, BN, STAGED> L;
    constexpr int STAGES = L::STAGES;
    extern __shared__ uint4 smem[];
    __shared__ uint64_t full[STAGES], empty[STAGES];
    __shared__ uint64_t turn[PP_CONSUMERS]; /* turn[g]: warpgroup g may start its next tile */
    uint4 *ring = swizzle_aligned(smem);

    if (threadIdx.x == 0) {
        for (int i = 0; i < STAGES; i++) {
            barrier_init(&full[i], 1);
            barrier_init(&empty[i], PP_WARPS_PER_CONSUMER);
        }
        for (int g = 0; g < PP_CONSUMERS; g++)
            barrier_init(&turn[g], PP_WARPS_PER_CONSUMER);
        barrier_init_fence();
    }
    __syncthreads();

    const int warpgroup = threadIdx.x / 128;
    if (warpgroup == PP_CONSUMERS) {
        registers_down<PP_PRODUCER_REGISTERS>();
        /* The producer: every step of every tile of the block, in order. */
        if (threadIdx.x == PP_CONSUMERS * 128)
            load_tiles<E, BN, STAGES>(&input_map, &weight_map, ring, full, empty, s, tiling,
                                      channel_tiles, tiles);
        return;
    }
    registers_up<PP_CONSUMER_REGISTERS>();

    /* A consumer: the block's tiles k = warpgroup, warpgroup + 2, ... */
    const int lane = threadIdx.x % 32;
    ring_position<STAGES> at;
    int k = 0, mine = 0; /* the block's tiles so far, and this warpgroup's */
    for (int tile = blockIdx.x; tile < tiles; tile += gridDim.x, k++) {
        const tma_block<E, BN> block(s, tiling, tile / channel_tiles, tile % channel_tiles * BN);
        /* [page: pingpong-turn] */
        if (k % PP_CONSUMERS != warpgroup) {
            at.skip(block.steps); /* the other warpgroup's tile */
            continue;
        }
        /* Its turn: the other warpgroup has waited for all of the tile before (warpgroup
         * 0's first tile waits for nobody). Turn j of warpgroup g is phase j - 1 + g. */
        const int turn_phase = mine - 1 + warpgroup;
        if (turn_phase >= 0)
            barrier_wait(&turn[warpgroup], turn_phase & 1);
        /* [/page: pingpong-turn] */
        float acc[2][BN / 2] = {};
        int previous = 0;
        for (int i = 0; i < block.steps; i++) {
            barrier_wait(&full[at.stage], at.phase);
            multiply_tile_step<Op, BN>(acc, tile_t::a_rows(ring, at.stage, 0),
                                       tile_t::b_rows(ring, at.stage));
            wgmma_wait<WG_IN_FLIGHT>();
            pin_accumulators(acc[0]);
            pin_accumulators(acc[1]);
            if (i > 0 && lane == 0)
                barrier_arrive(&empty[previous]);
            previous = at.stage;
            at.advance();
        }
        /* The other warpgroup's turn; then this tile's last stage back too, the producer
         * going on with the next tiles. */
        if (lane == 0)
            barrier_arrive(&turn[PP_CONSUMERS - 1 - warpgroup]);
        mine++;
        wgmma_wait<0>();
        pin_accumulators(acc[0]);
        pin_accumulators(acc[1]);
        if (lane == 0)
            barrier_arrive(&empty[previous]);
        if constexpr (STAGED) {
            uint4 *buffer =
                ring + STAGES * tile_t::CHUNKS + warpgroup * (L::STAGING_BYTES / CHUNK_BYTES);
#pragma unroll
            for (int half = 0; half < 2; half++) {
                const int first = half * WG_ROWS_PER_GROUP; /* the half's first pixel */
                store_rows_tma<BN, typename Op::out>(
                    acc[half], bias, s.cout, block.j0, buffer, &output_map,
                    block.x0 + (first & ((1 << tiling.width_log2) - 1)),
                    block.y0 + (first >> tiling.width_log2), block.n);
            }
        } else {
#pragma unroll
            for (int half = 0; half < 2; half++)
                store_tile<BN>(acc[half], output, bias, s.cout, block.j0, half,
                               [&](int row) { return block.pixel_of(row, s, tiling); });
        }
    }
    if (STAGED && threadIdx.x % 128 == 0)
        bulk_wait(); /* the last stores done before the block's shared memory goes */
}

/* One block per SM (of those a->sms leaves it), or one per tile where there are fewer.
 * STAGED needs output_is_tma_storable. */
template <typename Op, int BN, bool STAGED> void launch_pingpong(const struct conv_args *a)
{
    typedef pingpong_layout<Op, BN, STAGED> L;
    const struct conv_shape *s = &a->shape;
    const struct pixel_tiling tiling = pixel_tiling_of(s);
    const int channel_tiles = ceil_div(s->cout, BN);
    const long long tiles = (long long)s->n * tiling.tiles_y * tiling.tiles_x * channel_tiles;
    if (tiles > INT_MAX) { /* a tile index is an int: step 8's kernel walks such layers */
        launch_warp_specialised<Op, 128, 1>(a);
        return;
    }
    CUtensorMap input_map, weight_map, output_map = {};
    encode_layer_maps<typename Op::elem, BN>(a, tiling, &input_map, &weight_map);
    if (STAGED)
        encode_group_output_map<typename Op::out>(a, tiling, &output_map);
    auto kernel = conv2d_wgmma_pingpong<Op, BN, STAGED>;
    CUDA_CHECK(
        cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, L::SMEM_BYTES));
    const int sms = persistent_sms(a);
    const int blocks = (int)(tiles < sms ? tiles : sms);
    kernel<<<blocks, PP_THREADS, L::SMEM_BYTES, a->stream>>>(
        input_map, weight_map, output_map, a->bias, static_cast<typename Op::out *>(a->output), *s,
        tiling, channel_tiles, (int)tiles);
    CUDA_CHECK_LAUNCH();
}

#define PINGPONG_LAUNCHERS(Op)                                                                     \
    template void launch_pingpong<Op, 64, false>(const struct conv_args *a);                       \
    template void launch_pingpong<Op, 128, false>(const struct conv_args *a);                      \
    template void launch_pingpong<Op, 64, true>(const struct conv_args *a);                        \
    template void launch_pingpong<Op, 128, true>(const struct conv_args *a);
PINGPONG_LAUNCHERS(mma_fp16)
PINGPONG_LAUNCHERS(mma_bf16)
PINGPONG_LAUNCHERS(mma_tf32)

extern "C" void launch_conv2d_wgmma_fp16_pingpong(const struct conv_args *a)
{
    if (!chunks_are_vectors(&a->shape, sizeof(mma_fp16::elem), a->input, a->weights))
        launch_wgmma_cp_async<mma_fp16>(a);
    else
        launch_pingpong<mma_fp16, PP_BN, false>(a);
}
