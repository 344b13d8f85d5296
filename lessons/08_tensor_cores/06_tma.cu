/* Lesson 08, step 6, variant "wgmma_fp16_tma": step 5's warpgroups, fed by the Tensor
 * Memory Accelerator (tma_pipeline.cuh, tma_conv.cuh). Step 5's 256 threads each
 * computed addresses and issued cp.async for 16 bytes at a time; here ONE thread asks
 * for a whole stage, two boxes (A: 128 pixels x 128 bytes of channels moved by the tap;
 * B: 128 output channels x the same channels), and the TMA unit moves them, writes the
 * zeros of the padding, and lands them in the swizzle wgmma reads.
 *   - The ring has 6 stages of 32 KB, each with an mbarrier `full` that completes when
 *     the stage's bytes have landed: the warps wait on it, not on their own copies.
 *   - Before a stage is refilled, every warpgroup must be done with it: a __syncthreads
 *     per step, after each warpgroup's wgmma_wait, and then thread 0 issues the loads of
 *     the step STAGES - 1 ahead into the stage just freed.
 * What it still pays: the block-wide barrier every step, and thread 0's warp issuing
 * the loads between its multiplies. Step 7 gives the loads a warp of their own.
 *
 *   build/bin/08_tensor_cores --preset unet-256x256 --variant wgmma_fp16_tma
 */
#include "kernels.h"
#include "tma_conv.cuh"
#include "wgmma_steps.h"

#define TMA_ONLY_THREADS 256 /* 2 warpgroups that all multiply */

template <typename Op>
__global__ void __launch_bounds__(TMA_ONLY_THREADS, 1)
    conv2d_wgmma_tma(const __grid_constant__ CUtensorMap input_map,
                     const __grid_constant__ CUtensorMap weight_map, const float *__restrict__ bias,
                     typename Op::out *__restrict__ output, struct conv_shape s,
                     struct pixel_tiling tiling, int first_tile)
{
    typedef tma_tile<typename Op::elem, 128> tile_t;
    constexpr int STAGES = tile_t::STAGES;
    extern __shared__ uint4 smem[];
    __shared__ uint64_t full[STAGES]; /* full[i]: stage i's bytes have landed */
    uint4 *ring = swizzle_aligned(smem);
    const tma_block<typename Op::elem, 128> block(s, tiling, first_tile);
    tma_loader<typename Op::elem, 128> loader(&input_map, &weight_map, block, s);

    /* Thread 0 starts the first STAGES - 1 steps. */
    ring_position<STAGES> fill;
    if (threadIdx.x == 0) {
        for (int i = 0; i < STAGES; i++)
            barrier_init(&full[i], 1);
        barrier_init_fence();
        for (int t = 0; t < min(STAGES - 1, block.steps); t++) {
            loader.load(ring + fill.stage * tile_t::CHUNKS, &full[fill.stage]);
            fill.advance();
        }
    }
    __syncthreads(); /* the barriers are initialised for everyone */

    const int group = threadIdx.x / 128;
    float acc[tile_t::ACCUMULATORS] = {};
    ring_position<STAGES> at;
    for (int t = 0; t < block.steps; t++) {
        barrier_wait(&full[at.stage], at.phase);
        multiply_step<Op, 128>(acc, tile_t::a_rows(ring, at.stage, group),
                               tile_t::b_rows(ring, at.stage));
        wgmma_wait<WG_IN_FLIGHT>();
        pin_accumulators(acc);
        /* Every warpgroup's wgmmas of step t - 1 have completed: its stage, the one
         * step t + STAGES - 1 fills, is free. */
        __syncthreads();
        if (threadIdx.x == 0 && t + STAGES - 1 < block.steps) {
            loader.load(ring + fill.stage * tile_t::CHUNKS, &full[fill.stage]);
            fill.advance();
        }
        at.advance();
    }
    wgmma_wait<0>();
    pin_accumulators(acc);

    store_tile<128>(acc, output, bias, s.cout, block.j0, group,
                    [&](int row) { return block.pixel_of(row, s, tiling); });
}

extern "C" void launch_conv2d_wgmma_fp16_tma(const struct conv_args *a)
{
    if (!chunks_are_vectors(&a->shape, sizeof(__half), a->input, a->weights))
        launch_wgmma_cp_async<mma_fp16>(a);
    else
        launch_tma_blocks<mma_fp16, 128>(a, conv2d_wgmma_tma<mma_fp16>, TMA_ONLY_THREADS);
}
