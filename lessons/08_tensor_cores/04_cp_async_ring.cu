/* Lesson 08, step 4, variants "mma_fp16", "mma_bf16", "mma_tf32" and "3xtf32": step
 * 3's warps and fragments, fed through a ring of STAGES tiles in shared memory. The
 * block issues the cp.async copies of the next STAGES - 1 tiles before it multiplies
 * this one, so the copies fly while the tensor cores work: one barrier per tile,
 * where steps 2 and 3 waited for every copy. This is how the libraries run
 * convolutions before Hopper; the four variants are one kernel, and what differs is
 * the mma (mma_ops.cuh).
 *
 *   build/bin/08_tensor_cores --preset unet-256x256 --variant mma_fp16
 */
#include "kernels.h"
#include "ldmatrix_fragments.cuh"
#include "mma_sync.cuh"

/* 4 stages of 16 KB (wide) or 20 KB (narrow): 3 tiles in flight. Measured on
 * unet-256x256 and not kept: 256 x 128 blocks of 8 such warps, one block per SM, 1.26x
 * slower; the input copied through L1 (cp.async.ca), 1.03x slower. */
#define RING_STAGES 4
/* 3xTF32 holds each fragment twice (big and small parts) and three accumulators
 * (mma_ops.cuh): 32 x 32 warp tiles keep that in registers, and three mma per
 * fragment load keep shared memory ahead anyway. */
typedef tiling<64, 128, 2, 4, 4, RING_STAGES, 1> split_tiling;

template <typename Op, typename T, bool VECTOR>
__global__ void __launch_bounds__(T::THREADS, T::BLOCKS_PER_SM)
    conv2d_ring(const typename Op::elem *__restrict__ input,
                const typename Op::elem *__restrict__ weights, const float *__restrict__ bias,
                typename Op::out *__restrict__ output, struct conv_shape s, int first_tile)
{
    typedef raw_bits<typename Op::elem> Raw;
    typedef tile_loader<Raw, T::BM, T::BN, T::CHUNKS, T::THREADS> loader_t;
    extern __shared__ uint4 ring[]; /* stage t: A at t * TILE_CHUNKS, B after it */

    const int warp = threadIdx.x / 32;
    const int wm = warp / T::WARPS_N * T::WM, wn = warp % T::WARPS_N * T::WN;
    const int p0 = (first_tile + blockIdx.y) * T::BM, j0 = blockIdx.x * T::BN;
    loader_t load(reinterpret_cast<const Raw *>(input), reinterpret_cast<const Raw *>(weights), s,
                  p0, j0);
    const int tiles = ceil_div(load.depth, loader_t::BK);
    typename Op::template accumulators<T::MT, T::NT> acc;

    /* Fill all stages but one; a group is committed even when empty so that "group t
     * is complete" always means "tile t has landed". */
    for (int t = 0; t < T::STAGES - 1; t++) {
        if (t < tiles) {
            load.template load<VECTOR, true>(ring + t * T::TILE_CHUNKS,
                                             ring + t * T::TILE_CHUNKS + T::BM * T::CHUNKS);
            load.template advance<VECTOR>();
        }
        commit_copies();
    }

    /* [page: ring-loop] */
    for (int t = 0; t < tiles; t++) {
        wait_copies<T::STAGES - 2>();
        /* Tile t landed for everyone, and everyone is done with tile t - 1, whose
         * stage is refilled next. */
        __syncthreads();
        const int fill = t + T::STAGES - 1;
        if (fill < tiles) {
            uint4 *stage = ring + fill % T::STAGES * T::TILE_CHUNKS;
            load.template load<VECTOR, true>(stage, stage + T::BM * T::CHUNKS);
            load.template advance<VECTOR>();
        }
        commit_copies();

        const uint4 *a_tile = ring + t % T::STAGES * T::TILE_CHUNKS;
        multiply_stage<T, ldmatrix_fragments>(acc, a_tile, a_tile + T::BM * T::CHUNKS, wm, wn);
    }
    /* [/page: ring-loop] */
    acc.finish();
    store_warp_tile(acc.sum, output, bias, s, p0 + wm, j0 + wn);
}

template <typename Op, typename T> static void launch_tiling(const struct conv_args *a)
{
    launch_blocks<Op, T>(a, conv2d_ring<Op, T, true>, conv2d_ring<Op, T, false>);
}

extern "C" size_t mma_smem_bytes(const struct conv_shape *s)
{
    return narrow_layer(s) ? narrow_tiling<RING_STAGES>::SMEM_BYTES
                           : wide_tiling<RING_STAGES>::SMEM_BYTES;
}

extern "C" size_t mma_3xtf32_smem_bytes(const struct conv_shape *s)
{
    (void)s;
    return split_tiling::SMEM_BYTES;
}

template <typename Op> static void launch(const struct conv_args *a)
{
    if (narrow_layer(&a->shape))
        launch_tiling<Op, narrow_tiling<RING_STAGES>>(a);
    else
        launch_tiling<Op, wide_tiling<RING_STAGES>>(a);
}

PRECISION_LAUNCHERS(launch_conv2d_mma, launch)

extern "C" void launch_conv2d_3xtf32(const struct conv_args *a)
{
    launch_tiling<mma_3xtf32, split_tiling>(a);
}
