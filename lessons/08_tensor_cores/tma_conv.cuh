/* What lesson 08's TMA steps (06_tma.cu to 17_multicast.cu) share:
 * the layer's tensors as TMA tensor maps, the block's tile of pixels and channels, and
 * the walk along k that loads it, one tap and 128 bytes of channels per step.
 *
 *   - A block computes 128 pixels x BN output channels. The 128 pixels are a BW x BH
 *     rectangle of one image (BW the power of two >= W, at most 128; BH = 128 / BW),
 *     so that a tile of A is one box of the NHWC input: 128 bytes of channels of that
 *     rectangle, moved by the tap (r - R/2, s - S/2).
 *   - k runs tap by tap, 128 bytes of channels at a time (64 fp16 or bf16, 32 fp32): a
 *     step is a row of 128 bytes per pixel (A) and per output channel (B). Taps that
 *     move the rectangle wholly off the image would multiply only zeros: the walk skips
 *     them.
 *   - The TMA writes zeros for what lies outside a tensor, negative coordinates
 *     included: that is the convolution's zero padding, and the zeros past the last
 *     channel, pixel and output channel.
 *   - Its boxes land in the 128-byte swizzle wgmma reads, in stages aligned to 1024
 *     bytes, the swizzle's period.
 * The TMA needs rows of channels that are a multiple of 16 bytes and 16-byte aligned
 * tensors (chunks_are_vectors); elsewhere the steps run step 5's cp.async kernel. For
 * the kernels (.cu) only. */
#ifndef TMA_CONV_CUH
#define TMA_CONV_CUH

#include "grid_chunks.cuh"
#include "tma_pipeline.cuh"
#include "wgmma_ops.cuh"

#define TMA_ROW_BYTES 128 /* of channels per step: one swizzled tile row */
#define TMA_WIDE_COUT 256 /* layers with this many output channels or more: BN = 256 */
#define NARROW_COUT 64    /* steps 11, 14, 15: at most this many output channels, BN = 64 */
#define TMA_SMEM_LIMIT (227 * 1024) /* dynamic shared memory of a block on an H100 or H200 */

/* A block's tile, 128 pixels x BN output channels of element type Elem, in a ring of
 * stages: a stage holds A (128 rows of 128 bytes, 16 KB), then B (BN rows: 8, 16 or 32
 * KB). The wgmmas read 2 stages (the one issued now, the one still in flight), the loads
 * run ahead in the others, and an SM has 228 KB of shared memory for its BLOCKS blocks.
 *   BN = 64 (step 11, at most 64 output channels): 8 stages of 24 KB (193 KB).
 *   BN = 128: 6 stages of 32 KB (193 KB with the alignment slack) keep at least 4 steps
 *     of loads in flight; 7 would fit too (225 KB), 8 would not.
 *   BN = 256: 4 stages of 48 KB (193 KB); 5 would need 241 KB. That leaves 2 steps of
 *     loads in flight, but a step is twice the tensor work of a 128-wide one: the loads
 *     run as far ahead in time as 4 narrow steps do.
 *   Two blocks per SM (step 9), BN = 128: 3 stages of 32 KB each (97 KB). */
template <typename Elem, int BN, int BLOCKS = 1> struct tma_tile {
    static_assert(BN == 64 || BN == 128 || BN == 256, "wgmma.m64n64, m64n128 or m64n256");
    static_assert(BLOCKS == 1 || (BLOCKS == 2 && BN == 128), "two blocks of 128 x 128");
    static constexpr int ACCUMULATORS = BN / 2; /* 64 x BN fp32 over 128 threads */
    static constexpr int STAGES = BLOCKS == 2 ? 3 : BN == 64 ? 8 : BN == 128 ? 6 : 4;
    static constexpr int BOX_CHANNELS = TMA_ROW_BYTES / sizeof(Elem);
    static constexpr int CHUNKS = (WG_BM + BN) * WG_CHUNKS; /* 16-byte chunks of a stage */
    static constexpr int STAGE_BYTES = CHUNKS * CHUNK_BYTES;
    static constexpr int SMEM_BYTES = STAGES * STAGE_BYTES + WG_SWIZZLE_ATOM;
    /* A stage's A rows for consumer warpgroup `group` (64 of them), and its B rows. */
    static __device__ __forceinline__ const uint4 *a_rows(const uint4 *ring, int stage, int group)
    {
        return ring + stage * CHUNKS + group * WG_ROWS_PER_GROUP * WG_CHUNKS;
    }
    static __device__ __forceinline__ const uint4 *b_rows(const uint4 *ring, int stage)
    {
        return ring + stage * CHUNKS + WG_BM * WG_CHUNKS;
    }
    /* Per block, the driver keeps 1 KB of the SM's 228 KB; the barriers are static. */
    static_assert(BLOCKS * (SMEM_BYTES + 1024 + 2 * STAGES * 8) <= 228 * 1024,
                  "the rings fit one SM");
};

/* Where a block's 128 pixels lie: rectangles of 2^width_log2 x 128 / 2^width_log2
 * pixels, tiles_x across an image and tiles_y down it. */
struct pixel_tiling {
    int width_log2, tiles_x, tiles_y;
};

/* BW = the power of two >= w, at most 128: narrow images waste no columns beyond the
 * power of two, wide ones get rows of 128 pixels. */
static inline struct pixel_tiling pixel_tiling_of(const struct conv_shape *s)
{
    struct pixel_tiling t;
    t.width_log2 = 0;
    while ((1 << t.width_log2) < s->w && (1 << t.width_log2) < WG_BM)
        t.width_log2++;
    t.tiles_x = ceil_div(s->w, 1 << t.width_log2);
    t.tiles_y = ceil_div(s->h, WG_BM >> t.width_log2);
    return t;
}

/* The taps t = 0..ksize-1 along one axis whose moved window of the block's pixels,
 * first + t - radius .. first + t - radius + extent - 1, overlaps 0..size-1: lo..hi. The
 * others would load only the TMA's zeros and multiply them, so no step is spent on
 * them. The centre tap, the block's own pixels, always overlaps. */
static __device__ __forceinline__ void taps_overlapping(int first, int extent, int size, int ksize,
                                                        int *lo, int *hi)
{
    const int radius = ksize / 2;
    *lo = max(0, radius - first - extent + 1);
    *hi = min(ksize - 1, radius + size - 1 - first);
}

/* Block (x, y)'s tile: output channels BN x.., pixel rectangle first_tile + y (the launch
 * walks the rectangles in chunks of MAX_GRID_YZ), and its steps along k: taps r_lo..r_hi
 * x s_lo..s_hi, BOX_CHANNELS channels at a time. */
template <typename Elem, int BN> struct tma_block {
    static constexpr int BOX_CHANNELS = tma_tile<Elem, BN>::BOX_CHANNELS;
    int n, x0, y0, j0;
    int r_lo, r_hi, s_lo, s_hi;
    int steps;

    __device__ tma_block(const struct conv_shape &s, const struct pixel_tiling &tiling,
                         int first_tile)
        : tma_block(s, tiling, first_tile + blockIdx.y, blockIdx.x * BN)
    {
    }

    /* Rectangle `tile` and output channels first_out.. (step 10's blocks walk tiles). */
    __device__ tma_block(const struct conv_shape &s, const struct pixel_tiling &tiling, int tile,
                         int first_out)
    {
        n = tile / tiling.tiles_x / tiling.tiles_y;
        x0 = tile % tiling.tiles_x << tiling.width_log2;
        y0 = tile / tiling.tiles_x % tiling.tiles_y * (WG_BM >> tiling.width_log2);
        j0 = first_out;
        taps_overlapping(y0, WG_BM >> tiling.width_log2, s.h, s.ksize, &r_lo, &r_hi);
        taps_overlapping(x0, 1 << tiling.width_log2, s.w, s.ksize, &s_lo, &s_hi);
        steps = (r_hi - r_lo + 1) * (s_hi - s_lo + 1) * ceil_div(s.cin, BOX_CHANNELS);
    }

    /* Every tap, none skipped: the blocks of a cluster (step 17) share each step's
     * weights, so they walk the same steps whatever their rectangles. */
    __device__ __forceinline__ void every_tap(const struct conv_shape &s)
    {
        r_lo = s_lo = 0;
        r_hi = s_hi = s.ksize - 1;
        steps = s.ksize * s.ksize * ceil_div(s.cin, BOX_CHANNELS);
    }

    /* The output pixel (n*H + y)*W + x of tile row `row`, or -1 where the tile has none. */
    __device__ __forceinline__ int pixel_of(int row, const struct conv_shape &s,
                                            const struct pixel_tiling &tiling) const
    {
        const int y = y0 + (row >> tiling.width_log2);
        const int x = x0 + (row & ((1 << tiling.width_log2) - 1));
        return y < s.h && x < s.w ? (n * s.h + y) * s.w + x : -1;
    }
};

/* The one thread that loads a block's steps, in order: tap (r, s) by tap, BOX_CHANNELS
 * channels at a time. load() issues the current step's two TMA loads into a stage and
 * goes on to the next step. In a cluster of CLUSTER blocks that share the tile's output
 * channels (step 17), each block loads 1 / CLUSTER of B, its rank's rows, into all of
 * them (the weight map's box is BN / CLUSTER rows). */
template <typename Elem, int BN, int CLUSTER = 1> struct tma_loader {
    typedef tma_tile<Elem, BN> tile_t;
    static constexpr int B_ROWS = BN / CLUSTER; /* the rows of B this block loads */
    const CUtensorMap *input_map, *weight_map;
    const tma_block<Elem, BN> &block;
    int ksize, cin, tap_r, tap_s, c0, rank;

    __device__ tma_loader(const CUtensorMap *input, const CUtensorMap *weights,
                          const tma_block<Elem, BN> &b, const struct conv_shape &s)
        : input_map(input), weight_map(weights), block(b), ksize(s.ksize), cin(s.cin),
          tap_r(b.r_lo), tap_s(b.s_lo), c0(0), rank(CLUSTER > 1 ? cluster_rank() : 0)
    {
        tma_prefetch(input_map);
        tma_prefetch(weight_map);
    }

    /* B: channels c0.. of tap `tap` for output channels j0.. into b; in a cluster, this
     * block's rows into every block's stage, each one's `full` counting them. */
    __device__ __forceinline__ void load_weights(uint4 *b, uint64_t *full, int tap)
    {
        /* [page: multicast-load] */
        if (CLUSTER == 1)
            tma_load_3d(b, weight_map, full, c0, tap, block.j0);
        else
            tma_load_3d_multicast(b + rank * B_ROWS * WG_CHUNKS, weight_map, full, c0, tap,
                                  block.j0 + rank * B_ROWS, (1 << CLUSTER) - 1);
        /* [/page: multicast-load] */
    }

    /* A: channels c0.. of the rectangle moved by the tap. B: the same channels of tap
     * (r, s) for output channels j0... `full` completes when both have landed: the
     * full boxes count, zeros included (a cluster's other blocks' rows too). */
    __device__ __forceinline__ void load(uint4 *stage, uint64_t *full)
    {
        /* [page: tma-load] */
        const int radius = ksize / 2;
        barrier_expect_bytes(full, tile_t::STAGE_BYTES);
        tma_load_4d(stage, input_map, full, c0, block.x0 + tap_s - radius,
                    block.y0 + tap_r - radius, block.n);
        load_weights(stage + WG_BM * WG_CHUNKS, full, tap_r * ksize + tap_s);
        if ((c0 += tile_t::BOX_CHANNELS) >= cin) {
            c0 = 0;
            if (++tap_s > block.s_hi) {
                tap_s = block.s_lo;
                tap_r++;
            }
        }
        /* [/page: tma-load] */
    }
};

/* Which tile a persistent block takes at item `item` of its walk: pixel rectangle
 * (item / channel_tiles) x CLUSTER + the block's rank, output channels item %
 * channel_tiles x BN. The CLUSTER blocks of a cluster (step 17) take the same items, so
 * neighbouring rectangles with the same channels; a rank whose rectangle lies past the
 * last image loads the TMA's zeros and stores nothing. Every tap where CLUSTER > 1. */
template <typename E, int BN, int CLUSTER>
static __device__ __forceinline__ tma_block<E, BN>
walk_tile(const struct conv_shape &s, const struct pixel_tiling &tiling, int channel_tiles,
          int item)
{
    const int rank = CLUSTER > 1 ? (int)cluster_rank() : 0;
    tma_block<E, BN> block(s, tiling, item / channel_tiles * CLUSTER + rank,
                           item % channel_tiles * BN);
    if (CLUSTER > 1)
        block.every_tap(s);
    return block;
}

/* The producer of steps 10, 16 and 17's persistent blocks: every step of every tile of
 * the block (items blockIdx.x / CLUSTER, + gridDim.x / CLUSTER, ...: walk_tile), in
 * order, without a pause between tiles; step t of the walk waits, from the second round
 * of the ring on, for the stage's release (by the consumers of every block it loads
 * into). */
template <typename E, int BN, int STAGES, int CLUSTER = 1>
static __device__ __forceinline__ void
load_tiles(const CUtensorMap *input_map, const CUtensorMap *weight_map, uint4 *ring, uint64_t *full,
           uint64_t *empty, const struct conv_shape &s, const struct pixel_tiling &tiling,
           int channel_tiles, int items)
{
    ring_position<STAGES> at;
    int t = 0;
    for (int item = blockIdx.x / CLUSTER; item < items; item += gridDim.x / CLUSTER) {
        const tma_block<E, BN> block = walk_tile<E, BN, CLUSTER>(s, tiling, channel_tiles, item);
        tma_loader<E, BN, CLUSTER> loader(input_map, weight_map, block, s);
        for (int i = 0; i < block.steps; i++, t++) {
            if (t >= STAGES)
                barrier_wait(&empty[at.stage], at.phase ^ 1);
            loader.load(ring + at.stage * tma_tile<E, BN>::CHUNKS, &full[at.stage]);
            at.advance();
        }
    }
}

/* Steps 7, 16 and 17's consumers: a tile's `steps` steps from the ring, warpgroup `group`
 * multiplying its 64 rows into acc, `at` the walk's position. Step t's bytes are round t /
 * STAGES of full[at.stage] (the producer cannot be a round ahead: it waits for this
 * stage's release, which comes after this). Step t's wgmmas keep running; those of step
 * t - 1 have then completed, so each warp gives that stage back (one arrival per warp: a
 * warp's wait covers its own wgmmas). At the end all are waited for; the last stage is
 * given back only with RELEASE_LAST (a persistent block's producer goes on to the next
 * tile; a block of one tile loads nothing more). In a cluster of CLUSTER blocks the stage
 * goes back to every block's producer: each loaded into it. A tile has a step at least:
 * its centre tap. */
template <typename Op, int BN, typename Tile, bool RELEASE_LAST, int CLUSTER = 1, int STAGES>
static __device__ __forceinline__ void
multiply_tile(float (&acc)[BN / 2], const uint4 *ring, uint64_t *full, uint64_t *empty,
              ring_position<STAGES> &at, int steps, int group)
{
    const int lane = threadIdx.x % 32;
    int previous = 0;
    for (int t = 0; t < steps; t++) {
        barrier_wait(&full[at.stage], at.phase);
        multiply_step<Op, BN>(acc, Tile::a_rows(ring, at.stage, group),
                              Tile::b_rows(ring, at.stage));
        wgmma_wait<WG_IN_FLIGHT>();
        pin_accumulators(acc);
        give_back_previous<STAGES, CLUSTER>(empty, at, previous, t > 0);
    }
    wgmma_wait<0>();
    pin_accumulators(acc);
    if (RELEASE_LAST && lane == 0)
        barrier_arrive_all<CLUSTER>(&empty[previous]);
}

static inline CUtensorMapDataType tensor_map_type(const __half *)
{
    return CU_TENSOR_MAP_DATA_TYPE_FLOAT16;
}

static inline CUtensorMapDataType tensor_map_type(const __nv_bfloat16 *)
{
    return CU_TENSOR_MAP_DATA_TYPE_BFLOAT16;
}

static inline CUtensorMapDataType tensor_map_type(const float *)
{
    return CU_TENSOR_MAP_DATA_TYPE_FLOAT32;
}

/* The layer's tensor maps. Encoded at every launch: the maps hold the tensors'
 * addresses, and the harness rotates its buffers between runs. A few microseconds of
 * host work each.
 * An NHWC tensor of `channels` channels as C x W x H x N (innermost first), box 128
 * bytes of channels x box_w x box_h x 1: the input (a block's BW x BH pixels; step
 * 13's with their halo), and the output that steps 13 and 14 store. */
template <typename Elem>
static void encode_pixels_map(const void *tensor, int channels, const struct conv_shape *s,
                              cuuint32_t box_w, cuuint32_t box_h, const char *what,
                              CUtensorMap *map)
{
    const cuuint64_t row = (cuuint64_t)channels * sizeof(Elem); /* bytes of a pixel */
    const cuuint64_t dims[4] = {(cuuint64_t)channels, (cuuint64_t)s->w, (cuuint64_t)s->h,
                                (cuuint64_t)s->n};
    const cuuint64_t strides[3] = {row, row * s->w, row * s->w * s->h};
    const cuuint32_t box[4] = {TMA_ROW_BYTES / sizeof(Elem), box_w, box_h, 1};
    encode_tensor_map(map, tensor_map_type(static_cast<const Elem *>(tensor)), 4, tensor, dims,
                      strides, box, what);
}

template <typename Elem>
static void encode_input_map(const struct conv_args *a, cuuint32_t box_w, cuuint32_t box_h,
                             CUtensorMap *map)
{
    encode_pixels_map<Elem>(a->input, a->shape.cin, &a->shape, box_w, box_h, "input", map);
}

template <typename Out>
static void encode_output_map(const struct conv_args *a, cuuint32_t box_w, cuuint32_t box_h,
                              CUtensorMap *map)
{
    encode_pixels_map<Out>(a->output, a->shape.cout, &a->shape, box_w, box_h, "output", map);
}

/* weights: KRSC weights of a's shape as C x (R*S) x K, box BOX_CHANNELS x 1 x BN (the
 * layer's, or step 15's parts of them; BN / 2 rows for step 17's clusters of two). */
template <typename Elem, int BN>
static void encode_weight_map(const struct conv_args *a, const void *weights, CUtensorMap *map)
{
    const struct conv_shape *s = &a->shape;
    const cuuint64_t taps = (cuuint64_t)s->ksize * s->ksize;
    const cuuint64_t row = (cuuint64_t)s->cin * sizeof(Elem); /* bytes of a tap's channels */
    const cuuint64_t dims[3] = {(cuuint64_t)s->cin, taps, (cuuint64_t)s->cout};
    const cuuint64_t strides[2] = {row, row * taps};
    const cuuint32_t box[3] = {TMA_ROW_BYTES / sizeof(Elem), 1, BN}; /* box sizes: 256 at most */
    encode_tensor_map(map, tensor_map_type(static_cast<const Elem *>(weights)), 3, weights, dims,
                      strides, box, "weights");
}

/* The output as steps 14, 16 and 17 store it: a box per 64 pixels of a tile (BW >= 64
 * wide, else 64 / BW rows of BW) and 128 bytes of channels. */
template <typename Out>
static void encode_group_output_map(const struct conv_args *a, const struct pixel_tiling &tiling,
                                    CUtensorMap *map)
{
    encode_output_map<Out>(a, min(1 << tiling.width_log2, WG_ROWS_PER_GROUP),
                           max(WG_ROWS_PER_GROUP >> tiling.width_log2, 1), map);
}

/* Both, for blocks of 128 pixels that load BN output channels' weights (in step 17's
 * clusters, half of their tile's). */
template <typename Elem, int BN>
static void encode_layer_maps(const struct conv_args *a, const struct pixel_tiling &tiling,
                              CUtensorMap *input_map, CUtensorMap *weight_map)
{
    encode_input_map<Elem>(a, 1u << tiling.width_log2, (cuuint32_t)WG_BM >> tiling.width_log2,
                           input_map);
    encode_weight_map<Elem, BN>(a, a->weights, weight_map);
}

/* Whether the TMA can store the output: rows of whole 16-byte chunks, aligned. */
template <typename Out> static bool output_is_tma_storable(const struct conv_args *a)
{
    return a->shape.cout * sizeof(Out) % CHUNK_BYTES == 0 &&
           (uintptr_t)a->output % CHUNK_BYTES == 0;
}

/* Steps 13, 14 and 16's epilogue, the part every thread does: a warpgroup's 64 rows of
 * a tile (BN channels of Out), with the bias, into its buffer as the TMA store reads
 * them: one 64-row block per 128 bytes of channels, each row's 16-byte chunk c at c ^
 * (row % 8), the 128-byte swizzle. The accumulators are laid out as store_tile says
 * (wgmma_ops.cuh): channels 8 j + 2 (lane % 4) + e, e = 0, 1, at rows 16 w + lane / 4
 * and 8 below; bias_of(j, e) is those channels' bias. A warp's 4-byte stores fill 8 rows
 * at 8 chunk positions: no bank conflict. FIRST and BLOCKS choose which of the tile's
 * 128-byte column blocks are staged (all by default; step 16 stages one at a time). */
template <int BN, typename Out, int FIRST = 0, int BLOCKS = BN * sizeof(Out) / TMA_ROW_BYTES,
          typename BiasOf>
static __device__ __forceinline__ void stage_rows(const float (&acc)[BN / 2], BiasOf bias_of,
                                                  uint4 *buffer)
{
    constexpr int BLOCK_CHUNKS = WG_ROWS_PER_GROUP * WG_CHUNKS; /* 64 rows of 128 bytes */
    constexpr int J_PER_BLOCK = TMA_ROW_BYTES / (int)sizeof(Out) / 8;
    const int lane = threadIdx.x % 32, warp = threadIdx.x % 128 / 32;
#pragma unroll
    for (int j = FIRST * J_PER_BLOCK; j < (FIRST + BLOCKS) * J_PER_BLOCK; j++) {
        const int byte = ((j - FIRST * J_PER_BLOCK) * 8 + lane % 4 * 2) * (int)sizeof(Out);
        const float b0 = bias_of(j, 0), b1 = bias_of(j, 1);
#pragma unroll
        for (int i = 0; i < 2; i++) {
            const int row = warp * 16 + lane / 4 + 8 * i;
            const int chunk = byte % TMA_ROW_BYTES / CHUNK_BYTES ^ row % 8;
            char *at = reinterpret_cast<char *>(buffer + byte / TMA_ROW_BYTES * BLOCK_CHUNKS +
                                                row * WG_CHUNKS + chunk);
            store_pair(reinterpret_cast<Out *>(at + byte % CHUNK_BYTES), acc[4 * j + 2 * i] + b0,
                       acc[4 * j + 2 * i + 1] + b1, true);
        }
    }
}

/* Around a warpgroup's writes to its output buffers: before, the buffer free again (the
 * store that used it has read it: with BUFFERS buffers taken in turn, all but the last
 * BUFFERS - 1 stores) and every thread told so; after, the writes made visible to the
 * TMA and every thread done. buffer_written is true in the one thread that then
 * stores. */
template <int BUFFERS> static __device__ __forceinline__ void buffer_free(void)
{
    if (threadIdx.x % 128 == 0)
        bulk_wait_read<BUFFERS - 1>();
    named_barrier_sync(1 + threadIdx.x / 128, 128); /* one named barrier per warpgroup */
}

static __device__ __forceinline__ bool buffer_written(void)
{
    fence_async_proxy();
    named_barrier_sync(1 + threadIdx.x / 128, 128);
    return threadIdx.x % 128 == 0;
}

/* Step 14's epilogue of a warpgroup's 64 rows, through one buffer: staged, then stored
 * as a box per 128 bytes of channels at pixel (x, y) of image n; what lies outside the
 * tensor the TMA does not write. */
template <int BN, typename Out>
static __device__ __forceinline__ void store_rows_tma(const float (&acc)[BN / 2], const float *bias,
                                                      int cout, int j0, uint4 *buffer,
                                                      const CUtensorMap *map, int x, int y, int n)
{
    const int lane = threadIdx.x % 32;
    buffer_free<1>();
    stage_rows<BN, Out>(
        acc,
        [&](int j, int e) {
            const int ch = j0 + j * 8 + lane % 4 * 2 + e;
            return bias && ch < cout ? bias[ch] : 0.0f;
        },
        buffer);
    if (buffer_written()) {
#pragma unroll
        for (int b = 0; b < BN * (int)sizeof(Out) / TMA_ROW_BYTES; b++)
            tma_store_4d(map, buffer + b * WG_ROWS_PER_GROUP * WG_CHUNKS,
                         j0 + b * TMA_ROW_BYTES / (int)sizeof(Out), x, y, n);
        bulk_commit();
    }
}

/* The SMs a persistent kernel's blocks fill, one each: the GPU's, or those a->sms leaves it
 * (steps 10, 13 and 16). */
static inline int persistent_sms(const struct conv_args *a)
{
    int device, sms;
    CUDA_CHECK(cudaGetDevice(&device));
    CUDA_CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device));
    return conv_sms(a, sms);
}

/* Launches a TMA kernel of `threads` threads over the layer: a block per rectangle of
 * 128 pixels and BN output channels. */
template <typename Op, int BN, int BLOCKS = 1, typename Kernel>
static void launch_tma_blocks(const struct conv_args *a, Kernel kernel, int threads)
{
    typedef tma_tile<typename Op::elem, BN, BLOCKS> tile_t;
    const struct conv_shape *s = &a->shape;
    const struct pixel_tiling tiling = pixel_tiling_of(s);
    CUtensorMap input_map, weight_map;
    encode_layer_maps<typename Op::elem, BN>(a, tiling, &input_map, &weight_map);
    CUDA_CHECK(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                    tile_t::SMEM_BYTES));
    typename Op::out *output = static_cast<typename Op::out *>(a->output);
    const int pixel_tiles = s->n * tiling.tiles_y * tiling.tiles_x;
    for (int first = 0; first < pixel_tiles; first += MAX_GRID_YZ) {
        const dim3 grid(ceil_div(s->cout, BN), min(pixel_tiles - first, MAX_GRID_YZ));
        kernel<<<grid, threads, tile_t::SMEM_BYTES, a->stream>>>(input_map, weight_map, a->bias,
                                                                 output, *s, tiling, first);
        CUDA_CHECK_LAUNCH();
    }
}

#endif
