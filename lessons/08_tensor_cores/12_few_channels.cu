/* Lesson 08, step 12, variant "few_channels_fp16", and the lesson's final "wgmma_fp16",
 * "wgmma_bf16" and "wgmma_tf32": the first layer, where there are few input channels.
 *
 * With C = 3 a 3x3 layer's GEMM is K = C*R*S = 27 deep and its output 64 channels wide:
 * 3.5 GFLOP for 134 MB of fp16 output at unet-3x64, under 4 us of tensor-core work
 * against 33 us of writing at the copy rate. It is a memory layer, and every step so far
 * treats it as a GEMM: a ring of k-tiles for a K that fits one tile, the weights loaded
 * again for every tile, the output written a 4-byte pair per lane from the fragments.
 * Where C*R*S <= 32 this kernel takes the whole K in one tile instead:
 *   - the weights (64 channels x 32 of k) are loaded once per block, which then walks
 *     the layer's pixel tiles (persistent blocks, several per SM);
 *   - a tile is 128 neighbouring pixels of one image row; the R input rows under them
 *     (with the zeros outside the image) are copied into shared memory, contiguous
 *     stretches of NHWC, and A, 128 pixels x 32 values, is gathered from there through a
 *     table of where each k lies, into a swizzled tile that ldmatrix reads as in step 3;
 *   - one stage of step 4's mma.sync warps multiplies it (2 or 4 k-steps), and stores it
 *     as step 4 does.
 * It needs mma.sync alone (an A100 runs it): on this layer the instruction does not
 * matter. The final variants take it where C*R*S <= 32 and step 11 elsewhere.
 *
 *   build/bin/08_tensor_cores --preset unet-3x64 --variant few_channels_fp16
 */
#include "cuda_check.h"
#include "kernels.h"
#include "ldmatrix_fragments.cuh"
#include "mma_sync.cuh"
#include "wgmma_steps.h"

#define FEW_K 32        /* the GEMM's depth this kernel takes, zero-padded */
#define FEW_MAX_ROWS 4096 /* elements of the input rows under a tile: R * (128 + S - 1) * C */
#define FEW_BLOCKS_PER_SM 4

/* 128 pixels x 64 channels, 4 x 2 warps of 32 x 32, one tile of FEW_K. */
template <typename Op>
using few_tiling = tiling<128, 64, 4, 2, FEW_K * sizeof(typename Op::elem) / CHUNK_BYTES, 1,
                          FEW_BLOCKS_PER_SM>;

/* Shared memory: B, A, and the input rows under the tile. */
template <typename Op> struct few_layout {
    typedef few_tiling<Op> T;
    static constexpr int B_BYTES = T::BN * T::CHUNKS * CHUNK_BYTES;
    static constexpr int A_BYTES = T::BM * T::CHUNKS * CHUNK_BYTES;
    static constexpr int ROWS_BYTES = FEW_MAX_ROWS * sizeof(typename Op::elem);
    static constexpr int SMEM_BYTES = B_BYTES + A_BYTES + ROWS_BYTES;
};

/* C*R*S <= 32 bounds the rows under a tile: R * C <= 32 / S, so R * (128 + S - 1) * C
 * is at most 4096 (S = 1, C = 32). Pixels are counted in an int. */
static bool few_channels(const struct conv_shape *s)
{
    return s->cin * s->ksize * s->ksize <= FEW_K && (long long)s->n * s->h * s->w <= INT_MAX;
}

/* Where the tile's rows hold each k of pixel 0's A row (tap row r, column s, channel c
 * at (r * TW + s) * C + c, TW = 128 + S - 1 pixels a row): pixel i's is i * C further on.
 * k past C*R*S is -1, which reads as zero. */
template <typename T> static __device__ void fill_k_table(int *offset, const struct conv_shape &s)
{
    const int depth = s.cin * s.ksize * s.ksize, row = T::BM + s.ksize - 1;
    for (int k = threadIdx.x; k < FEW_K; k += T::THREADS) {
        const int tap = k / s.cin, c = k % s.cin;
        offset[k] = k < depth ? (tap / s.ksize * row + tap % s.ksize) * s.cin + c : -1;
    }
}

/* B^T: row j of the tile is output channel j0 + j, its FEW_K values of k in KRSC order,
 * zero past C*R*S and past the last channel. */
template <typename T, typename Raw>
static __device__ void load_weights(uint4 *b_tile, const Raw *weights, const struct conv_shape &s,
                                    int j0)
{
    constexpr int E = CHUNK_BYTES / sizeof(Raw);
    const int depth = s.cin * s.ksize * s.ksize;
    for (int i = threadIdx.x; i < T::BN * FEW_K; i += T::THREADS) {
        const int j = i / FEW_K, k = i % FEW_K;
        const bool inside = j0 + j < s.cout && k < depth;
        Raw *chunk = reinterpret_cast<Raw *>(b_tile + tile_chunk<T::CHUNKS, true>(j, k / E));
        chunk[k % E] = inside ? weights[(size_t)(j0 + j) * depth + k] : Raw(0);
    }
}

/* [page: few-gather] */
/* The R input rows under pixels x0..x0+127 of row y of image n, from R/2 pixels left of
 * x0 to S/2 right of the last: each a contiguous stretch of NHWC, zero outside the image. */
template <typename T, typename Raw>
static __device__ void load_rows(Raw *rows, const Raw *input, const struct conv_shape &s, int n,
                                 int y, int x0)
{
    const int radius = s.ksize / 2, length = (T::BM + s.ksize - 1) * s.cin;
    const int first = max(0, radius - x0) * s.cin, last = (s.w - x0 + radius) * s.cin;
    for (int r = 0; r < s.ksize; r++) {
        const int yy = y + r - radius;
        const bool row_inside = (unsigned)yy < (unsigned)s.h;
        const long long start = ((long long)(n * s.h + yy) * s.w + x0 - radius) * s.cin;
        for (int i = threadIdx.x; i < length; i += T::THREADS)
            rows[r * length + i] =
                row_inside && i >= first && i < last ? __ldg(input + start + i) : Raw(0);
    }
}

/* A from the rows: thread t fills chunks of A's row t % BM (pixel x0 + t % BM), the first
 * or the second half of its k, each value one shared-memory load at the table's offset. */
template <typename T, typename Raw>
static __device__ void gather_pixels(uint4 *a_tile, const Raw *rows, const int *offset,
                                     const struct conv_shape &s)
{
    constexpr int E = CHUNK_BYTES / sizeof(Raw), HALF = T::CHUNKS / 2;
    static_assert(T::THREADS == 2 * T::BM, "two threads per pixel");
    const int row = threadIdx.x % T::BM, first_chunk = threadIdx.x / T::BM * HALF;
    const Raw *pixel = rows + row * s.cin;
#pragma unroll
    for (int q = 0; q < HALF; q++) {
        union {
            uint4 chunk;
            Raw value[E];
        } u;
#pragma unroll
        for (int e = 0; e < E; e++) {
            const int at = offset[(first_chunk + q) * E + e];
            u.value[e] = at >= 0 ? pixel[at] : Raw(0);
        }
        a_tile[tile_chunk<T::CHUNKS, true>(row, first_chunk + q)] = u.chunk;
    }
}
/* [/page: few-gather] */

/* Blocks (x) walk the tiles of 128 pixels along each image row, for output channels
 * blockIdx.y * BN... */
/* [page: few-kernel] */
template <typename Op>
__global__ void __launch_bounds__(few_tiling<Op>::THREADS, FEW_BLOCKS_PER_SM)
    conv2d_few_channels(const typename Op::elem *__restrict__ input,
                        const typename Op::elem *__restrict__ weights,
                        const float *__restrict__ bias, typename Op::out *__restrict__ output,
                        struct conv_shape s)
{
    typedef few_layout<Op> L;
    typedef typename L::T T;
    typedef raw_bits<typename Op::elem> Raw;
    extern __shared__ uint4 smem[];
    __shared__ int offset[FEW_K];
    uint4 *b_tile = smem, *a_tile = smem + L::B_BYTES / CHUNK_BYTES;
    Raw *rows = reinterpret_cast<Raw *>(a_tile + L::A_BYTES / CHUNK_BYTES);

    const int warp = threadIdx.x / 32;
    const int wm = warp / T::WARPS_N * T::WM, wn = warp % T::WARPS_N * T::WN;
    const int j0 = blockIdx.y * T::BN, along_row = ceil_div(s.w, T::BM);
    const int tiles = s.n * s.h * along_row;
    fill_k_table<T>(offset, s);
    load_weights<T>(b_tile, reinterpret_cast<const Raw *>(weights), s, j0);

    for (int tile = blockIdx.x; tile < tiles; tile += gridDim.x) {
        const int image_row = tile / along_row; /* n * H + y */
        const int x0 = tile % along_row * T::BM;
        __syncthreads(); /* the table and weights are in; the last tile's A is read */
        load_rows<T>(rows, reinterpret_cast<const Raw *>(input), s, image_row / s.h,
                     image_row % s.h, x0);
        __syncthreads();
        gather_pixels<T>(a_tile, rows, offset, s);
        __syncthreads();
        typename Op::template accumulators<T::MT, T::NT> acc;
        multiply_stage<T, ldmatrix_fragments>(acc, a_tile, b_tile, wm, wn);
        acc.finish();
        const int p0 = image_row * s.w + x0;
        store_warp_tile(acc.sum, output, bias, s, p0 + wm, j0 + wn, p0 + min(T::BM, s.w - x0));
    }
}
/* [/page: few-kernel] */

/* As many blocks as fit on the GPU at once, or one per tile where there are fewer; one
 * row of blocks per 64 output channels (at most 1024 of them: --cout stops at 65536). */
template <typename Op> static void launch_few_channels(const struct conv_args *a)
{
    typedef few_layout<Op> L;
    typedef typename Op::out Out;
    const struct conv_shape *s = &a->shape;
    auto kernel = conv2d_few_channels<Op>;
    CUDA_CHECK(
        cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, L::SMEM_BYTES));
    int device, sms, per_sm;
    CUDA_CHECK(cudaGetDevice(&device));
    CUDA_CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device));
    CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, kernel, L::T::THREADS,
                                                             L::SMEM_BYTES));
    const int channel_tiles = ceil_div(s->cout, L::T::BN);
    const int tiles = s->n * s->h * ceil_div(s->w, L::T::BM);
    const int resident = max(1, sms * per_sm / channel_tiles);
    const dim3 grid(min(tiles, resident), channel_tiles);
    kernel<<<grid, L::T::THREADS, L::SMEM_BYTES, a->stream>>>(
        static_cast<const typename Op::elem *>(a->input),
        static_cast<const typename Op::elem *>(a->weights), a->bias, static_cast<Out *>(a->output),
        *s);
    CUDA_CHECK_LAUNCH();
}

extern "C" const char *few_channels_unsupported(const struct conv_shape *s)
{
    return few_channels(s) ? NULL : "takes C*R*S <= 32 (a first layer) and < 2^31 pixels";
}

extern "C" void launch_conv2d_few_channels_fp16(const struct conv_args *a)
{
    launch_few_channels<mma_fp16>(a);
}

/* [page: few-launch] */
/* The lesson's final kernel: this step where K fits one tile, step 11 elsewhere. */
template <typename Op> static void launch(const struct conv_args *a)
{
    if (few_channels(&a->shape))
        launch_few_channels<Op>(a);
    else
        launch_narrow_tile<Op>(a);
}
/* [/page: few-launch] */

extern "C" void launch_conv2d_wgmma_fp16(const struct conv_args *a)
{
    launch<mma_fp16>(a);
}

extern "C" void launch_conv2d_wgmma_bf16(const struct conv_args *a)
{
    launch<mma_bf16>(a);
}

extern "C" void launch_conv2d_wgmma_tf32(const struct conv_args *a)
{
    launch<mma_tf32>(a);
}
