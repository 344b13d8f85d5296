/* Lesson 09, step 11, variant "bmma_tma": the layer as lesson 08's best kernels run theirs,
 * on 1-bit operands. Step 10 kept everything of bmma_and around the wgmma: A by ldmatrix
 * through the warps' registers (a row of zeros where a tap falls outside the image), the
 * block-wide waits of a cp.async ring, one tile per block, all blocks in the same phase.
 * Here (sm_90a):
 *   - the TMA brings each step's operands, 256 channel bits of one tap: A an im2col box
 *     (tma_pipeline.cuh), the tile's 128 output pixels in their flat order, each read at
 *     the tap's offset in its window, zeros where it falls outside the image (the border
 *     trick moves from ldmatrix addresses into the TMA unit); B one bulk copy of the
 *     step's weights of the tile's channels (4 KB for 128), which setup has laid out once,
 *     untimed, as wgmma reads them (a box of 128 rows of 32 bytes took the TMA unit about
 *     as long as A's box: its time goes by rows);
 *   - A and B both by descriptor: each consumer warpgroup issues one wgmma.m64n128k256
 *     (or m64n64k256) .and.popc per step for its 64 pixels and one m64n8k256 against 8
 *     rows of ones, which counts popc(x) over the window (the zeros outside count nothing);
 *   - warp specialisation: one producer warp walks every step of every tile of the block
 *     into a ring of 8 stages, full and empty mbarriers between it and the 8 consumer
 *     warps, no block-wide barrier;
 *   - persistent blocks, two per SM, each walking tiles of 128 pixels x 128 output
 *     channels (64 on layers of few pixels, tile_channels): while one block's warps run
 *     their epilogue the other's wgmmas run, and the producer loads the next tile's
 *     stages during its own block's epilogue.
 * The epilogue is bmma_and's formula, alpha * (base - 2 popc(x) + 4 count) + bias, each
 * pixel's window class counted in place, the tile's alpha, bias and bases copied into
 * shared memory while its loop runs. Where the TMA cannot read the packed rows (a
 * pixel's words not a whole number of 16-byte chunks), or a filter has more window
 * classes than the tables hold, step 10.
 *
 *   build/bin/09_binary --preset bnn-b64c512s14 --variant bmma_tma
 */
#include "tma_pipeline.cuh" /* first: bmma_tile.cuh defines STAGES, a name it uses */

#include "bmma_tile.cuh"
#include "kernels.h"

#define T_BM 128    /* output pixels per tile: 64 per consumer warpgroup */
#define T_BN 128    /* output channels per tile at most (64 on few pixels: tile_channels) */
#define T_KBYTES 32 /* a step: 256 channel bits of one tap, a row of the swizzle */
#define T_STAGES 8
#define T_A_BYTES (T_BM * T_KBYTES)
#define T_STAGE_BYTES (T_A_BYTES + T_B_BYTES)
#define T_B_BYTES (T_BN * T_KBYTES) /* a step's weights, one bulk copy, at most */
#define T_ONES_BYTES (8 * T_KBYTES) /* the m64n8's B: 8 rows of ones */
#define T_ALIGN 1024
/* The epilogue's tables of the tile's channels: alpha, the bias, the bases of every
 * window class (up to SMEM_CLASSES, any filter up to 7 x 7). */
#define T_TABLE_BYTES ((2 + SMEM_CLASSES) * T_BN * 4)
#define T_SMEM_BYTES (T_STAGES * T_STAGE_BYTES + T_ONES_BYTES + T_TABLE_BYTES + T_ALIGN)
#define T_CONSUMER_THREADS 256
#define T_CONSUMER_WARPS (T_CONSUMER_THREADS / 32)
#define T_THREADS (T_CONSUMER_THREADS + 32) /* and the producer warp */
#define T_BLOCKS_PER_SM 2
#define SWIZZLE_32B_GROUP 256 /* 8 rows of 32 bytes: from one 8-row group to the next */

/* wgmma.m64n64k256, m64n128k256 and m64n8k256 .and.popc, A and B by descriptor, added to d. */
#define B1_D8(d, i)                                                                                \
    "+r"(d[i]), "+r"(d[i + 1]), "+r"(d[i + 2]), "+r"(d[i + 3]), "+r"(d[i + 4]), "+r"(d[i + 5]),    \
        "+r"(d[i + 6]), "+r"(d[i + 7])
#define B1_D32(d, i) B1_D8(d, i), B1_D8(d, i + 8), B1_D8(d, i + 16), B1_D8(d, i + 24)

static __device__ __forceinline__ void and_popc(int (&d)[32], uint64_t a, uint64_t b)
{
    SM90A_ASM("{\n.reg .pred accumulate;\nsetp.ne.b32 accumulate, 1, 0;\n"
              "wgmma.mma_async.sync.aligned.m64n64k256.s32.b1.b1.and.popc {"
              "%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, "
              "%16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, "
              "%30, %31"
              "}, %32, %33, accumulate;\n}\n"
              : B1_D32(d, 0)
              : "l"(a), "l"(b));
}

static __device__ __forceinline__ void and_popc(int (&d)[64], uint64_t a, uint64_t b)
{
    SM90A_ASM("{\n.reg .pred accumulate;\nsetp.ne.b32 accumulate, 1, 0;\n"
              "wgmma.mma_async.sync.aligned.m64n128k256.s32.b1.b1.and.popc {"
              "%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, "
              "%16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, "
              "%30, %31, %32, %33, %34, %35, %36, %37, %38, %39, %40, %41, %42, %43, "
              "%44, %45, %46, %47, %48, %49, %50, %51, %52, %53, %54, %55, %56, %57, "
              "%58, %59, %60, %61, %62, %63"
              "}, %64, %65, accumulate;\n}\n"
              : B1_D32(d, 0), B1_D32(d, 32)
              : "l"(a), "l"(b));
}

static __device__ __forceinline__ void and_popc_n8(int (&d)[4], uint64_t a, uint64_t b)
{
    SM90A_ASM("{\n.reg .pred accumulate;\nsetp.ne.b32 accumulate, 1, 0;\n"
              "wgmma.mma_async.sync.aligned.m64n8k256.s32.b1.b1.and.popc {%0, %1, %2, %3}, %4, %5, "
              "accumulate;\n}\n"
              : "+r"(d[0]), "+r"(d[1]), "+r"(d[2]), "+r"(d[3])
              : "l"(a), "l"(b));
}

/* A tile of rows of 32 bytes in the 32-byte swizzle, as the TMA's im2col box leaves it
 * (the ones too: any swizzle of ones is ones). */
static __device__ __forceinline__ uint64_t rows32_descriptor(const void *tile)
{
    return smem_descriptor(tile, DESC_UNIT_BYTES, SWIZZLE_32B_GROUP, DESC_SWIZZLE_32B);
}

/* Where tile `tile` lies: its first pixel m0 and channel n0, its first pixel's (n, y, x). */
template <int TN> struct tma_bit_tile {
    int m0, n0, n, y, x;
    __device__ __forceinline__ tma_bit_tile(const struct conv_shape &s, int tile, int channel_tiles)
    {
        m0 = tile / channel_tiles * T_BM;
        n0 = tile % channel_tiles * TN;
        x = m0 % s.w;
        y = m0 / s.w % s.h;
        n = m0 / (s.w * s.h);
    }
};

/* The producer: every step of every tile of the block, taps in order, 256 channel bits
 * at a time; a stage is free again when the 8 consumer warps have given it back.
 * b_steps: setup's weights, a step's TN channels of 32 bytes each, steps in the order
 * (channel tile, tap, chunk). */
template <int TN>
static __device__ __forceinline__ void
load_bit_tiles(const CUtensorMap *input_map, const unsigned char *b_steps, unsigned char *ring,
               uint64_t *full, uint64_t *empty, const struct conv_shape &s, int chunks,
               int channel_tiles, int tiles)
{
    constexpr int B_BYTES = TN * T_KBYTES;
    const int r = s.ksize / 2, taps = s.ksize * s.ksize;
    ring_position<T_STAGES> at;
    int t = 0;
    for (int tile = blockIdx.x; tile < tiles; tile += gridDim.x) {
        const tma_bit_tile<TN> p(s, tile, channel_tiles);
        const unsigned char *b = b_steps + (size_t)(p.n0 / TN) * taps * chunks * B_BYTES;
        for (int tap = 0; tap < taps; tap++)
            for (int c = 0; c < chunks; c++, t++, b += B_BYTES) {
                if (t >= T_STAGES)
                    barrier_wait(&empty[at.stage], at.phase ^ 1);
                unsigned char *stage = ring + at.stage * T_STAGE_BYTES;
                /* [page: tma-loads] */
                barrier_expect_bytes(&full[at.stage], T_A_BYTES + B_BYTES);
                tma_load_im2col_4d(stage, input_map, &full[at.stage], c * T_KBYTES, p.x - r,
                                   p.y - r, p.n, (uint16_t)(tap % s.ksize),
                                   (uint16_t)(tap / s.ksize));
                bulk_load(stage + T_A_BYTES, b, B_BYTES, &full[at.stage]);
                /* [/page: tma-loads] */
                at.advance();
            }
    }
}

/* Setup's layout of the weights (untimed, once per layer): per channel tile, tap and
 * 256-bit chunk, the tile's TN channels' 32 bytes as wgmma_b_word lays them (8-row core
 * matrices, no swizzle), zeros past cout and past a pixel's words. A thread per 16 bytes. */
template <int TN>
__global__ void arrange_bit_weights(const uint32_t *__restrict__ weights,
                                    uint32_t *__restrict__ out, struct conv_shape s, int chunks,
                                    long long quads)
{
    const long long q = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    if (q >= quads)
        return;
    const int half = (int)(q % 2), row = (int)(q / 2 % TN);
    const long long step = q / (2 * TN); /* (channel tile, tap, chunk) */
    const int c = (int)(step % chunks), taps = s.ksize * s.ksize;
    const int tap = (int)(step / chunks % taps), k = (int)(step / chunks / taps) * TN + row;
    const int words = WORDS_PER_PIXEL(s.cin), w0 = c * KSTEP_WORDS + half * CHUNK_WORDS;
    uint32_t *dst = out + step * (TN * T_KBYTES / 4) + wgmma_b_word(row, half);
#pragma unroll
    for (int i = 0; i < CHUNK_WORDS; i++)
        dst[i] =
            k < s.cout && w0 + i < words ? weights[((size_t)k * taps + tap) * words + w0 + i] : 0u;
}

/* What the epilogue reads per channel of the tile, in shared memory: alpha, the bias (0
 * past cout) and each window class's base; always 128 channels from the tile's first (a
 * tile of 64 reads half of them). */
struct tile_tables {
    float scale[T_BN], shift[T_BN];
    int bases[SMEM_CLASSES][T_BN];
};

static_assert(sizeof(struct tile_tables) == T_TABLE_BYTES, "the tables fill their bytes");
/* Two blocks' shared memory (and the 1 KB the driver keeps per block) within an SM's 228 KB. */
static_assert(T_BLOCKS_PER_SM * (T_SMEM_BYTES + 1024) <= 228 * 1024, "two blocks per SM");

/* The consumers copy the tile's tables by cp.async at its start; the copies land while
 * the loop runs (wait_copies and a barrier of the consumers before the epilogue). */
static __device__ __forceinline__ void issue_tile_tables(struct tile_tables &tt,
                                                         const float *__restrict__ alpha,
                                                         const float *__restrict__ bias,
                                                         const int *__restrict__ bases,
                                                         const struct conv_shape &s, int n0)
{
    const int tid = threadIdx.x, kpad = padded_channels(s.cout);
    copy_affine_async<T_BN>(tt.scale, tt.shift, alpha, bias, s.cout, n0, tid);
    const int classes = window_classes(s.h, s.ksize) * window_classes(s.w, s.ksize);
    for (int q = tid; q < classes * (T_BN / 4); q += T_CONSUMER_THREADS) {
        const int cls = q / (T_BN / 4), k4 = n0 + q % (T_BN / 4) * 4; /* within the padded row */
        const bool inside = k4 < kpad;
        copy_16_async(
            reinterpret_cast<float *>(&tt.bases[cls][k4 - n0]),
            reinterpret_cast<const float *>(bases + (inside ? (size_t)cls * kpad + k4 : 0)),
            inside);
    }
    commit_copies();
}

/* The outputs of one pixel row of a consumer thread, half h of its accumulators
 * (acc[j * 4 + 2 h + e] at channel c0 + j * 8 + e of the tile, e = 0, 1; c0 even), pop
 * its popc(x) over the window: as 8-byte pairs where cout is even, the 4 lanes of a quad
 * writing 32 bytes of the pixel's row. */
template <int TN>
static __device__ __forceinline__ void
store_row(const int (&acc)[TN / 2], int h, int pop, int pixel, int n0, int c0,
          const struct conv_shape &s, const struct tile_tables &tt, float *__restrict__ output)
{
    const int x = pixel % s.w, y = pixel / s.w % s.h;
    const int *base = tt.bases[window_class(y, s.h, s.ksize) * window_classes(s.w, s.ksize) +
                               window_class(x, s.w, s.ksize)];
    float *row = output + (size_t)pixel * s.cout + n0;
#pragma unroll
    for (int j = 0; j < TN / 8; j++) {
        const int c = c0 + j * 8;
        const int2 b = *reinterpret_cast<const int2 *>(base + c);
        const float2 v = make_float2(
            fmaf(tt.scale[c], (float)bmma_and::sum(b.x, acc[j * 4 + 2 * h], pop), tt.shift[c]),
            fmaf(tt.scale[c + 1], (float)bmma_and::sum(b.y, acc[j * 4 + 2 * h + 1], pop),
                 tt.shift[c + 1]));
        if (n0 + c >= s.cout)
            continue;
        if (s.cout % 2 == 0) {
            *reinterpret_cast<float2 *>(row + c) = v;
        } else {
            row[c] = v.x;
            if (n0 + c + 1 < s.cout)
                row[c + 1] = v.y;
        }
    }
}

template <int TN>
__global__ void __launch_bounds__(T_THREADS, T_BLOCKS_PER_SM)
    conv2d_bmma_tma(const __grid_constant__ CUtensorMap input_map,
                    const unsigned char *__restrict__ b_steps, const float *__restrict__ alpha,
                    const float *__restrict__ bias, const int *__restrict__ bases,
                    float *__restrict__ output, struct conv_shape s, int chunks, int channel_tiles,
                    int tiles)
{
    extern __shared__ unsigned char smem_raw[];
    __shared__ uint64_t full[T_STAGES], empty[T_STAGES];
    unsigned char *ring = reinterpret_cast<unsigned char *>(
        (reinterpret_cast<uintptr_t>(smem_raw) + T_ALIGN - 1) & ~(uintptr_t)(T_ALIGN - 1));
    uint32_t *ones = reinterpret_cast<uint32_t *>(ring + T_STAGES * T_STAGE_BYTES);
    struct tile_tables &tt =
        *reinterpret_cast<struct tile_tables *>(ring + T_STAGES * T_STAGE_BYTES + T_ONES_BYTES);

    if (threadIdx.x < T_ONES_BYTES / 4)
        ones[threadIdx.x] = 0xffffffffu;
    if (threadIdx.x == 0) {
        for (int i = 0; i < T_STAGES; i++) {
            barrier_init(&full[i], 1);
            barrier_init(&empty[i], T_CONSUMER_WARPS);
        }
        barrier_init_fence();
    }
    fence_async_proxy(); /* the ones, written by threads, are read by wgmma */
    __syncthreads();

    if (threadIdx.x >= T_CONSUMER_THREADS) {
        if (threadIdx.x == T_CONSUMER_THREADS)
            load_bit_tiles<TN>(&input_map, b_steps, ring, full, empty, s, chunks, channel_tiles,
                               tiles);
        return;
    }

    const int group = threadIdx.x / 128, lane = threadIdx.x % 32, warp = threadIdx.x % 128 / 32;
    const int steps = s.ksize * s.ksize * chunks, pixels = s.n * s.h * s.w;
    const uint64_t ones_desc = rows32_descriptor(ones);
    ring_position<T_STAGES> at;
    for (int tile = blockIdx.x; tile < tiles; tile += gridDim.x) {
        const tma_bit_tile<TN> p(s, tile, channel_tiles);
        named_barrier_sync(1, T_CONSUMER_THREADS); /* the tile before's epilogue is done */
        issue_tile_tables(tt, alpha, bias, bases, s, p.n0);
        int acc[TN / 2], pop[4];
#pragma unroll
        for (int i = 0; i < TN / 2; i++)
            acc[i] = 0;
#pragma unroll
        for (int i = 0; i < 4; i++)
            pop[i] = 0;
        int previous = 0;
        for (int t = 0; t < steps; t++) {
            barrier_wait(&full[at.stage], at.phase);
            const unsigned char *stage = ring + at.stage * T_STAGE_BYTES;
            /* [page: tma-multiply] */
            const uint64_t a_desc = rows32_descriptor(stage + group * (T_A_BYTES / 2));
            wgmma_fence();
            and_popc(acc, a_desc,
                     wgmma_b_descriptor(reinterpret_cast<const uint32_t *>(stage + T_A_BYTES)));
            and_popc_n8(pop, a_desc, ones_desc);
            wgmma_commit();
            /* [/page: tma-multiply] */
            wgmma_wait<1>();
            pin_accumulators(acc);
            pin_accumulators(pop);
            give_back_previous(empty, at, previous, t > 0);
        }
        wgmma_wait<0>();
        pin_accumulators(acc);
        pin_accumulators(pop);
        if (lane == 0)
            barrier_arrive(&empty[previous]);

        wait_copies<0>();
        named_barrier_sync(1, T_CONSUMER_THREADS); /* every consumer's copies have landed */
        /* Rows lane / 4 and + 8 of the warp's 16, channels j * 8 + 2 (lane % 4) + e. */
        const int row = p.m0 + group * 64 + warp * 16 + lane / 4;
#pragma unroll
        for (int h = 0; h < 2; h++)
            if (row + 8 * h < pixels)
                store_row<TN>(acc, h, pop[2 * h], row + 8 * h, p.n0, 2 * (lane % 4), s, tt, output);
    }
}

extern "C" int bmma_tma_code_cc(void)
{
    return wgmma_built_cc();
}

/* The im2col map of the packed input: one step's 32 bytes of 128 pixels, each at its tap
 * of its window, in the 32-byte swizzle; past a pixel's words, zeros. */
static void encode_input_map(const struct conv_args *a, CUtensorMap *map)
{
    const struct conv_shape *s = &a->shape;
    const cuuint64_t bytes = WORDS_PER_PIXEL(s->cin) * sizeof(uint32_t);
    const int r = s->ksize / 2, lower[2] = {-r, -r};
    const int upper[2] = {r - (s->ksize - 1), r - (s->ksize - 1)};
    const cuuint64_t dims[4] = {bytes, (cuuint64_t)s->w, (cuuint64_t)s->h, (cuuint64_t)s->n};
    const cuuint64_t strides[3] = {bytes, bytes * s->w, bytes * s->w * s->h};
    encode_im2col_map(map, a->input, dims, strides, lower, upper, T_KBYTES, T_BM,
                      CU_TENSOR_MAP_SWIZZLE_32B, "packed input");
}

/* Where this step takes the layer: the TMA reads rows of whole 16-byte chunks, the
 * tables hold the filter's window classes, the tiles (of 64 channels at the narrowest)
 * are counted in an int. */
static bool tma_takes(const struct conv_args *a)
{
    const struct conv_shape *s = &a->shape;
    const long long tiles =
        (long long)((s->n * s->h * s->w + T_BM - 1) / T_BM) * ((s->cout + 63) / 64);
    return vector_rows(s, (const uint32_t *)a->input, (const uint32_t *)a->weights) &&
           window_classes(s->h, s->ksize) * window_classes(s->w, s->ksize) <= SMEM_CLASSES &&
           tiles <= INT_MAX;
}

static int chunks_of(const struct conv_shape *s)
{
    return (WORDS_PER_PIXEL(s->cin) + KSTEP_WORDS - 1) / KSTEP_WORDS;
}

/* The blocks that run at once: two per SM (of those a->sms leaves them). */
static int block_slots(const struct conv_args *a)
{
    int device, sms;
    CUDA_CHECK(cudaGetDevice(&device));
    CUDA_CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device));
    return T_BLOCKS_PER_SM * conv_sms(a, sms);
}

static int channel_tiles_of(const struct conv_shape *s, int bn)
{
    return (s->cout + bn - 1) / bn;
}

/* The tile's width: 128 channels, or 64 where tiles of 128 would leave half the blocks or
 * more idle (every tile of 64 then runs at once, each half the work: the few-pixel layers,
 * bnn-b1c1024s16's 16 tiles of 128 for 264 blocks). Elsewhere 64 costs more: a tile loads
 * its A whole whatever its width, and A's boxes are what the TMA unit spends its time on
 * (on bnn-b64c512s14 tiles of 64 took 33.8 us, of 128 29.5; results/h200/09_notes.md). */
static int tile_channels(const struct conv_args *a)
{
    const struct conv_shape *s = &a->shape;
    const long long m_tiles = (s->n * s->h * s->w + T_BM - 1) / T_BM;
    return 2 * m_tiles * channel_tiles_of(s, 128) <= block_slots(a) ? 64 : 128;
}

/* Scratch: bmma_classes's table of bases (whole 256-byte rows), then the weights arranged
 * for tiles of bn channels (room for the wider, which needs at least as much). */
static size_t arranged_weight_bytes(const struct conv_shape *s, int bn)
{
    return (size_t)channel_tiles_of(s, bn) * bn * s->ksize * s->ksize * chunks_of(s) * T_KBYTES;
}

extern "C" size_t bmma_tma_scratch_bytes(const struct conv_shape *s)
{
    return bmma_scratch_bytes(s) + arranged_weight_bytes(s, T_BN);
}

template <int TN> static void arrange(const struct conv_args *a)
{
    const long long quads = (long long)(arranged_weight_bytes(&a->shape, TN) / 16);
    arrange_bit_weights<TN><<<(unsigned)((quads + 255) / 256), 256, 0, a->stream>>>(
        (const uint32_t *)a->weights,
        (uint32_t *)((unsigned char *)a->scratch + bmma_scratch_bytes(&a->shape)), a->shape,
        chunks_of(&a->shape), quads);
    CUDA_CHECK_LAUNCH();
}

extern "C" void setup_conv2d_bmma_tma(const struct conv_args *a)
{
    setup_conv2d_bmma_classes(a);
    if (!tma_takes(a))
        return;
    if (tile_channels(a) == 64)
        arrange<64>(a);
    else
        arrange<128>(a);
}

extern "C" size_t bmma_tma_smem_per_block(const struct conv_shape *s)
{
    const size_t step10 = bmma_smem_per_block(s);
    return step10 > T_SMEM_BYTES ? step10 : T_SMEM_BYTES;
}

/* As many blocks as run at once, or one per tile where there are fewer. */
template <int TN> static void launch_tiles(const struct conv_args *a, const CUtensorMap &input_map)
{
    const struct conv_shape *s = &a->shape;
    const int channel_tiles = channel_tiles_of(s, TN);
    const int tiles = (s->n * s->h * s->w + T_BM - 1) / T_BM * channel_tiles;
    const int slots = block_slots(a), blocks = tiles < slots ? tiles : slots;
    CUDA_CHECK(cudaFuncSetAttribute(conv2d_bmma_tma<TN>,
                                    cudaFuncAttributeMaxDynamicSharedMemorySize, T_SMEM_BYTES));
    conv2d_bmma_tma<TN><<<blocks, T_THREADS, T_SMEM_BYTES, a->stream>>>(
        input_map, (const unsigned char *)a->scratch + bmma_scratch_bytes(s), a->scale, a->bias,
        (const int *)a->scratch, (float *)a->output, *s, chunks_of(s), channel_tiles, tiles);
    CUDA_CHECK_LAUNCH();
}

extern "C" void launch_conv2d_bmma_tma(const struct conv_args *a)
{
    if (!tma_takes(a)) {
        launch_bmma<bmma_and, fp32_values, BMMA_WGMMA>(a);
        return;
    }
    CUtensorMap input_map;
    encode_input_map(a, &input_map);
    if (tile_channels(a) == 64)
        launch_tiles<64>(a, input_map);
    else
        launch_tiles<128>(a, input_map);
}
