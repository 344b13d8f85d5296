/* What lesson 08's mma.sync steps share (02_mma_sync.cu, 03_ldmatrix.cu,
 * 04_cp_async_ring.cu): a block's tiling, one warp's multiply of a stage in shared
 * memory, the kernel of steps 2 and 3 (one tile in shared memory at a time), the
 * epilogue, and the launch. What a step changes is a template argument: how the
 * fragments reach the registers (Fragments) or how tiles reach shared memory (the
 * kernel). */
#ifndef MMA_SYNC_CUH
#define MMA_SYNC_CUH

#include "cuda_check.h"
#include "gemm_tiles.cuh"
#include "grid_chunks.cuh"

/* A block's tiling: BM pixels x BN channels, WARPS_M x WARPS_N warps, tile rows of
 * CHUNKS chunks (k per tile: CHUNKS * 16 bytes), STAGES tiles in shared memory. */
template <int BM_, int BN_, int WARPS_M_, int WARPS_N_, int CHUNKS_, int STAGES_,
          int BLOCKS_PER_SM_>
struct tiling {
    static constexpr int BM = BM_, BN = BN_, WARPS_M = WARPS_M_, WARPS_N = WARPS_N_;
    static constexpr int CHUNKS = CHUNKS_, STAGES = STAGES_, BLOCKS_PER_SM = BLOCKS_PER_SM_;
    static constexpr int THREADS = WARPS_M * WARPS_N * 32;
    static constexpr int WM = BM / WARPS_M, WN = BN / WARPS_N; /* one warp's tile */
    static constexpr int MT = WM / 16, NT = WN / 8;            /* its mma tiles */
    static constexpr int TILE_CHUNKS = (BM + BN) * CHUNKS;     /* one stage: A, then B */
    static constexpr int SMEM_BYTES = STAGES * TILE_CHUNKS * CHUNK_BYTES;
};

/* 64 x 64 warp tiles: 128 pixels x 128 channels per block of 2 x 2 warps, 32 mma per
 * 32 bytes of k, 128 fp32 accumulators per thread. Each fragment loaded feeds 4 or 8
 * mma, where wmma's 32 x 32 warp tiles fed 2. Smaller is too small: with ldmatrix
 * (step 3), a 64 x 32 warp tile needs 6 loads for 16 mma, and shared memory (128 bytes
 * per clock per SM) could then feed the tensor cores only about two thirds of their
 * rate. */
template <int STAGES> using wide_tiling = tiling<128, 128, 2, 2, 4, STAGES, 2>;
/* Layers with at most 64 output channels: the same warps stacked along the pixels, so
 * that no half of the block computes channels that do not exist. */
template <int STAGES> using narrow_tiling = tiling<256, 64, 4, 1, 4, STAGES, 2>;

/* One warp's share of a stage: CHUNKS / 2 k-steps, each its fragments (Fragments) and
 * their mma (acc, the Op's accumulators, mma_ops.cuh). */
template <typename T, typename Fragments, typename Acc>
static __device__ __forceinline__ void multiply_stage(Acc &acc, const uint4 *a_tile,
                                                      const uint4 *b_tile, int wm, int wn)
{
    acc.begin_stage();
#pragma unroll
    for (int step = 0; step < T::CHUNKS / KSTEP_CHUNKS; step++) {
        uint32_t a[T::MT][4], b[T::NT][2];
        Fragments::template load<T::CHUNKS>(a, b, a_tile, b_tile, wm, wn, step);
        acc.multiply(a, b);
    }
    acc.end_stage();
}

/* Adds the bias and stores a warp's tile, whose first pixel is p0 and first channel
 * j0. Accumulator i, j: rows (pixels) lane / 4 and lane / 4 + 8 of the 16x8 tile,
 * columns (channels) 2 (lane % 4) and the next: pairs of neighbouring channels,
 * contiguous in NHWC. */
template <int MT, int NT, typename Out>
static __device__ __forceinline__ void store_warp_tile(const float (&acc)[MT][NT][4], Out *output,
                                                       const float *bias,
                                                       const struct conv_shape &s, int p0, int j0)
{
    const int lane = threadIdx.x % 32;
    const int pixels = s.n * s.h * s.w;
    const bool pairs = s.cout % 2 == 0; /* a pair is then aligned */
#pragma unroll
    for (int i = 0; i < MT; i++)
#pragma unroll
        for (int j = 0; j < NT; j++) {
            const int ch = j0 + j * 8 + lane % 4 * 2;
            const float b0 = bias && ch < s.cout ? bias[ch] : 0.0f;
            const float b1 = bias && ch + 1 < s.cout ? bias[ch + 1] : 0.0f;
#pragma unroll
            for (int half = 0; half < 2; half++) {
                const int p = p0 + i * 16 + lane / 4 + half * 8;
                if (p >= pixels || ch >= s.cout)
                    continue;
                Out *dst = output + (size_t)p * s.cout + ch;
                const float v0 = acc[i][j][2 * half] + b0, v1 = acc[i][j][2 * half + 1] + b1;
                store_pair(dst, v0, v1, pairs);
                if (!pairs && ch + 1 < s.cout)
                    store_pair(dst + 1, v1, 0.0f, false);
            }
        }
}

/* Steps 2 and 3: one tile of A and B in shared memory at a time. The block copies it,
 * waits for it, and multiplies it; the tensor cores idle during every copy. */
template <typename Op, typename T, typename Fragments, bool VECTOR>
__global__ void __launch_bounds__(T::THREADS, T::BLOCKS_PER_SM)
    conv2d_one_tile(const typename Op::elem *__restrict__ input,
                    const typename Op::elem *__restrict__ weights, const float *__restrict__ bias,
                    typename Op::out *__restrict__ output, struct conv_shape s, int first_tile)
{
    typedef raw_bits<typename Op::elem> Raw;
    typedef tile_loader<Raw, T::BM, T::BN, T::CHUNKS, T::THREADS> loader_t;
    extern __shared__ uint4 smem[]; /* A, then B */
    uint4 *a_tile = smem, *b_tile = smem + T::BM * T::CHUNKS;

    const int warp = threadIdx.x / 32;
    const int wm = warp / T::WARPS_N * T::WM, wn = warp % T::WARPS_N * T::WN;
    const int p0 = (first_tile + blockIdx.y) * T::BM, j0 = blockIdx.x * T::BN;
    loader_t load(reinterpret_cast<const Raw *>(input), reinterpret_cast<const Raw *>(weights), s,
                  p0, j0);
    typename Op::template accumulators<T::MT, T::NT> acc;

    for (int t = 0; t < ceil_div(load.depth, loader_t::BK); t++) {
        load.template load<VECTOR, Fragments::SWIZZLED>(a_tile, b_tile);
        load.template advance<VECTOR>();
        commit_copies();
        wait_copies<0>();
        __syncthreads(); /* the tile has landed for everyone */
        multiply_stage<T, Fragments>(acc, a_tile, b_tile, wm, wn);
        __syncthreads(); /* everyone has read it before the next copy overwrites it */
    }
    acc.finish();
    store_warp_tile(acc.sum, output, bias, s, p0 + wm, j0 + wn);
}

/* Launches kernel<VECTOR> (the vector path where every chunk is one aligned 16-byte
 * copy) over the layer: a block per T::BM pixels and T::BN channels. */
template <typename Op, typename T, typename Kernel>
static void launch_blocks(const struct conv_args *a, Kernel vector_kernel, Kernel element_kernel)
{
    const struct conv_shape *s = &a->shape;
    typedef typename Op::elem E;
    const E *input = static_cast<const E *>(a->input),
            *weights = static_cast<const E *>(a->weights);
    typename Op::out *output = static_cast<typename Op::out *>(a->output);
    const Kernel kernel =
        chunks_are_vectors(s, sizeof(E), input, weights) ? vector_kernel : element_kernel;
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
static inline bool narrow_layer(const struct conv_shape *s)
{
    return s->cout <= narrow_tiling<1>::BN;
}

/* Steps 2 and 3 on fp16: the one-tile kernel with these Fragments. */
template <typename Fragments> static void launch_one_tile(const struct conv_args *a)
{
    if (narrow_layer(&a->shape)) {
        typedef narrow_tiling<1> T;
        launch_blocks<mma_fp16, T>(a, conv2d_one_tile<mma_fp16, T, Fragments, true>,
                                   conv2d_one_tile<mma_fp16, T, Fragments, false>);
    } else {
        typedef wide_tiling<1> T;
        launch_blocks<mma_fp16, T>(a, conv2d_one_tile<mma_fp16, T, Fragments, true>,
                                   conv2d_one_tile<mma_fp16, T, Fragments, false>);
    }
}

#endif
