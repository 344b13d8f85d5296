/* Lesson 08, step 13, variant "wgmma_fp16_halo": a layer of at most 64 input channels
 * (one 128-byte row of fp16 or bf16 per pixel) reads each input row once per tile.
 * Steps 6-11 load A tap by tap: for a 3x3 filter nine 16 KB boxes per 128-pixel tile,
 * each the same input rows moved by one pixel, so the input crosses from L2 into shared
 * memory nine times (Nsight Compute on step 11 at unet-64x64: L2 63 % busy, the tensor
 * cores 39 %). Here:
 *   - a tile is 64 x 2 pixels; a stage holds its input with the halo, (64 + S - 1) x
 *     (2 + R - 1) pixels of 128 bytes (66 x 4, 33 KB at 3x3), in one TMA box (the zero
 *     padding arrives as the TMA's zeros); the A operand of tap (r, s) for the tile's
 *     pixel row h is the 64 halo pixels from (s, h + r) on: the descriptor's start
 *     address moves, the bytes do not. A wgmma reads a 64-row A as 8-row groups one
 *     swizzle atom (1024 bytes) apart, rows of 128 bytes in between: 64 consecutive
 *     pixels of one row of the stage are such a matrix, wherever it starts;
 *   - the weights of the block's 64 output channels, R*S x 64 rows of 128 bytes (72 KB
 *     at 3x3), are loaded once per block and kept: a block walks the tiles of one
 *     channel tile only;
 *   - the output leaves through shared memory (stage_rows, tma_conv.cuh): a warpgroup
 *     writes its tile's accumulators, with the bias, into a 16 KB buffer in the TMA's
 *     swizzle, and one of its threads stores the buffer as one TMA box (the TMA leaves
 *     out what lies beyond the tensor). Stored from the fragments, 4 bytes at a time as
 *     in step 10, the stores cost more than the multiplies (unet-64x64 on the H200:
 *     0.20 ms so, 0.10 with no stores at all);
 *   - the rest is step 10: persistent blocks, a producer warp, two consumer warpgroups
 *     taking whole 128 x 64 tiles in turn.
 * At 3x3 the input crosses into shared memory 66 x 4 / 128 = 2.06 times instead of 9,
 * the weights once per block. 1x1 and 3x3 filters (5x5 weights, 200 KB, leave no room
 * for stages); elsewhere (more channels, images narrower than 33 pixels, where a tile
 * would be mostly padding) step 11.
 *
 *   build/bin/08_tensor_cores --preset unet-64x64 --variant wgmma_fp16_halo
 */
#include <limits.h>

#include "kernels.h"
#include "tma_conv.cuh"
#include "wgmma_steps.h"

#define HALO_BN 64 /* output channels per tile: wgmma.m64n64 */
#define HALO_BW 64 /* pixels per tile row: one consumer warpgroup's 64 rows of A */
#define HALO_BH 2
#define HALO_CONSUMERS 2
#define HALO_THREADS (128 * (HALO_CONSUMERS + 1))
#define HALO_WARPS_PER_CONSUMER 4
#define HALO_PRODUCER_REGISTERS 40
#define HALO_CONSUMER_REGISTERS 232
#define HALO_TAP_BYTES (HALO_BN * TMA_ROW_BYTES)           /* one tap's weights: 64 rows, 8 KB */
#define HALO_OUT_BYTES (HALO_BW * HALO_BH * TMA_ROW_BYTES) /* a tile's output: 16 KB */

/* A block's shared memory for a KSIZE x KSIZE filter: the weights, STAGES stages of
 * input with halo, each a whole number of swizzle atoms, and an output buffer per
 * consumer warpgroup. 3x3: 72 KB + 3 x 33 KB + 2 x 16 KB. */
template <int KSIZE> struct halo_layout {
    static constexpr int HALO_W = HALO_BW + KSIZE - 1, HALO_H = HALO_BH + KSIZE - 1;
    static constexpr int BOX_BYTES = HALO_W * HALO_H * TMA_ROW_BYTES;
    static constexpr int STAGE_BYTES =
        (BOX_BYTES + WG_SWIZZLE_ATOM - 1) / WG_SWIZZLE_ATOM * WG_SWIZZLE_ATOM;
    static constexpr int WEIGHT_BYTES = KSIZE * KSIZE * HALO_TAP_BYTES;
    static constexpr int STAGES = 3;
    static constexpr int SMEM_BYTES =
        WEIGHT_BYTES + STAGES * STAGE_BYTES + HALO_CONSUMERS * HALO_OUT_BYTES + WG_SWIZZLE_ATOM;
    static_assert(SMEM_BYTES <= TMA_SMEM_LIMIT, "weights and stages fit one block");
};

/* A descriptor whose start address is `units` 16-byte units further: only the low word
 * changes (shared memory addresses stay below 256 KB: no carry), so the wgmmas of a tile
 * share the high word and each needs one add. */
static __device__ __forceinline__ uint64_t start_plus(uint32_t low, uint32_t high, int units)
{
    return (uint64_t)high << 32 | (low + (uint32_t)units);
}

/* One tile of a consumer warpgroup: for every tap, the 4 wgmmas (64 values of k) of each
 * of the tile's two pixel rows, committed as one group. KSIZE is a constant: wgmmas in a
 * loop that runs a number of times known only at run time make ptxas fence them one by
 * one. */
template <typename Op, int KSIZE>
static __device__ __forceinline__ void multiply_halo_tile(float (&acc)[HALO_BH][HALO_BN / 2],
                                                          const uint4 *stage, const uint4 *weights)
{
    typedef halo_layout<KSIZE> L;
    constexpr int ROW = TMA_ROW_BYTES / DESC_UNIT_BYTES, KSTEP = WG_KSTEP_BYTES / DESC_UNIT_BYTES;
    const uint64_t a_desc = tile_descriptor(stage), b_desc = tile_descriptor(weights);
    const uint32_t a_low = (uint32_t)a_desc, b_low = (uint32_t)b_desc;
    const uint32_t high = (uint32_t)(a_desc >> 32); /* the same for both */
    pin_accumulators(acc[0]);
    pin_accumulators(acc[1]);
    wgmma_fence();
#pragma unroll
    for (int r = 0; r < KSIZE; r++)
#pragma unroll
        for (int s = 0; s < KSIZE; s++)
#pragma unroll
            for (int h = 0; h < HALO_BH; h++)
#pragma unroll
                for (int k = 0; k < TMA_ROW_BYTES / WG_KSTEP_BYTES; k++) {
                    /* [page: halo-a] */
                    /* Tap (r, s), tile row h: stage pixels (s.., h + r), k * 32 bytes in;
                     * offsets in the descriptor's 16-byte units. */
                    const int a = ((h + r) * L::HALO_W + s) * ROW + k * KSTEP;
                    const int b = (r * KSIZE + s) * HALO_BN * ROW + k * KSTEP;
                    wgmma_op<Op, HALO_BN>::run(acc[h], start_plus(a_low, high, a),
                                               start_plus(b_low, high, b));
                    /* [/page: halo-a] */
                }
    wgmma_commit();
}

/* Tile `tile`: image n, pixels x0.. x0 + 63 of rows y0 and y0 + 1. */
struct halo_tile {
    int n, x0, y0;

    __device__ halo_tile(int tiles_x, int tiles_y, int tile)
        : n(tile / tiles_x / tiles_y), x0(tile % tiles_x * HALO_BW),
          y0(tile / tiles_x % tiles_y * HALO_BH)
    {
    }
};

template <typename Op, int KSIZE>
__global__ void __launch_bounds__(HALO_THREADS, 1)
    conv2d_wgmma_halo(const __grid_constant__ CUtensorMap input_map,
                      const __grid_constant__ CUtensorMap weight_map,
                      const __grid_constant__ CUtensorMap output_map,
                      const float *__restrict__ bias, struct conv_shape s, int tiles_x, int tiles_y,
                      int channel_tiles, int pixel_tiles)
{
    typedef halo_layout<KSIZE> L;
    constexpr int STAGES = L::STAGES;
    extern __shared__ uint4 smem[];
    __shared__ uint64_t full[STAGES], empty[STAGES], weights_full;
    __shared__ uint64_t turn[HALO_CONSUMERS]; /* as step 10's: the warpgroups take turns */
    uint4 *weights = swizzle_aligned(smem);
    uint4 *ring = weights + L::WEIGHT_BYTES / CHUNK_BYTES;
    uint4 *out_buffers = ring + L::STAGES * (L::STAGE_BYTES / CHUNK_BYTES);

    if (threadIdx.x == 0) {
        for (int i = 0; i < STAGES; i++) {
            barrier_init(&full[i], 1);
            barrier_init(&empty[i], HALO_WARPS_PER_CONSUMER);
        }
        barrier_init(&weights_full, 1);
        for (int g = 0; g < HALO_CONSUMERS; g++)
            barrier_init(&turn[g], HALO_WARPS_PER_CONSUMER);
        barrier_init_fence();
    }
    __syncthreads();

    /* The block's output channels, and its share of the pixel tiles. */
    const int j0 = blockIdx.x % channel_tiles * HALO_BN;
    const int first = blockIdx.x / channel_tiles, step = gridDim.x / channel_tiles;
    const int warpgroup = threadIdx.x / 128;
    if (warpgroup == HALO_CONSUMERS) {
        registers_down<HALO_PRODUCER_REGISTERS>();
        if (threadIdx.x == HALO_CONSUMERS * 128) {
            barrier_expect_bytes(&weights_full, L::WEIGHT_BYTES);
            for (int t = 0; t < KSIZE * KSIZE; t++)
                tma_load_3d(weights + t * (HALO_TAP_BYTES / CHUNK_BYTES), &weight_map,
                            &weights_full, 0, t, j0);
            ring_position<STAGES> at;
            int k = 0;
            for (int tile = first; tile < pixel_tiles; tile += step, k++) {
                if (k >= STAGES)
                    barrier_wait(&empty[at.stage], at.phase ^ 1);
                const halo_tile p(tiles_x, tiles_y, tile);
                barrier_expect_bytes(&full[at.stage], L::BOX_BYTES);
                tma_load_4d(ring + at.stage * (L::STAGE_BYTES / CHUNK_BYTES), &input_map,
                            &full[at.stage], 0, p.x0 - KSIZE / 2, p.y0 - KSIZE / 2, p.n);
                at.advance();
            }
        }
        return;
    }
    registers_up<HALO_CONSUMER_REGISTERS>();

    const int lane = threadIdx.x % 32;
    uint4 *out_buffer = out_buffers + warpgroup * (HALO_OUT_BYTES / CHUNK_BYTES);
    float bias_of[HALO_BN / 4]; /* this thread's 16 channels' bias: the block's are fixed */
#pragma unroll
    for (int j = 0; j < HALO_BN / 8; j++)
#pragma unroll
        for (int e = 0; e < 2; e++) {
            const int ch = j0 + 8 * j + lane % 4 * 2 + e;
            bias_of[2 * j + e] = bias && ch < s.cout ? bias[ch] : 0.0f;
        }
    barrier_wait(&weights_full, 0);
    ring_position<STAGES> at;
    at.skip(warpgroup); /* warpgroup g takes the block's tiles g, g + 2, ... */
    int mine = 0;
    for (int tile = first + warpgroup * step; tile < pixel_tiles;
         tile += HALO_CONSUMERS * step, mine++) {
        const halo_tile p(tiles_x, tiles_y, tile);
        float acc[HALO_BH][HALO_BN / 2] = {};
        /* Turn j of warpgroup g is phase j - 1 + g (step 10): the multiplies of one
         * warpgroup's tile are issued after the other's, its stores overlap them. */
        const int turn_phase = mine - 1 + warpgroup;
        if (turn_phase >= 0)
            barrier_wait(&turn[warpgroup], turn_phase & 1);
        barrier_wait(&full[at.stage], at.phase);
        multiply_halo_tile<Op, KSIZE>(acc, ring + at.stage * (L::STAGE_BYTES / CHUNK_BYTES),
                                      weights);
        if (lane == 0)
            barrier_arrive(&turn[HALO_CONSUMERS - 1 - warpgroup]);
        wgmma_wait<0>();
        pin_accumulators(acc[0]);
        pin_accumulators(acc[1]);
        if (lane == 0)
            barrier_arrive(&empty[at.stage]);
        at.skip(HALO_CONSUMERS);
        /* The tile's two rows into the warpgroup's buffer, stored as one box. */
        buffer_free<1>();
#pragma unroll
        for (int h = 0; h < HALO_BH; h++)
            stage_rows<HALO_BN, typename Op::out>(
                acc[h], [&](int j, int e) { return bias_of[2 * j + e]; },
                out_buffer + h * (HALO_OUT_BYTES / HALO_BH / CHUNK_BYTES));
        if (buffer_written()) {
            tma_store_4d(&output_map, out_buffer, j0, p.x0, p.y0, p.n);
            bulk_commit();
        }
    }
    if (threadIdx.x % 128 == 0)
        bulk_wait(); /* the last stores done before the block's shared memory goes */
}

/* Where step 13 takes layer s (of fp16 or bf16): a 1x1 or 3x3 filter, a pixel's input
 * channels one 128-byte row at most and its input and output channels whole 16-byte
 * chunks (the TMA), images at least 33 pixels wide (a tile row half padding at most),
 * tile indices within an int. */
template <typename E> static bool halo_takes(const struct conv_args *a)
{
    const struct conv_shape *s = &a->shape;
    return (s->ksize == 1 || s->ksize == 3) &&
           chunks_are_vectors(s, sizeof(E), a->input, a->weights) && output_is_tma_storable<E>(a) &&
           s->cin * (int)sizeof(E) <= TMA_ROW_BYTES && s->w > HALO_BW / 2 &&
           (long long)s->n * ceil_div(s->h, HALO_BH) * ceil_div(s->w, HALO_BW) <= INT_MAX;
}

/* One block per SM (of those a->sms leaves it), each walking the pixel tiles of one
 * channel tile. */
template <typename Op, int KSIZE> static void launch_halo(const struct conv_args *a)
{
    typedef typename Op::elem E;
    typedef halo_layout<KSIZE> L;
    const struct conv_shape *s = &a->shape;
    const int tiles_x = ceil_div(s->w, HALO_BW), tiles_y = ceil_div(s->h, HALO_BH);
    const int pixel_tiles = s->n * tiles_y * tiles_x;
    CUtensorMap input_map, weight_map, output_map;
    encode_input_map<E>(a, L::HALO_W, L::HALO_H, &input_map);
    encode_weight_map<E, HALO_BN>(a, a->weights, &weight_map);
    encode_output_map<E>(a, HALO_BW, HALO_BH, &output_map);
    auto kernel = conv2d_wgmma_halo<Op, KSIZE>;
    CUDA_CHECK(
        cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, L::SMEM_BYTES));
    const int channel_tiles = ceil_div(s->cout, HALO_BN);
    const int per_channel_tile = min(max(1, persistent_sms(a) / channel_tiles), pixel_tiles);
    kernel<<<channel_tiles * per_channel_tile, HALO_THREADS, L::SMEM_BYTES, a->stream>>>(
        input_map, weight_map, output_map, a->bias, *s, tiles_x, tiles_y, channel_tiles,
        pixel_tiles);
    CUDA_CHECK_LAUNCH();
}

/* Step 13 where it takes the layer (true), else nothing (false). Not on TF32: 64
 * channels of fp32 output are two 128-byte rows a pixel, and 32 input channels a
 * layer's first rarely. */
template <typename Op> bool launch_halo_tile(const struct conv_args *a)
{
    if constexpr (sizeof(typename Op::elem) == 2) {
        if (halo_takes<typename Op::elem>(a)) {
            if (a->shape.ksize == 1)
                launch_halo<Op, 1>(a);
            else
                launch_halo<Op, 3>(a);
            return true;
        }
    }
    return false;
}

template bool launch_halo_tile<mma_fp16>(const struct conv_args *a);
template bool launch_halo_tile<mma_bf16>(const struct conv_args *a);
template bool launch_halo_tile<mma_tf32>(const struct conv_args *a);

/* The step's variant: step 11 where step 13 does not take the layer. */
extern "C" void launch_conv2d_wgmma_fp16_halo(const struct conv_args *a)
{
    if (!launch_halo_tile<mma_fp16>(a))
        launch_narrow_tile<mma_fp16>(a);
}
