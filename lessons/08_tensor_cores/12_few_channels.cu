/* Lesson 08, step 12, variant "few_channels_fp16", and the lesson's final "wgmma_fp16",
 * "wgmma_bf16" and "wgmma_tf32": the first layer, where there are few input channels.
 *
 * With C = 3 a 3x3 layer's GEMM is K = C*R*S = 27 deep and its output 64 channels wide:
 * 3.6 GFLOP for 134 MB of fp16 output at unet-3x64, under 4 us of tensor-core work
 * against 32 us of writing at the copy rate. It is a memory layer, and every step so far
 * treats it as a GEMM: a ring of k-tiles for a K that fits one tile, the weights loaded
 * again for every tile, the output written a 4-byte pair per lane from the fragments.
 * Where C*R*S <= 32 this kernel takes the whole K in one tile instead:
 *   - the weights (64 channels x 32 of k) are loaded once per block, which then walks
 *     the layer's pixel tiles (persistent blocks, several per SM);
 *   - a tile's A, 128 pixels x 32 values, is gathered element by element through a table
 *     of where each k lies (tap row, tap column, channel), each value one predicated load
 *     (zero outside the image and past k = 27, no branch), into a swizzled tile that
 *     ldmatrix reads as in step 3;
 *   - 8 mma.sync warps of 32 x 32 multiply it with step 4's multiply_stage (2 or 4
 *     k-steps);
 *   - the tile's output goes through shared memory and leaves as whole 16-byte chunks,
 *     128 pixels x 64 channels one contiguous span of NHWC.
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
#define STAGE_PAD 16    /* bytes after each staged output row: rows start 4 banks apart */
#define FEW_BLOCKS_PER_SM 4

/* 128 pixels x 64 channels, 4 x 2 warps of 32 x 32, one tile of FEW_K. */
template <typename Op>
using few_tiling = tiling<128, 64, 4, 2, FEW_K * sizeof(typename Op::elem) / CHUNK_BYTES, 1,
                          FEW_BLOCKS_PER_SM>;

template <typename Op> struct few_layout {
    typedef few_tiling<Op> T;
    static constexpr int B_BYTES = T::BN * T::CHUNKS * CHUNK_BYTES;
    static constexpr int A_BYTES = T::BM * T::CHUNKS * CHUNK_BYTES;
    static constexpr int STAGE_ROW = T::BN * sizeof(typename Op::out) + STAGE_PAD;
    static constexpr int STAGE_BYTES = T::BM * STAGE_ROW;
    /* B, then A; the staged output reuses A's bytes once the mma have read them. */
    static constexpr int SMEM_BYTES = B_BYTES + (A_BYTES > STAGE_BYTES ? A_BYTES : STAGE_BYTES);
};

/* Pixels are counted in an int, up to a tile past the last. */
static bool few_channels(const struct conv_shape *s)
{
    return s->cin * s->ksize * s->ksize <= FEW_K &&
           (long long)s->n * s->h * s->w <= INT_MAX - few_tiling<mma_fp16>::BM;
}

/* Where each k of the GEMM lies: tap row and column as offsets from the output pixel,
 * and the element offset in the NHWC input: one 16-byte entry, which ptxas reads with
 * one 16-byte load. k past C*R*S gets a row offset no pixel can reach, so it reads as
 * zero. */
struct k_place {
    int dy, dx, offset, unused;
};

static __device__ void fill_k_table(k_place *t, const struct conv_shape &s)
{
    const int depth = s.cin * s.ksize * s.ksize, radius = s.ksize / 2;
    for (int k = threadIdx.x; k < FEW_K; k += blockDim.x) {
        const int tap = k / s.cin, c = k % s.cin;
        const int dy = tap / s.ksize - radius, dx = tap % s.ksize - radius;
        t[k] = {k < depth ? dy : -(1 << 30), dx, k < depth ? (dy * s.w + dx) * s.cin + c : 0, 0};
    }
}

/* *p where inside, else zero, by a predicated load: no branch, and every lane's load
 * issues before any is waited for. One per element size (the register class differs). */
#define LOAD_OR_ZERO(T, bits, reg)                                                                 \
    static __device__ __forceinline__ T load_or_zero(const T *p, bool inside)                      \
    {                                                                                              \
        T v;                                                                                       \
        asm volatile("{\n .reg .pred q;\n setp.ne.b32 q, %2, 0;\n mov.b" #bits " %0, 0;\n"        \
                     " @q ld.global.nc.b" #bits " %0, [%1];\n}\n"                                 \
                     : "=" reg(v)                                                                  \
                     : "l"(p), "r"((int)inside));                                                  \
        return v;                                                                                  \
    }
LOAD_OR_ZERO(uint16_t, 16, "h")
LOAD_OR_ZERO(uint32_t, 32, "r")
#undef LOAD_OR_ZERO

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

/* A for pixels p0..: thread t fills chunks of row t % BM, the first or the second half
 * of its k. A warp's lanes are 32 neighbouring pixels, so each of its loads reads one
 * short stretch of a row of the image, which the taps around it read again from L1. */
template <typename T, typename Raw>
static __device__ void gather_pixels(uint4 *a_tile, const Raw *input, const k_place *t,
                                     const struct conv_shape &s, int p0)
{
    constexpr int E = CHUNK_BYTES / sizeof(Raw), HALF = T::CHUNKS / 2;
    static_assert(T::THREADS == 2 * T::BM, "two threads per pixel");
    const int row = threadIdx.x % T::BM, first_chunk = threadIdx.x / T::BM * HALF;
    const int p = p0 + row;
    const bool real = p < s.n * s.h * s.w;
    const int y = real ? p / s.w % s.h : -(1 << 30), x = p % s.w;
    const Raw *pixel = input + (size_t)p * s.cin;
#pragma unroll
    for (int q = 0; q < HALF; q++) {
        union {
            uint4 chunk;
            Raw value[E];
        } u;
        /* [page: few-gather] */
#pragma unroll
        for (int e = 0; e < E; e++) {
            const k_place at = t[(first_chunk + q) * E + e];
            const bool inside =
                (unsigned)(y + at.dy) < (unsigned)s.h && (unsigned)(x + at.dx) < (unsigned)s.w;
            u.value[e] = load_or_zero(pixel + at.offset, inside);
        }
        /* [/page: few-gather] */
        a_tile[tile_chunk<T::CHUNKS, true>(row, first_chunk + q)] = u.chunk;
    }
}

/* The warp's accumulators plus the bias, in the output's type, into the staged tile. */
template <typename Op, int MT, int NT>
static __device__ void stage_warp_tile(const float (&acc)[MT][NT][4], char *stage,
                                       const float *bias, const struct conv_shape &s, int wm,
                                       int wn, int j0)
{
    typedef few_layout<Op> L;
    const int lane = threadIdx.x % 32;
#pragma unroll
    for (int j = 0; j < NT; j++) {
        const int col = wn + j * 8 + lane % 4 * 2, ch = j0 + col;
        const float b0 = bias && ch < s.cout ? bias[ch] : 0.0f;
        const float b1 = bias && ch + 1 < s.cout ? bias[ch + 1] : 0.0f;
#pragma unroll
        for (int i = 0; i < MT; i++)
#pragma unroll
            for (int half = 0; half < 2; half++) {
                const int row = wm + i * 16 + lane / 4 + half * 8;
                typename Op::out *dst = reinterpret_cast<typename Op::out *>(
                                            stage + row * L::STAGE_ROW) +
                                        col;
                store_pair(dst, acc[i][j][2 * half] + b0, acc[i][j][2 * half + 1] + b1, true);
            }
    }
}

/* The staged tile to the output: each row is the pixel's channels j0.. (contiguous in
 * NHWC), and with cout = BN the tile's rows are one contiguous span, so a warp's 32
 * chunks are 512 neighbouring bytes. Element by element where a row is not whole chunks. */
template <typename Op>
static __device__ void store_tile(const char *stage, typename Op::out *output,
                                  const struct conv_shape &s, int p0, int j0, bool chunks)
{
    typedef few_layout<Op> L;
    typedef typename Op::out Out;
    constexpr int E = CHUNK_BYTES / sizeof(Out), ROW_CHUNKS = L::T::BN / E;
    const int pixels = s.n * s.h * s.w, width = min(L::T::BN, s.cout - j0);
    if (chunks) {
        for (int i = threadIdx.x; i < L::T::BM * ROW_CHUNKS; i += L::T::THREADS) {
            const int row = i / ROW_CHUNKS, c = i % ROW_CHUNKS;
            if (p0 + row < pixels && c * E < width)
                *reinterpret_cast<uint4 *>(output + (size_t)(p0 + row) * s.cout + j0 + c * E) =
                    *reinterpret_cast<const uint4 *>(stage + row * L::STAGE_ROW + c * CHUNK_BYTES);
        }
        return;
    }
    for (int i = threadIdx.x; i < L::T::BM * L::T::BN; i += L::T::THREADS) {
        const int row = i / L::T::BN, c = i % L::T::BN;
        if (p0 + row < pixels && c < width)
            output[(size_t)(p0 + row) * s.cout + j0 + c] =
                reinterpret_cast<const Out *>(stage + row * L::STAGE_ROW)[c];
    }
}

/* Blocks (x) walk the pixel tiles for output channels blockIdx.y * BN... */
template <typename Op>
__global__ void __launch_bounds__(few_tiling<Op>::THREADS, FEW_BLOCKS_PER_SM)
    conv2d_few_channels(const typename Op::elem *__restrict__ input,
                        const typename Op::elem *__restrict__ weights,
                        const float *__restrict__ bias, typename Op::out *__restrict__ output,
                        struct conv_shape s, bool chunked_output)
{
    typedef few_layout<Op> L;
    typedef typename L::T T;
    typedef raw_bits<typename Op::elem> Raw;
    extern __shared__ uint4 smem[];
    __shared__ k_place table[FEW_K];
    uint4 *b_tile = smem, *a_tile = smem + L::B_BYTES / CHUNK_BYTES;
    char *stage = reinterpret_cast<char *>(a_tile);

    const int warp = threadIdx.x / 32;
    const int wm = warp / T::WARPS_N * T::WM, wn = warp % T::WARPS_N * T::WN;
    const int j0 = blockIdx.y * T::BN, tiles = ceil_div(s.n * s.h * s.w, T::BM);
    fill_k_table(table, s);
    load_weights<T>(b_tile, reinterpret_cast<const Raw *>(weights), s, j0);

    for (int tile = blockIdx.x; tile < tiles; tile += gridDim.x) {
        const int p0 = tile * T::BM;
        __syncthreads(); /* the table and weights are in; the last tile's stage is out */
        gather_pixels<T>(a_tile, reinterpret_cast<const Raw *>(input), table, s, p0);
        __syncthreads();
        typename Op::template accumulators<T::MT, T::NT> acc;
        multiply_stage<T, ldmatrix_fragments>(acc, a_tile, b_tile, wm, wn);
        acc.finish();
        __syncthreads(); /* every warp has read A: its bytes become the stage */
        stage_warp_tile<Op>(acc.sum, stage, bias, s, wm, wn, j0);
        __syncthreads();
        store_tile<Op>(stage, output, s, p0, j0, chunked_output);
    }
}

/* As many blocks as fit on the GPU at once, or one per pixel tile where there are
 * fewer; one row of blocks per 64 output channels (at most 1024 of them: --cout stops at
 * 65536). */
template <typename Op> static void launch_few_channels(const struct conv_args *a)
{
    typedef few_layout<Op> L;
    typedef typename Op::out Out;
    static_assert(L::SMEM_BYTES <= 48 * 1024, "within every GPU's default limit per block");
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
    const int pixel_tiles = ceil_div(s->n * s->h * s->w, L::T::BM);
    const int resident = max(1, conv_sms(a, sms) * per_sm / channel_tiles);
    const bool chunked = s->cout * sizeof(Out) % CHUNK_BYTES == 0 &&
                         (uintptr_t)a->output % CHUNK_BYTES == 0;
    const dim3 grid(min(pixel_tiles, resident), channel_tiles);
    kernel<<<grid, L::T::THREADS, L::SMEM_BYTES, a->stream>>>(
        static_cast<const typename Op::elem *>(a->input),
        static_cast<const typename Op::elem *>(a->weights), a->bias, static_cast<Out *>(a->output),
        *s, chunked);
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

/* The lesson's final kernel: this step where K fits one tile, else step 13 where it
 * takes the layer, else step 16 from 256 output channels and C*R*S >= 2048 on, else step
 * 14. */
template <typename Op> static void launch(const struct conv_args *a)
{
    if (few_channels(&a->shape))
        launch_few_channels<Op>(a);
    else if (!launch_halo_tile<Op>(a))
        launch_wide_or_staged<Op>(a);
}

PRECISION_LAUNCHERS(launch_conv2d_wgmma, launch)
