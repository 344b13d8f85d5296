/* Lesson 08, step 15, variant "wgmma_3xtf32": fp32 accuracy on Hopper's tensor cores.
 * Step 4's 3xTF32 (mma_ops.cuh) splits each fp32 operand into big + small TF32 parts
 * and multiplies big*big + big*small + small*big with mma.sync, which tops out at 60 %
 * of the tensor cores' rate; here the three products are wgmmas, in step 7's
 * warp-specialised kernel. What the split needs of a kernel that reads its operands
 * from shared memory through descriptors:
 *   - B (the weights) is split once per call, before the convolution, by a small
 *     kernel: big parts and small parts into the scratch the harness gives the variant,
 *     two tensors shaped like the weights, each loaded by its own TMA box per step;
 *   - A (the input) cannot be: each stage's 128 pixels are split when they land. A
 *     consumer warp rewrites its own 16 rows of the stage as big parts and writes their
 *     small parts into its warpgroup's 8 KB buffer, at the same offsets, so in the same
 *     128-byte swizzle; a fence makes the writes visible to the wgmmas, which read
 *     through the async proxy;
 *   - as in step 4, the big products of a stage go into accumulators that start from
 *     zero, added to the sum with a rounded fp32 add once they are done (the tensor core
 *     adds with truncation, which drifts over a long k), the small products into a third
 *     set over all of k. So a warpgroup waits for its stage's wgmmas before the next
 *     (the other warpgroup's keep the tensor cores busy meanwhile);
 *   - three accumulator sets of 64 x BN per consumer warpgroup, BN / 2 registers each
 *     a thread: at BN = 128, 192 of the 232 setmaxnreg gives a consumer (no spills). A
 *     stage is A (16 KB) and B's big and small parts (16 KB each), 4 stages; the small
 *     parts of A take 16 KB more. Layers of at most 64 output channels take BN = 64 (6
 *     stages of 32 KB). Measured (H200, the notes): 128 x 64 tiles everywhere ran the
 *     deep layers 1.49 to 1.55 times slower: each input value split for half the
 *     products.
 * Where the TMA cannot read the layer (rows of channels not whole 16-byte chunks),
 * step 4's 3xtf32.
 *
 *   build/bin/08_tensor_cores --preset unet-512x512 --variant wgmma_3xtf32
 */
#include "kernels.h"
#include "tma_conv.cuh"

#define SPLIT_CONSUMER_THREADS 256 /* 2 consumer warpgroups, threads 0..255 */
#define SPLIT_CONSUMER_WARPS 8
#define SPLIT_THREADS (SPLIT_CONSUMER_THREADS + 128) /* and a producer warpgroup */
#define SPLIT_PRODUCER_REGISTERS 40
#define SPLIT_CONSUMER_REGISTERS 232
#define SPLIT_WEIGHTS_THREADS 256
#define SPLIT_WEIGHTS_BLOCKS 4096 /* at most: a grid-stride loop does the rest */

/* A stage: A's 128 rows, then B's big parts, then B's small parts (BN rows each), all
 * rows of 128 bytes (32 fp32 values of k): 32 KB at BN = 64 (6 stages), 48 KB at BN =
 * 128 (4). After the stages, A's small parts, 64 rows per consumer warpgroup. */
template <int BN> struct split_layout {
    static constexpr int STAGES = BN == 64 ? 6 : 4;
    static constexpr int A_CHUNKS = WG_BM * WG_CHUNKS;
    static constexpr int B_CHUNKS = BN * WG_CHUNKS;
    static constexpr int STAGE_CHUNKS = A_CHUNKS + 2 * B_CHUNKS;
    static constexpr int GROUP_CHUNKS = WG_ROWS_PER_GROUP * WG_CHUNKS; /* 8 KB */
    static constexpr int SMEM_BYTES =
        (STAGES * STAGE_CHUNKS + 2 * GROUP_CHUNKS) * CHUNK_BYTES + WG_SWIZZLE_ATOM;
    static_assert(SMEM_BYTES <= TMA_SMEM_LIMIT, "the ring fits a block");
    static_assert(STAGE_CHUNKS * CHUNK_BYTES % WG_SWIZZLE_ATOM == 0, "stages keep alignment");
};

/* The weights' big parts into big[], their small parts into small[] (as fp32 patterns
 * with TF32's dropped bits cleared: exactly what the tensor core multiplies). */
__global__ void split_weights(const float *__restrict__ weights, uint32_t *__restrict__ big,
                              uint32_t *__restrict__ small, size_t count)
{
    for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < count;
         i += (size_t)gridDim.x * blockDim.x) {
        uint32_t x[1] = {__float_as_uint(weights[i])}, lo[1];
        split_tf32(x, lo);
        big[i] = x[0];
        small[i] = lo[0];
    }
}

/* A consumer warp's 16 rows of the stage's A (2 KB, 128 chunks, 4 per lane) split in
 * place into big parts, their small parts to the same offsets of `small`. */
static __device__ __forceinline__ void split_rows(uint4 *rows, uint4 *small)
{
    const int lane = threadIdx.x % 32, first = threadIdx.x % 128 / 32 * 16 * WG_CHUNKS;
#pragma unroll
    for (int i = 0; i < 4; i++) {
        const int chunk = first + i * 32 + lane;
        uint32_t x[4], lo[4];
        *reinterpret_cast<uint4 *>(x) = rows[chunk];
        split_tf32(x, lo);
        rows[chunk] = *reinterpret_cast<const uint4 *>(x);
        small[chunk] = *reinterpret_cast<const uint4 *>(lo);
    }
    fence_async_proxy(); /* the wgmmas read these through the async proxy */
}

template <int N> static __device__ __forceinline__ void zero(float (&x)[N])
{
#pragma unroll
    for (int i = 0; i < N; i++)
        x[i] = 0.0f;
}

template <int BN>
__global__ void __launch_bounds__(SPLIT_THREADS, 1)
    conv2d_wgmma_3xtf32(const __grid_constant__ CUtensorMap input_map,
                        const __grid_constant__ CUtensorMap big_map,
                        const __grid_constant__ CUtensorMap small_map,
                        const float *__restrict__ bias, float *__restrict__ output,
                        struct conv_shape s, struct pixel_tiling tiling, int first_tile)
{
    typedef split_layout<BN> L;
    constexpr int STAGES = L::STAGES;
    typedef wgmma_op<mma_tf32, BN> op;
    extern __shared__ uint4 smem[];
    __shared__ uint64_t full[STAGES], empty[STAGES];
    uint4 *ring = swizzle_aligned(smem);
    const tma_block<float, BN> block(s, tiling, first_tile);

    if (threadIdx.x == 0) {
        for (int i = 0; i < STAGES; i++) {
            barrier_init(&full[i], 2); /* the loader's arrival and the third box's */
            barrier_init(&empty[i], SPLIT_CONSUMER_WARPS);
        }
        barrier_init_fence();
    }
    __syncthreads();

    if (threadIdx.x >= SPLIT_CONSUMER_THREADS) {
        registers_down<SPLIT_PRODUCER_REGISTERS>();
        if (threadIdx.x == SPLIT_CONSUMER_THREADS) {
            /* Step 7's producer, with a third box: the same step's small parts of B. */
            tma_loader<float, BN> loader(&input_map, &big_map, block, s);
            tma_prefetch(&small_map);
            ring_position<STAGES> at;
            for (int t = 0; t < block.steps; t++) {
                if (t >= STAGES)
                    barrier_wait(&empty[at.stage], at.phase ^ 1);
                uint4 *stage = ring + at.stage * L::STAGE_CHUNKS;
                /* The third box announces its bytes with its own arrival. */
                barrier_expect_bytes(&full[at.stage], L::B_CHUNKS * CHUNK_BYTES);
                tma_load_3d(stage + L::A_CHUNKS + L::B_CHUNKS, &small_map, &full[at.stage],
                            loader.c0, loader.tap_r * s.ksize + loader.tap_s, block.j0);
                loader.load(stage, &full[at.stage]);
                at.advance();
            }
        }
        return;
    }
    registers_up<SPLIT_CONSUMER_REGISTERS>();

    const int group = threadIdx.x / 128, lane = threadIdx.x % 32;
    uint4 *a_small = ring + STAGES * L::STAGE_CHUNKS + group * L::GROUP_CHUNKS;
    float sum[BN / 2] = {}, small[BN / 2] = {}, big[BN / 2];
    ring_position<STAGES> at;
    for (int t = 0; t < block.steps; t++) {
        barrier_wait(&full[at.stage], at.phase);
        uint4 *stage = ring + at.stage * L::STAGE_CHUNKS;
        uint4 *a = stage + group * L::GROUP_CHUNKS;
        split_rows(a, a_small);
        named_barrier_sync(1 + group, 128); /* the warpgroup's 64 rows all split */

        const uint64_t a_desc = tile_descriptor(a), small_a_desc = tile_descriptor(a_small);
        const uint64_t b_desc = tile_descriptor(stage + L::A_CHUNKS);
        const uint64_t small_b_desc = tile_descriptor(stage + L::A_CHUNKS + L::B_CHUNKS);
        zero(big);
        pin_accumulators(big);
        pin_accumulators(small);
        wgmma_fence();
        /* [page: three-products] */
#pragma unroll
        for (int k = 0; k < WG_CHUNKS * CHUNK_BYTES / WG_KSTEP_BYTES; k++) {
            const int bytes = k * WG_KSTEP_BYTES;
            op::run(big, descriptor_plus(a_desc, bytes), descriptor_plus(b_desc, bytes));
            op::run(small, descriptor_plus(small_a_desc, bytes), descriptor_plus(b_desc, bytes));
            op::run(small, descriptor_plus(a_desc, bytes), descriptor_plus(small_b_desc, bytes));
        }
        /* [/page: three-products] */
        wgmma_commit();
        wgmma_wait<0>();
        pin_accumulators(big);
        pin_accumulators(small);
        /* The stage (and this warp's rows of a_small) read: give it back. */
        if (lane == 0)
            barrier_arrive(&empty[at.stage]);
#pragma unroll
        for (int i = 0; i < BN / 2; i++)
            sum[i] += big[i];
        at.advance();
    }
#pragma unroll
    for (int i = 0; i < BN / 2; i++)
        sum[i] += small[i];

    store_tile<BN>(sum, output, bias, s.cout, block.j0, group,
                   [&](int row) { return block.pixel_of(row, s, tiling); });
}

/* A block per 128 pixels and BN output channels. */
template <int BN>
static void launch_split(const struct conv_args *a, const uint32_t *big, const uint32_t *small)
{
    typedef split_layout<BN> L;
    const struct conv_shape *s = &a->shape;
    const struct pixel_tiling tiling = pixel_tiling_of(s);
    CUtensorMap input_map, big_map, small_map;
    encode_input_map<float>(a, 1u << tiling.width_log2, (cuuint32_t)WG_BM >> tiling.width_log2,
                            &input_map);
    encode_weight_map<float, BN>(a, big, &big_map);
    encode_weight_map<float, BN>(a, small, &small_map);
    auto kernel = conv2d_wgmma_3xtf32<BN>;
    CUDA_CHECK(
        cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, L::SMEM_BYTES));
    const int pixel_tiles = s->n * tiling.tiles_y * tiling.tiles_x;
    for (int first = 0; first < pixel_tiles; first += MAX_GRID_YZ) {
        const dim3 grid(ceil_div(s->cout, BN), min(pixel_tiles - first, MAX_GRID_YZ));
        kernel<<<grid, SPLIT_THREADS, L::SMEM_BYTES, a->stream>>>(
            input_map, big_map, small_map, a->bias, static_cast<float *>(a->output), *s, tiling,
            first);
        CUDA_CHECK_LAUNCH();
    }
}

extern "C" size_t wgmma_3xtf32_scratch_bytes(const struct conv_shape *s)
{
    return 2 * (size_t)s->cout * s->cin * s->ksize * s->ksize * sizeof(float);
}

extern "C" void launch_conv2d_wgmma_3xtf32(const struct conv_args *a)
{
    const struct conv_shape *s = &a->shape;
    if (!chunks_are_vectors(s, sizeof(float), a->input, a->weights)) {
        launch_conv2d_3xtf32(a);
        return;
    }
    const size_t count = (size_t)s->cout * s->cin * s->ksize * s->ksize;
    uint32_t *big = static_cast<uint32_t *>(a->scratch), *small = big + count;
    const size_t blocks = (count + SPLIT_WEIGHTS_THREADS - 1) / SPLIT_WEIGHTS_THREADS;
    split_weights<<<(unsigned)(blocks < SPLIT_WEIGHTS_BLOCKS ? blocks : SPLIT_WEIGHTS_BLOCKS),
                    SPLIT_WEIGHTS_THREADS, 0, a->stream>>>(static_cast<const float *>(a->weights),
                                                           big, small, count);
    CUDA_CHECK_LAUNCH();

    if (s->cout > NARROW_COUT)
        launch_split<128>(a, big, small);
    else
        launch_split<64>(a, big, small);
}
