/* Lesson 08, step 5, variant "wgmma_fp16_cp_async": Hopper's warpgroup MMA
 * (wgmma_ops.cuh), fed the way step 4 fed mma.sync. mma.sync needs every fragment in
 * registers: ldmatrix, 230 registers per thread, 2 warps per scheduler. wgmma reads both
 * operands straight from shared memory, a warpgroup (4 warps) at a time, and runs
 * asynchronously while the warps go on.
 *   - A block of 2 warpgroups computes 128 pixels x 128 channels: each warpgroup 64
 *     pixels, one wgmma.m64n128k16 per 16 values of k, 64 fp32 accumulators per thread.
 *   - All 256 threads copy the tiles with step 4's tile_loader: cp.async into a ring of
 *     4 stages of 128-byte rows in the 128-byte swizzle wgmma reads. One stage is read by
 *     the wgmmas still in flight, one by those issued now, and the copies run 2 tiles
 *     ahead in the others.
 *   - cp.async writes shared memory through the generic proxy and wgmma reads it through
 *     the async proxy: each thread fences (fence.proxy.async) between its copies'
 *     arrival and the barrier that publishes them.
 * It is also every later step's kernel for channel counts the TMA cannot read (C not a
 * multiple of 16 bytes: the first U-Net layer's C = 3), with each element gathered on
 * its own (VECTOR false).
 *
 *   build/bin/08_tensor_cores --preset unet-256x256 --variant wgmma_fp16_cp_async
 */
#include "cuda_check.h"
#include "grid_chunks.cuh"
#include "kernels.h"
#include "wgmma_ops.cuh"
#include "wgmma_steps.h"

#define CP_BN 128 /* output channels per block */
#define CP_THREADS 256
#define CP_STAGES 4
#define CP_AHEAD (CP_STAGES - 1 - WG_IN_FLIGHT) /* tiles being copied ahead */
#define CP_TILE_CHUNKS ((WG_BM + CP_BN) * WG_CHUNKS)
#define CP_SMEM_BYTES (CP_STAGES * CP_TILE_CHUNKS * CHUNK_BYTES + WG_SWIZZLE_ATOM)

/* Block y computes pixels (first_tile + y) * 128.. in N*H*W order. */
template <typename Op, bool VECTOR>
__global__ void __launch_bounds__(CP_THREADS, 1)
    conv2d_wgmma_cp_async(const typename Op::elem *__restrict__ input,
                          const typename Op::elem *__restrict__ weights,
                          const float *__restrict__ bias, typename Op::out *__restrict__ output,
                          struct conv_shape s, int first_tile)
{
    typedef raw_bits<typename Op::elem> Raw;
    typedef tile_loader<Raw, WG_BM, CP_BN, WG_CHUNKS, CP_THREADS> loader_t;
    extern __shared__ uint4 smem[];
    uint4 *ring = swizzle_aligned(smem);

    const int group = threadIdx.x / 128;
    const int p0 = (first_tile + blockIdx.y) * WG_BM, j0 = blockIdx.x * CP_BN;
    loader_t load(reinterpret_cast<const Raw *>(input), reinterpret_cast<const Raw *>(weights), s,
                  p0, j0);
    const int tiles = ceil_div(load.depth, loader_t::BK);
    float acc[64] = {};

    for (int t = 0; t < CP_AHEAD; t++) {
        if (t < tiles) {
            load.template load<VECTOR, true>(ring + t * CP_TILE_CHUNKS,
                                             ring + t * CP_TILE_CHUNKS + WG_BM * WG_CHUNKS);
            load.template advance<VECTOR>();
        }
        commit_copies();
    }

    for (int t = 0; t < tiles; t++) {
        wait_copies<CP_AHEAD - 1>(); /* this thread's copies of tile t have landed */
        fence_async_proxy();
        /* Tile t is in shared memory for everyone; everyone's wgmmas on tile t - 2 have
         * completed (wgmma_wait<WG_IN_FLIGHT> below), so its stage can be refilled. */
        __syncthreads();
        const int fill = t + CP_AHEAD;
        if (fill < tiles) {
            uint4 *stage = ring + fill % CP_STAGES * CP_TILE_CHUNKS;
            load.template load<VECTOR, true>(stage, stage + WG_BM * WG_CHUNKS);
            load.template advance<VECTOR>();
        }
        commit_copies();

        const uint4 *a_tile =
            ring + t % CP_STAGES * CP_TILE_CHUNKS + group * WG_ROWS_PER_GROUP * WG_CHUNKS;
        const uint4 *b_tile = ring + t % CP_STAGES * CP_TILE_CHUNKS + WG_BM * WG_CHUNKS;
        multiply_step<Op, CP_BN>(acc, a_tile, b_tile);
        /* Tile t's wgmmas keep running while the warps go on to the barrier of tile
         * t + 1 and copy tile t + 3. */
        wgmma_wait<WG_IN_FLIGHT>();
        pin_accumulators(acc);
    }
    wgmma_wait<0>();
    pin_accumulators(acc);

    const int pixels = s.n * s.h * s.w;
    store_tile<CP_BN>(acc, output, bias, s.cout, j0, group,
                      [&](int row) { return p0 + row < pixels ? p0 + row : -1; });
}

template <typename Op> void launch_wgmma_cp_async(const struct conv_args *a)
{
    const struct conv_shape *s = &a->shape;
    typedef typename Op::elem E;
    const E *input = static_cast<const E *>(a->input),
            *weights = static_cast<const E *>(a->weights);
    typename Op::out *output = static_cast<typename Op::out *>(a->output);
    auto kernel = chunks_are_vectors(s, sizeof(E), input, weights)
                      ? conv2d_wgmma_cp_async<Op, true>
                      : conv2d_wgmma_cp_async<Op, false>;
    CUDA_CHECK(
        cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, CP_SMEM_BYTES));
    const int pixel_tiles = ceil_div(s->n * s->h * s->w, WG_BM);
    for (int first = 0; first < pixel_tiles; first += MAX_GRID_YZ) {
        const dim3 grid(ceil_div(s->cout, CP_BN), min(pixel_tiles - first, MAX_GRID_YZ));
        kernel<<<grid, CP_THREADS, CP_SMEM_BYTES, a->stream>>>(input, weights, a->bias, output, *s,
                                                               first);
        CUDA_CHECK_LAUNCH();
    }
}

template void launch_wgmma_cp_async<mma_fp16>(const struct conv_args *a);
template void launch_wgmma_cp_async<mma_bf16>(const struct conv_args *a);
template void launch_wgmma_cp_async<mma_tf32>(const struct conv_args *a);

extern "C" int wgmma_code_cc(void)
{
    return wgmma_built_cc();
}

extern "C" void launch_conv2d_wgmma_fp16_cp_async(const struct conv_args *a)
{
    launch_wgmma_cp_async<mma_fp16>(a);
}
