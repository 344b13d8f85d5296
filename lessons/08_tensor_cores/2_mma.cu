/* Lesson 08, variants "mma_fp16", "mma_bf16", "mma_tf32" and "3xtf32": the implicit
 * GEMM of gemm_tiles.cuh on warp-level mma.sync, the way the libraries do it before
 * Hopper:
 *   - a block computes a 128-pixel x 128-channel tile of the output; each of its 4
 *     warps a 64 x 64 part of it, 32 mma per 32 bytes of k, 128 fp32 accumulators
 *     per thread: large warp tiles, so each fragment loaded feeds 4 or 8 mma;
 *   - fragments come from shared memory by ldmatrix (one instruction loads a warp's
 *     16x16 fragment), and the tiles there are XOR-swizzled so that it is free of
 *     bank conflicts;
 *   - tiles arrive by cp.async into a ring of STAGES tiles, so copies of the next
 *     tiles fly while the tensor cores work on this one: one barrier per tile.
 * The four variants are one kernel; what differs is the mma (mma_ops.cuh).
 *
 *   build/bin/08_tensor_cores --preset unet-256x256 --variant mma_fp16
 */
#include "cuda_check.h"
#include "gemm_tiles.cuh"
#include "grid_chunks.cuh"
#include "kernels.h"

/* A block's tiling: BM pixels x BN channels, WARPS_M x WARPS_N warps, tile rows of
 * CHUNKS chunks (k per tile: CHUNKS * 16 bytes), STAGES tiles in the ring. */
template <int BM_, int BN_, int WARPS_M_, int WARPS_N_, int CHUNKS_, int STAGES_,
          int BLOCKS_PER_SM_>
struct tiling {
    static constexpr int BM = BM_, BN = BN_, WARPS_M = WARPS_M_, WARPS_N = WARPS_N_;
    static constexpr int CHUNKS = CHUNKS_, STAGES = STAGES_, BLOCKS_PER_SM = BLOCKS_PER_SM_;
    static constexpr int THREADS = WARPS_M * WARPS_N * 32;
    static constexpr int WM = BM / WARPS_M, WN = BN / WARPS_N; /* one warp's tile */
    static constexpr int TILE_CHUNKS = (BM + BN) * CHUNKS;     /* one stage: A, then B */
    static constexpr int SMEM_BYTES = STAGES * TILE_CHUNKS * CHUNK_BYTES;
};

/* 64 x 64 warp tiles: 8 ldmatrix.x4 feed 32 mma per k-step. A 64 x 32 warp tile needs
 * 6 for 16, and shared memory (128 bytes per clock per SM) could then feed the tensor
 * cores only about two thirds of their rate. Measured on unet-256x256 and not kept:
 * 256 x 128 blocks of 8 such warps, one block per SM, 1.26x slower; the input copied
 * through L1 (cp.async.ca), 1.03x slower. */
typedef tiling<128, 128, 2, 2, 4, 4, 2> wide_tiling;
/* Layers with at most 64 output channels: the same warps stacked along the pixels, so
 * that no half of the block computes channels that do not exist. */
typedef tiling<256, 64, 4, 1, 4, 4, 2> narrow_tiling;
/* 3xTF32 holds each fragment twice (big and small parts) and three accumulators
 * (mma_ops.cuh): 32 x 32 warp tiles keep that in registers, and three mma per
 * fragment load keep shared memory ahead anyway. */
typedef tiling<64, 128, 2, 4, 4, 4, 1> split_tiling;

template <int MT, int NT> static __device__ __forceinline__ void zero(float (&x)[MT][NT][4])
{
#pragma unroll
    for (int i = 0; i < MT; i++)
#pragma unroll
        for (int j = 0; j < NT; j++)
#pragma unroll
            for (int e = 0; e < 4; e++)
                x[i][j][e] = 0.0f;
}

/* sum += part with fp32 adds, rounded to nearest: off the tensor cores. */
template <int MT, int NT>
static __device__ __forceinline__ void add_to(float (&sum)[MT][NT][4],
                                              const float (&part)[MT][NT][4])
{
#pragma unroll
    for (int i = 0; i < MT; i++)
#pragma unroll
        for (int j = 0; j < NT; j++)
#pragma unroll
            for (int e = 0; e < 4; e++)
                sum[i][j][e] += part[i][j][e];
}

template <typename Op, typename T, bool VECTOR>
__global__ void __launch_bounds__(T::THREADS, T::BLOCKS_PER_SM)
    conv2d_mma(const typename Op::elem *__restrict__ input,
               const typename Op::elem *__restrict__ weights, const float *__restrict__ bias,
               typename Op::out *__restrict__ output, struct conv_shape s, int first_tile)
{
    typedef typename std::conditional<sizeof(typename Op::elem) == 2, uint16_t, uint32_t>::type Raw;
    typedef tile_loader<Raw, T::BM, T::BN, T::CHUNKS, T::THREADS> loader_t;
    constexpr int MT = T::WM / 16, NT = T::WN / 8; /* mma tiles per warp */

    extern __shared__ uint4 ring[]; /* stage t: A at t * TILE_CHUNKS, B after it */

    const int lane = threadIdx.x % 32, warp = threadIdx.x / 32;
    const int wm = warp / T::WARPS_N * T::WM, wn = warp % T::WARPS_N * T::WN;
    const int p0 = (first_tile + blockIdx.y) * T::BM, j0 = blockIdx.x * T::BN;
    loader_t load(reinterpret_cast<const Raw *>(input), reinterpret_cast<const Raw *>(weights), s,
                  p0, j0);
    const int tiles = ceil_div(load.depth, loader_t::BK);

    float acc[MT][NT][4] = {};
    /* 3xTF32 only: this tile's big products and all small ones (mma_ops.cuh). */
    float tile_acc[Op::SPLIT_ACCUMULATORS ? MT : 1][NT][4];
    float small_acc[Op::SPLIT_ACCUMULATORS ? MT : 1][NT][4] = {};

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
        const uint4 *b_tile = a_tile + T::BM * T::CHUNKS;
        if constexpr (Op::SPLIT_ACCUMULATORS)
            zero(tile_acc);
#pragma unroll
        for (int step = 0; step < T::CHUNKS / KSTEP_CHUNKS; step++) {
            uint32_t a[MT][4], b[NT][2];
            /* A: lanes 0-15 point at rows 0-15 of the first chunk of the step, lanes
             * 16-31 at the same rows of the second: the four 8x8 matrices of the
             * 16x(32 bytes) fragment, in the order the mma wants them. */
#pragma unroll
            for (int i = 0; i < MT; i++) {
                const int row = wm + i * 16 + lane % 16, chunk = step * KSTEP_CHUNKS + lane / 16;
                ldmatrix_x4(a[i], a_tile + tile_chunk<T::CHUNKS, true>(row, chunk));
            }
            /* B: one ldmatrix.x4 holds two 8-channel fragments: channels 0-7 (both
             * chunks), then channels 8-15. */
#pragma unroll
            for (int j = 0; j < NT; j += 2) {
                uint32_t r[4];
                const int row = wn + j * 8 + lane % 8 + lane / 16 * 8;
                const int chunk = step * KSTEP_CHUNKS + lane / 8 % 2;
                ldmatrix_x4(r, b_tile + tile_chunk<T::CHUNKS, true>(row, chunk));
                b[j][0] = r[0];
                b[j][1] = r[1];
                b[j + 1][0] = r[2];
                b[j + 1][1] = r[3];
            }
            if constexpr (Op::SPLIT_ACCUMULATORS)
                Op::multiply(tile_acc, small_acc, a, b);
            else
                Op::multiply(acc, a, b);
        }
        if constexpr (Op::SPLIT_ACCUMULATORS)
            add_to(acc, tile_acc);
    }
    if constexpr (Op::SPLIT_ACCUMULATORS)
        add_to(acc, small_acc);

    /* Accumulator i, j: rows (pixels) lane / 4 and lane / 4 + 8 of the 16x8 tile,
     * columns (channels) 2 (lane % 4) and the next: pairs of neighbouring channels,
     * contiguous in NHWC. */
    const int pixels = s.n * s.h * s.w;
    const bool pairs = s.cout % 2 == 0; /* a pair is then aligned */
#pragma unroll
    for (int i = 0; i < MT; i++)
#pragma unroll
        for (int j = 0; j < NT; j++) {
            const int ch = j0 + wn + j * 8 + lane % 4 * 2;
            const float b0 = bias && ch < s.cout ? bias[ch] : 0.0f;
            const float b1 = bias && ch + 1 < s.cout ? bias[ch + 1] : 0.0f;
#pragma unroll
            for (int half = 0; half < 2; half++) {
                const int p = p0 + wm + i * 16 + lane / 4 + half * 8;
                if (p >= pixels || ch >= s.cout)
                    continue;
                typename Op::out *dst = output + (size_t)p * s.cout + ch;
                const float v0 = acc[i][j][2 * half] + b0, v1 = acc[i][j][2 * half + 1] + b1;
                store_pair(dst, v0, v1, pairs);
                if (!pairs && ch + 1 < s.cout)
                    store_pair(dst + 1, v1, 0.0f, false);
            }
        }
}

template <typename Op, typename T> static void launch_tiling(const struct conv_args *a)
{
    const struct conv_shape *s = &a->shape;
    typedef typename Op::elem E;
    const E *input = static_cast<const E *>(a->input),
            *weights = static_cast<const E *>(a->weights);
    typename Op::out *output = static_cast<typename Op::out *>(a->output);
    const bool vector = chunks_are_vectors(s, sizeof(E), input, weights);
    auto kernel = vector ? conv2d_mma<Op, T, true> : conv2d_mma<Op, T, false>;
    CUDA_CHECK(
        cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, T::SMEM_BYTES));
    const int pixel_tiles = ceil_div(s->n * s->h * s->w, T::BM);
    for (int first = 0; first < pixel_tiles; first += MAX_GRID_YZ) {
        const dim3 grid(ceil_div(s->cout, T::BN), min(pixel_tiles - first, MAX_GRID_YZ));
        kernel<<<grid, T::THREADS, T::SMEM_BYTES, a->stream>>>(input, weights, a->bias, output, *s,
                                                               first);
        CUDA_CHECK_LAUNCH();
    }
}

/* Narrow blocks for layers of at most 64 output channels, wide ones above. */
static bool narrow(const struct conv_shape *s)
{
    return s->cout <= narrow_tiling::BN;
}

extern "C" size_t mma_smem_bytes(const struct conv_shape *s)
{
    return narrow(s) ? narrow_tiling::SMEM_BYTES : wide_tiling::SMEM_BYTES;
}

extern "C" size_t mma_3xtf32_smem_bytes(const struct conv_shape *s)
{
    (void)s;
    return split_tiling::SMEM_BYTES;
}

template <typename Op> static void launch(const struct conv_args *a)
{
    if (narrow(&a->shape))
        launch_tiling<Op, narrow_tiling>(a);
    else
        launch_tiling<Op, wide_tiling>(a);
}

extern "C" void launch_conv2d_mma_fp16(const struct conv_args *a)
{
    launch<mma_fp16>(a);
}

extern "C" void launch_conv2d_mma_bf16(const struct conv_args *a)
{
    launch<mma_bf16>(a);
}

extern "C" void launch_conv2d_mma_tf32(const struct conv_args *a)
{
    launch<mma_tf32>(a);
}

extern "C" void launch_conv2d_3xtf32(const struct conv_args *a)
{
    launch_tiling<mma_3xtf32, split_tiling>(a);
}
