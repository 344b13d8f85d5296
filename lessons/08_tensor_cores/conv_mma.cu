/* Lesson 08, variants "mma_fp16", "mma_bf16", "mma_tf32" and "3xtf32": the implicit
 * GEMM of gemm_tiles.cuh on warp-level mma.sync, the way the libraries do it before
 * Hopper:
 *   - a block computes a 128-pixel x 128-channel tile of the output; each of its 8
 *     warps a 64 x 32 part of it, 16 mma per 32 bytes of k, 64 fp32 accumulators
 *     per thread: large warp tiles, so each fragment loaded feeds 4 mma;
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

#define MMA_BM 128     /* pixels per block */
#define MMA_BN 128     /* output channels per block */
#define MMA_CHUNKS 4   /* 64 bytes of k per tile row */
#define MMA_STAGES 4   /* tiles in the ring */
#define MMA_WARPS_M 2  /* warps along the pixels */
#define MMA_WARPS_N 4  /* warps along the channels */
#define MMA_THREADS (MMA_WARPS_M * MMA_WARPS_N * 32)
#define MMA_BLOCKS_PER_SM 2

/* Bytes of shared memory: the ring of A and B tiles. */
#define MMA_SMEM_BYTES (MMA_STAGES * (MMA_BM + MMA_BN) * MMA_CHUNKS * CHUNK_BYTES)

template <typename Op, bool VECTOR>
__global__ void __launch_bounds__(MMA_THREADS, MMA_BLOCKS_PER_SM)
    conv2d_mma(const typename Op::elem *__restrict__ input,
               const typename Op::elem *__restrict__ weights, const float *__restrict__ bias,
               typename Op::out *__restrict__ output, struct conv_shape s, int first_tile)
{
    typedef typename std::conditional<sizeof(typename Op::elem) == 2, uint16_t, uint32_t>::type Raw;
    typedef tile_loader<Raw, MMA_BM, MMA_BN, MMA_CHUNKS, MMA_THREADS> loader_t;
    constexpr int WM = MMA_BM / MMA_WARPS_M, WN = MMA_BN / MMA_WARPS_N;
    constexpr int MT = WM / 16, NT = WN / 8; /* mma tiles per warp */
    constexpr int TILE_CHUNKS = (MMA_BM + MMA_BN) * MMA_CHUNKS;

    extern __shared__ uint4 ring[]; /* stage t: A at t * TILE_CHUNKS, B after it */

    const int lane = threadIdx.x % 32, warp = threadIdx.x / 32;
    const int wm = warp / MMA_WARPS_N * WM, wn = warp % MMA_WARPS_N * WN;
    const int p0 = (first_tile + blockIdx.y) * MMA_BM, j0 = blockIdx.x * MMA_BN;
    loader_t load(reinterpret_cast<const Raw *>(input), reinterpret_cast<const Raw *>(weights), s,
                  p0, j0);
    const int tiles = ceil_div(load.depth, loader_t::BK);

    float acc[MT][NT][4] = {};

    /* Fill all stages but one; a group is committed even when empty so that "group t
     * is complete" always means "tile t has landed". */
    for (int t = 0; t < MMA_STAGES - 1; t++) {
        if (t < tiles) {
            load.template load<VECTOR, true>(ring + t * TILE_CHUNKS,
                                             ring + t * TILE_CHUNKS + MMA_BM * MMA_CHUNKS);
            load.template advance<VECTOR>();
        }
        commit_copies();
    }

    for (int t = 0; t < tiles; t++) {
        wait_copies<MMA_STAGES - 2>();
        /* Tile t landed for everyone, and everyone is done with tile t - 1, whose
         * stage is refilled next. */
        __syncthreads();
        const int fill = t + MMA_STAGES - 1;
        if (fill < tiles) {
            uint4 *stage = ring + fill % MMA_STAGES * TILE_CHUNKS;
            load.template load<VECTOR, true>(stage, stage + MMA_BM * MMA_CHUNKS);
            load.template advance<VECTOR>();
        }
        commit_copies();

        const uint4 *a_tile = ring + t % MMA_STAGES * TILE_CHUNKS;
        const uint4 *b_tile = a_tile + MMA_BM * MMA_CHUNKS;
#pragma unroll
        for (int step = 0; step < MMA_CHUNKS / KSTEP_CHUNKS; step++) {
            uint32_t a[MT][4], b[NT][2];
            /* A: lanes 0-15 point at rows 0-15 of the first chunk of the step, lanes
             * 16-31 at the same rows of the second: the four 8x8 matrices of the
             * 16x(32 bytes) fragment, in the order the mma wants them. */
#pragma unroll
            for (int i = 0; i < MT; i++)
                ldmatrix_x4(a[i], a_tile + tile_chunk<MMA_CHUNKS, true>(
                                               wm + i * 16 + lane % 16,
                                               step * KSTEP_CHUNKS + lane / 16));
            /* B: one ldmatrix.x4 holds two 8-channel fragments: channels 0-7 (both
             * chunks), then channels 8-15. */
#pragma unroll
            for (int j = 0; j < NT; j += 2) {
                uint32_t r[4];
                ldmatrix_x4(r, b_tile + tile_chunk<MMA_CHUNKS, true>(
                                            wn + j * 8 + lane % 8 + lane / 16 * 8,
                                            step * KSTEP_CHUNKS + lane / 8 % 2));
                b[j][0] = r[0];
                b[j][1] = r[1];
                b[j + 1][0] = r[2];
                b[j + 1][1] = r[3];
            }
            Op::multiply(acc, a, b);
        }
    }

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
                Op::store(dst, v0, v1, pairs);
                if (!pairs && ch + 1 < s.cout)
                    Op::store(dst + 1, v1, 0.0f, false);
            }
        }
}

template <typename Op> static void launch(const struct conv_args *a)
{
    const struct conv_shape *s = &a->shape;
    typedef typename Op::elem T;
    const T *input = static_cast<const T *>(a->input), *weights = static_cast<const T *>(a->weights);
    typename Op::out *output = static_cast<typename Op::out *>(a->output);
    const bool vector = chunks_are_vectors(s, sizeof(T), input, weights);
    auto kernel = vector ? conv2d_mma<Op, true> : conv2d_mma<Op, false>;
    CUDA_CHECK(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                    MMA_SMEM_BYTES));
    const int pixel_tiles = ceil_div(s->n * s->h * s->w, MMA_BM);
    for (int first = 0; first < pixel_tiles; first += MAX_GRID_YZ) {
        const dim3 grid(ceil_div(s->cout, MMA_BN), min(pixel_tiles - first, MAX_GRID_YZ));
        kernel<<<grid, MMA_THREADS, MMA_SMEM_BYTES, a->stream>>>(input, weights, a->bias, output,
                                                                 *s, first);
        CUDA_CHECK_LAUNCH();
    }
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
    launch<mma_3xtf32>(a);
}
