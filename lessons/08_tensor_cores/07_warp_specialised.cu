/* Lesson 08, step 7, variant "wgmma_fp16_ws": step 6 with warp specialisation. The
 * block gets a third warpgroup, the producer, whose one thread does nothing but issue
 * the TMA loads; the two consumer warpgroups do nothing but multiply. No __syncthreads
 * in the loop: each side waits only for the mbarrier the other side signals.
 *   - Two mbarriers per stage: `full` completes when the stage's bytes have landed (the
 *     producer's arrival and the TMA's bytes), `empty` when the 8 consumer warps are done
 *     reading it (one arrival per warp). The producer waits on `empty` before it
 *     refills a stage, a consumer on `full` before it reads one, and the loads run up to
 *     STAGES - 1 steps ahead of the multiplies.
 *   - setmaxnreg moves registers from the producer, which needs few, to the consumers,
 *     which hold the accumulators: 40 and 232 per thread, where the launch gives every
 *     thread the same 168.
 * Step 8 runs this kernel with a 256-wide tile, step 9 with two blocks per SM.
 *
 *   build/bin/08_tensor_cores --preset unet-256x256 --variant wgmma_fp16_ws
 */
#include "kernels.h"
#include "tma_conv.cuh"
#include "wgmma_steps.h"

#define WS_CONSUMER_THREADS 256 /* 2 consumer warpgroups, threads 0..255 */
#define WS_CONSUMER_WARPS 8
/* The producer after them: a warpgroup (setmaxnreg works on whole warpgroups) where
 * one block fills an SM, a single warp where two blocks share it (step 9), which leaves
 * 65536 / (2 x 288) = 113 registers per thread, enough for the consumers without
 * setmaxnreg. */
template <int BLOCKS> struct ws_layout {
    static constexpr int PRODUCER_THREADS = BLOCKS == 1 ? 128 : 32;
    static constexpr int THREADS = WS_CONSUMER_THREADS + PRODUCER_THREADS;
};
/* One block of 384 threads gets 168 registers per thread at launch; setmaxnreg then
 * moves them from the producer, which needs few, to the consumers, which hold the
 * accumulators: 128 x 40 + 256 x 232 = 64512 of the SM's 65536. */
#define WS_PRODUCER_REGISTERS 40
#define WS_CONSUMER_REGISTERS 232

template <typename Op, int BN, int BLOCKS>
__global__ void __launch_bounds__(ws_layout<BLOCKS>::THREADS, BLOCKS)
    conv2d_wgmma_ws(const __grid_constant__ CUtensorMap input_map,
                    const __grid_constant__ CUtensorMap weight_map, const float *__restrict__ bias,
                    typename Op::out *__restrict__ output, struct conv_shape s,
                    struct pixel_tiling tiling, int first_tile)
{
    typedef tma_tile<typename Op::elem, BN, BLOCKS> tile_t;
    constexpr int STAGES = tile_t::STAGES;
    extern __shared__ uint4 smem[];
    /* full[i]: stage i's bytes have landed. empty[i]: the consumers are done with it. */
    __shared__ uint64_t full[STAGES], empty[STAGES];
    uint4 *ring = swizzle_aligned(smem);
    const tma_block<typename Op::elem, BN> block(s, tiling, first_tile);

    /* Every stage's barriers start in phase 0: full waits for the producer's one arrival
     * (and the bytes it announces), empty for one arrival per consumer warp. */
    if (threadIdx.x == 0) {
        for (int i = 0; i < STAGES; i++) {
            barrier_init(&full[i], 1);
            barrier_init(&empty[i], WS_CONSUMER_WARPS);
        }
        barrier_init_fence();
    }
    __syncthreads(); /* the last block-wide barrier: from here on, only mbarriers */

    if (threadIdx.x >= WS_CONSUMER_THREADS) {
        if constexpr (BLOCKS == 1)
            registers_down<WS_PRODUCER_REGISTERS>();
        /* The producer: step t fills stage t % STAGES in round t / STAGES of the ring;
         * from the second round on, only once the consumers have emptied the stage in
         * the round before (phase round - 1 of its empty barrier: parity phase ^ 1). */
        /* [page: producer] */
        if (threadIdx.x == WS_CONSUMER_THREADS) {
            tma_loader<typename Op::elem, BN> loader(&input_map, &weight_map, block, s);
            ring_position<STAGES> at;
            for (int t = 0; t < block.steps; t++) {
                if (t >= STAGES)
                    barrier_wait(&empty[at.stage], at.phase ^ 1);
                loader.load(ring + at.stage * tile_t::CHUNKS, &full[at.stage]);
                at.advance();
            }
        }
        /* [/page: producer] */
        return; /* the producer's other threads have nothing to do */
    }
    if constexpr (BLOCKS == 1)
        registers_up<WS_CONSUMER_REGISTERS>();

    /* The consumers: warpgroup 0 multiplies pixels 0..63 of the rectangle, 1 the rest,
     * each waiting on a stage's full barrier and giving it back through its empty one
     * (multiply_tile, tma_conv.cuh). */
    const int group = threadIdx.x / 128;
    float acc[tile_t::ACCUMULATORS] = {};
    ring_position<STAGES> at;
    multiply_tile<Op, BN, tile_t, false>(acc, ring, full, empty, at, block.steps, group);

    store_tile<BN>(acc, output, bias, s.cout, block.j0, group,
                   [&](int row) { return block.pixel_of(row, s, tiling); });
}

template <typename Op, int BN, int BLOCKS> void launch_warp_specialised(const struct conv_args *a)
{
    launch_tma_blocks<Op, BN, BLOCKS>(a, conv2d_wgmma_ws<Op, BN, BLOCKS>,
                                      ws_layout<BLOCKS>::THREADS);
}

template void launch_warp_specialised<mma_fp16, 128, 1>(const struct conv_args *a);
template void launch_warp_specialised<mma_bf16, 128, 1>(const struct conv_args *a);
template void launch_warp_specialised<mma_tf32, 128, 1>(const struct conv_args *a);
template void launch_warp_specialised<mma_fp16, 256, 1>(const struct conv_args *a);
template void launch_warp_specialised<mma_bf16, 256, 1>(const struct conv_args *a);
template void launch_warp_specialised<mma_tf32, 256, 1>(const struct conv_args *a);
template void launch_warp_specialised<mma_fp16, 128, 2>(const struct conv_args *a);
template void launch_warp_specialised<mma_bf16, 128, 2>(const struct conv_args *a);
template void launch_warp_specialised<mma_tf32, 128, 2>(const struct conv_args *a);

extern "C" void launch_conv2d_wgmma_fp16_ws(const struct conv_args *a)
{
    if (!chunks_are_vectors(&a->shape, sizeof(__half), a->input, a->weights))
        launch_wgmma_cp_async<mma_fp16>(a);
    else
        launch_warp_specialised<mma_fp16, 128, 1>(a);
}
