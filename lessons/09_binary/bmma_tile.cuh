/* Lesson 09: the bit tensor-core kernel, built up in steps (4_bmma.cu ... 8_bmma_and.cu),
 * its epilogue a parameter (fp32 values, or 9_bmma_fused.cu's packed signs). The layer is
 * an implicit GEMM: M = pixels, N = output channels, the reduction over (tap, channel
 * bits): row p of A is the packed input under tap t of pixel p (zero words outside the
 * image), column k of B the packed weights of channel k at tap t. One warp instruction,
 *
 *   mma.sync.aligned.m16n8k256.row.col.s32.b1.b1.s32.{and,xor}.popc
 *
 * adds popc(a AND b) or popc(a XOR b) over 256 bits for a 16 x 8 tile of outputs.
 *
 * A block computes 128 pixels x 64 channels with 8 warps of 32 x 32. A stage of the
 * loop is 256 channel bits of TAPS neighbouring taps of one filter row (di, dj0 ...
 * dj0 + TAPS - 1): in NHWC the inputs those taps read for the block's 128 consecutive
 * pixels are the 127 + TAPS consecutive pixel rows starting at m0 + di * w + dj0, so a
 * stage holds those rows once and the TAPS x 64 weight rows, and tap dj0 + d reads A
 * rows d ... d + 127 of it. Where a tap falls outside the image (the row of the flat
 * range belongs to another image row), the lane points ldmatrix at a row of zeros
 * instead: its pixel's y and the taps valid for its x are counted once per block
 * (pixel_rows). Rows are 48 bytes so that the 8 consecutive rows an ldmatrix reads lie
 * in 8 different 16-byte bank groups. The AND form also needs popc(x) over each
 * pixel's window: one more mma per 16 rows against an all-ones B fragment counts it
 * (popc(x AND 1...1) = popc(x); the zero rows outside the image count nothing).
 *
 * The steps, each one idea added to the one before (enum bmma_step):
 *   BMMA_FIRST    a stage is one tap; each thread loads its chunks of it and stores
 *                 them into one shared buffer, a barrier, the mma, a barrier; the
 *                 epilogue adds up, for every output, the weight counts of the taps
 *                 inside the image (tap_bases)
 *   BMMA_RING     the stages go by cp.async into a ring of STAGES buffers, two in
 *                 flight while the tensor cores work on the third: one barrier a stage
 *   BMMA_CLASSES  the border correction O(1): one base per window class and channel,
 *                 counted by setup (class_bases)
 *   BMMA_ROWS     a stage is 3 taps of a filter row: their 130 input rows copied once
 *                 (not 128 per tap), one barrier per 3 taps
 *   BMMA_TABLES   alpha, the bias and the block's columns of the table of bases copied
 *                 into shared memory with the first stage (issue_epilogue_tables)
 *   BMMA_WGMMA    Hopper's warpgroup MMA, wgmma.m64n32k256 .and.popc (sm_90a): a
 *                 warpgroup's 4 warps give it their A fragments from registers (ldmatrix,
 *                 as before) and it reads the warpgroup's 32 channels of B from shared
 *                 memory through a descriptor, so B's stage rows lie as wgmma's 8-row
 *                 core matrices (wgmma_b_word); one tap's wgmmas run while the warps
 *                 load the next tap's fragments */
#ifndef BMMA_TILE_CUH
#define BMMA_TILE_CUH

#include "binary_ops.cuh"
#include "conv_args.h"
#include "cp_async.cuh"
#include "cuda_check.h"
#include "ldmatrix.cuh"
#include "mma_m16n8.cuh"
#include "wgmma.cuh"

#define BM 128 /* pixels per block */
#define BN 64  /* output channels per block */
#define BMMA_THREADS 256
#define WARPS_M 4
#define WARP_M 32
#define WARP_N 32
#define M_FRAGS (WARP_M / 16)
#define N_FRAGS (WARP_N / 8)
#define KSTEP_WORDS 8 /* 256 bits */
#define CHUNK_WORDS 4 /* 16 bytes */
#define ROW_WORDS 12  /* a k-step (8 words) + 4 words of padding: 48-byte rows */
#define ROW_TAPS 3    /* taps per stage from BMMA_ROWS on */
/* The rows of a stage of `taps` taps: the input rows its taps read, the weight rows. */
#define A_ROWS(taps) (BM + (taps)-1)
#define B_ROWS(taps) ((taps)*BN)
#define STAGES 3
#define STAGE_WORDS ((A_ROWS(ROW_TAPS) + B_ROWS(ROW_TAPS)) * ROW_WORDS) /* the largest stage */
#define BASES_BLOCK 256
#define MIN_CC 80

/* [page: steps] */
enum bmma_step { BMMA_FIRST, BMMA_RING, BMMA_CLASSES, BMMA_ROWS, BMMA_TABLES, BMMA_WGMMA };
/* [/page: steps] */

#if __CUDA_ARCH__ >= MIN_CC * 10
#define BMMA_SYNC(instruction, d, a, b) MMA_M16N8(instruction, "r", d, a, b)
#else
#define BMMA_SYNC(instruction, d, a, b) __trap()
#endif

/* wgmma.m64n32k256: a warp's 16 x 256-bit A fragment in registers (mma.m16n8k256's
 * layout), the warpgroup's 32 x 256-bit B through a descriptor, 16 accumulators per
 * thread laid out as 4 of mma.m16n8's; added to what d holds. */
#if CONV_HAVE_WGMMA
#define WGMMA_B1(instruction, d, a, b_desc)                                                        \
    asm volatile("{\n.reg .pred accumulate;\nsetp.ne.b32 accumulate, 1, 0;\n" instruction          \
                 " {%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15},"        \
                 " {%16, %17, %18, %19}, %20, accumulate;\n}\n"                                    \
                 : "+r"(d[0]), "+r"(d[1]), "+r"(d[2]), "+r"(d[3]), "+r"(d[4]), "+r"(d[5]),         \
                   "+r"(d[6]), "+r"(d[7]), "+r"(d[8]), "+r"(d[9]), "+r"(d[10]), "+r"(d[11]),       \
                   "+r"(d[12]), "+r"(d[13]), "+r"(d[14]), "+r"(d[15])                              \
                 : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "l"(b_desc))
#else
#define WGMMA_B1(instruction, d, a, b_desc) __trap()
#endif

/* Each op: its instruction, its value at zero counts per (window class, channel)
 * (binary_ops.cuh; setup counts it), and how its count becomes the sum of x * w. */
/* [page: bmma-and-op] */
struct bmma_and {
    static constexpr bool COUNTS_INPUT = true;
    static __device__ __forceinline__ void run(int d[4], const uint32_t a[4], const uint32_t b[2])
    {
        BMMA_SYNC("mma.sync.aligned.m16n8k256.row.col.s32.b1.b1.s32.and.popc", d, a, b);
    }
    static __device__ __forceinline__ void run_warpgroup(int (&d)[16], const uint32_t a[4],
                                                         uint64_t b_desc)
    {
        WGMMA_B1("wgmma.mma_async.sync.aligned.m64n32k256.s32.b1.b1.and.popc", d, a, b_desc);
    }
    static __device__ __forceinline__ int base(int channels, int taps, int inside_weight_pop,
                                               int weight_pop)
    {
        (void)weight_pop;
        return and_sum_base(channels, taps, inside_weight_pop);
    }
    static __device__ __forceinline__ int sum(int base, int count, int input_pop)
    {
        return sum_from_and_base(base, count, input_pop);
    }
};
/* [/page: bmma-and-op] */

struct bmma_xor {
    static constexpr bool COUNTS_INPUT = false;
    static __device__ __forceinline__ void run(int d[4], const uint32_t a[4], const uint32_t b[2])
    {
        BMMA_SYNC("mma.sync.aligned.m16n8k256.row.col.s32.b1.b1.s32.xor.popc", d, a, b);
    }
    static __device__ __forceinline__ int base(int channels, int taps, int inside_weight_pop,
                                               int weight_pop)
    {
        return xor_sum_base(channels, taps, weight_pop - inside_weight_pop);
    }
    static __device__ __forceinline__ int sum(int base, int count, int input_pop)
    {
        (void)input_pop;
        return sum_from_xor_base(base, count);
    }
};

/* The tables setup counts, [tap or window class][channel], each row padded to whole
 * blocks of channels so that a block never reads past it. */
static __host__ __device__ __forceinline__ int padded_channels(int cout)
{
    return (cout + BN - 1) / BN * BN;
}

/* The table of bases, from BMMA_CLASSES on. */
static __host__ __device__ __forceinline__ size_t base_table_ints(const struct conv_shape *s)
{
    return (size_t)window_classes(s->h, s->ksize) * window_classes(s->w, s->ksize) *
           padded_channels(s->cout);
}

/* One thread per (window class, channel): the popcount of the weights under the
 * class's window and over all taps, folded into the op's base. Untimed (setup). */
template <typename Op>
__global__ void count_window_class_bases(const uint32_t *__restrict__ weights,
                                         int *__restrict__ bases, struct conv_shape s)
{
    const int kpad = padded_channels(s.cout), classes_w = window_classes(s.w, s.ksize);
    const long long at = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    if (at >= (long long)base_table_ints(&s))
        return;
    const int cls = (int)(at / kpad), k = (int)(at % kpad);
    if (k >= s.cout) {
        bases[at] = 0;
        return;
    }
    const struct tap_window t = tap_window_at(window_class_row(cls / classes_w, s.h, s.ksize),
                                              window_class_row(cls % classes_w, s.w, s.ksize), &s);
    const int words = WORDS_PER_PIXEL(s.cin);
    int inside = 0, total = 0;
    for (int i = 0; i < s.ksize; i++)
        for (int j = 0; j < s.ksize; j++) {
            const uint32_t *tap =
                weights + ((size_t)k * s.ksize * s.ksize + i * s.ksize + j) * words;
            int pop = 0;
            for (int w = 0; w < words; w++)
                pop += __popc(tap[w]);
            total += pop;
            if (i >= t.i0 && i < t.i1 && j >= t.j0 && j < t.j1)
                inside += pop;
        }
    bases[at] = Op::base(s.cin, valid_taps(t), inside, total);
}

/* Setup's launch of it, into bases (base_table_ints of them). */
template <typename Op>
static void count_bases(const struct conv_args *a, const uint32_t *weights, int *bases)
{
    const long long ints = (long long)base_table_ints(&a->shape);
    count_window_class_bases<Op>
        <<<(unsigned)((ints + BASES_BLOCK - 1) / BASES_BLOCK), BASES_BLOCK, 0, a->stream>>>(
            weights, bases, a->shape);
    CUDA_CHECK_LAUNCH();
}

/* 16 bytes of a packed row into shared memory: one 16-byte copy when rows are whole
 * 16-byte chunks (VECTOR), else four 4-byte copies; zeros outside the image and past
 * the row's end. ASYNC: by cp.async; else loaded into registers and stored, the thread
 * waiting for its loads. at: the word index of the chunk in the tensor, an int (tensors
 * of up to 2^31 words); where a copy reads nothing its source is the tensor's first word. */
template <bool VECTOR, bool ASYNC>
static __device__ __forceinline__ void copy_chunk(uint32_t *dst, const uint32_t *tensor, int at,
                                                  int word, int words, bool inside)
{
    if (VECTOR) {
        const bool ok = inside && word < words;
        const uint32_t *src = tensor + (ok ? (unsigned)at : 0u);
        if (ASYNC)
            copy_16_async(reinterpret_cast<float *>(dst), reinterpret_cast<const float *>(src), ok);
        else
            *reinterpret_cast<uint4 *>(dst) =
                ok ? __ldg(reinterpret_cast<const uint4 *>(src)) : make_uint4(0u, 0u, 0u, 0u);
    } else {
#pragma unroll
        for (int q = 0; q < CHUNK_WORDS; q++) {
            const bool ok = inside && word + q < words;
            const uint32_t *src = tensor + (ok ? (unsigned)(at + q) : 0u);
            if (ASYNC)
                copy_4_async(reinterpret_cast<float *>(dst + q),
                             reinterpret_cast<const float *>(src), ok);
            else
                dst[q] = ok ? __ldg(src) : 0u;
        }
    }
}

/* Rows of whole 16-byte chunks (and aligned tensors) take the 16-byte copies. */
static inline bool vector_rows(const struct conv_shape *s, const uint32_t *input,
                               const uint32_t *weights)
{
    return WORDS_PER_PIXEL(s->cin) % CHUNK_WORDS == 0 && (uintptr_t)input % 16 == 0 &&
           (uintptr_t)weights % 16 == 0;
}

/* A block's shared memory: the ring of stages (the steps before BMMA_RING use the first
 * buffer, those before BMMA_ROWS the first 192 rows of a buffer), a row of zeros for
 * the taps outside the image, per pixel row of the block what the loop and the
 * epilogue need of its position, counted once: y (the row's), the taps dj inside the
 * image for its x (bit dj) and (from BMMA_CLASSES on) its window class; after the loop,
 * its popc(x) (AND form); and (BMMA_TABLES) what the epilogue reads per channel of the
 * block, alpha and the bias (0 past cout). After it, in the same dynamic allocation,
 * the block's 64 columns of the table of bases, one row per window class
 * (issue_epilogue_tables). */
struct bmma_smem {
    uint32_t ring[STAGES][STAGE_WORDS];
    uint32_t zeros[KSTEP_WORDS];
    int y[BM], window_class[BM], input_pop[BM];
    unsigned dj_mask[BM];
    float scale[BN], shift[BN];
};
static_assert(sizeof(struct bmma_smem) % 16 == 0, "the table of bases follows, 16-byte aligned");

/* The block's columns of the table of bases go to shared memory when there are at most
 * this many window classes (any image with a filter of up to 7x7: 12.25 KB, 60 KB a
 * block in all, still 3 blocks per SM); with more, the epilogue reads them from global
 * memory as before. */
#define SMEM_CLASSES 49

static __host__ __device__ __forceinline__ bool bases_in_smem(const struct conv_shape *s,
                                                              const int *bases)
{
    return window_classes(s->h, s->ksize) * window_classes(s->w, s->ksize) <= SMEM_CLASSES &&
           (uintptr_t)bases % 16 == 0;
}

/* BMMA_TABLES's dynamic shared memory: bmma_smem and the block's table of bases. */
static inline size_t bmma_smem_bytes(const struct conv_shape *s, const int *bases)
{
    const size_t classes = (size_t)window_classes(s->h, s->ksize) * window_classes(s->w, s->ksize);
    return sizeof(struct bmma_smem) + (bases_in_smem(s, bases) ? classes * BN * sizeof(int) : 0);
}

/* Thread tid (below 2 WIDTH) copies by cp.async alpha of the tile's channel n0 + tid into
 * scale[tid], or (tid >= WIDTH) the bias of channel n0 + tid - WIDTH into its shift, 0
 * without a bias; a channel past cout reads zeros. */
template <int WIDTH>
static __device__ __forceinline__ void
copy_affine_async(float *scale, float *shift, const float *__restrict__ alpha,
                  const float *__restrict__ bias, int cout, int n0, int tid)
{
    const int c = tid % WIDTH, k = n0 + c;
    const bool ok = k < cout;
    if (tid < WIDTH)
        copy_4_async(&scale[c], ok ? alpha + k : alpha, ok);
    else if (bias)
        copy_4_async(&shift[c], ok ? bias + k : bias, ok);
    else
        shift[c] = 0.0f;
}

/* What the epilogue reads that does not depend on the loop, copied into shared memory
 * with the first stage (these copies join its group, so the loop's first wait and barrier
 * cover them): alpha and the bias of the block's channels and, when it fits, the block's
 * columns of the table of bases. The profile of the version before found the epilogue
 * waiting on five dependent round trips to L2 per warp (alpha and bias, then one class's
 * bases per pixel row), 40 % of the kernel's stall samples; here they overlap the loop. */
static __device__ __forceinline__ void issue_epilogue_tables(const float *__restrict__ alpha,
                                                             const float *__restrict__ bias,
                                                             const int *__restrict__ bases,
                                                             const struct conv_shape &s, int n0,
                                                             struct bmma_smem &sm, int *table)
{
    const int tid = threadIdx.x, kpad = padded_channels(s.cout);
    if (tid < 2 * BN) /* threads 0-63 alpha, 64-127 the bias */
        copy_affine_async<BN>(sm.scale, sm.shift, alpha, bias, s.cout, n0, tid);
    /* [page: epilogue-tables] */
    if (!bases_in_smem(&s, bases))
        return;
    const int chunks = window_classes(s.h, s.ksize) * window_classes(s.w, s.ksize) * (BN / 4);
    for (int c = tid; c < chunks; c += BMMA_THREADS) /* 16 chunks of 4 bases per class */
        copy_16_async(
            reinterpret_cast<float *>(table + c * 4),
            reinterpret_cast<const float *>(bases + (size_t)(c / 16) * kpad + n0 + c % 16 * 4),
            true);
    /* [/page: epilogue-tables] */
}

/* The block's pixel rows, once, before the loop: the only divisions of the kernel. The
 * window class only where the epilogue reads it (CLASSES); the row of zeros. */
template <bool CLASSES>
static __device__ __forceinline__ void pixel_rows(const struct conv_shape &s, int m0,
                                                  struct bmma_smem &sm)
{
    const int tid = threadIdx.x, pixels = s.n * s.h * s.w;
    const int ksize = s.ksize, r = ksize / 2;
    if (tid < BM) {
        const int p = m0 + tid;
        int y = 0, cls = 0;
        unsigned mask = 0;
        if (p < pixels) {
            const int x = p % s.w;
            y = p / s.w % s.h;
            for (int j = 0; j < ksize; j++)
                mask |= (unsigned)(x + j - r) < (unsigned)s.w ? 1u << j : 0u;
            if (CLASSES)
                cls = window_class(y, s.h, ksize) * window_classes(s.w, ksize) +
                      window_class(x, s.w, ksize);
        }
        sm.y[tid] = y, sm.dj_mask[tid] = mask;
        if (CLASSES)
            sm.window_class[tid] = cls;
    }
    if (tid < KSTEP_WORDS)
        sm.zeros[tid] = 0;
}

/* What a warp holds after the loop. acc[i][j][h * 2 + c]: pixel row i * 16 + lane / 4
 * + 8h of the warp's 32, channel j * 8 + 2 (lane % 4) + c of its 32; input_pop[i][h]:
 * popc(x) over the window of that pixel row (COUNTS_INPUT only). */
struct bmma_counts {
    int acc[M_FRAGS][N_FRAGS][4];
    int input_pop[M_FRAGS][2];
};

/* Fragment i's counts as one wgmma.m64n32's 16 accumulators (the same layout). */
static __device__ __forceinline__ int (&accumulators(struct bmma_counts &c, int i))[N_FRAGS * 4]
{
    return reinterpret_cast<int(&)[N_FRAGS * 4]>(c.acc[i]);
}

/* Where the loop is: filter row ti, first tap dj0 of the stage, channel word kw. Steps
 * go through the channel words fastest, then the groups of taps of a row, then rows. */
struct stage_at {
    int ti, dj0, kw;
    __device__ __forceinline__ void next(int taps, int ksize, int words_padded)
    {
        kw += KSTEP_WORDS;
        if (kw == words_padded) {
            kw = 0;
            dj0 += taps;
            if (dj0 >= ksize)
                dj0 = 0, ti++;
        }
    }
};

/* BMMA_WGMMA's stage keeps its B rows as wgmma reads them without a descriptor swizzle
 * (K-major): core matrices of 8 rows x 16 bytes, the two 16-byte halves of 8 rows side by
 * side (the descriptor's leading offset, 128 bytes), 8-row groups 256 bytes apart (its
 * stride offset). wgmma_b_word: where half h of B row b lies, in words from the first. */
#define CORE_ROWS 8
#define CORE_WORDS (CORE_ROWS * CHUNK_WORDS)

/* [page: wgmma-b-word] */
static __device__ __forceinline__ int wgmma_b_word(int b, int half)
{
    return (b / CORE_ROWS * 2 + half) * CORE_WORDS + b % CORE_ROWS * CHUNK_WORDS;
}
/* [/page: wgmma-b-word] */

/* The descriptor of the B rows from `rows` on (wgmma_b_word's layout). */
static __device__ __forceinline__ uint64_t wgmma_b_descriptor(const uint32_t *rows)
{
    return smem_descriptor(rows, CORE_WORDS * 4, 2 * CORE_WORDS * 4, DESC_SWIZZLE_NONE);
}

/* BMMA_WGMMA's multiply of one tap: each warp's fragments i of A, the warpgroup's B
 * rows from b_rows on, one wgmma.m64n32k256 per fragment into its counts, committed as
 * one group. The tap before's group may still run, adding into the same counts. */
template <typename Op>
static __device__ __forceinline__ void
wgmma_tap(struct bmma_counts &out, const uint32_t (&a)[M_FRAGS][4], const uint32_t *b_rows)
{
    /* [page: wgmma-tap] */
    const uint64_t b_desc = wgmma_b_descriptor(b_rows);
    wgmma_fence();
#pragma unroll
    for (int i = 0; i < M_FRAGS; i++)
        Op::run_warpgroup(accumulators(out, i), a[i], b_desc);
    wgmma_commit();
    /* [/page: wgmma-tap] */
}

/* The counts of the block's tile at pixels m0.., channels n0.., stages of TAPS taps,
 * copied by cp.async into the ring (ASYNC) or by loads and stores into one buffer.
 * pixel_rows has filled the block's table. Each thread copies the same 16-byte chunks
 * of every stage: half tid % 2 of stage rows tid / 2 + 128 q, each an A row (pixel
 * m0 + (ti - r) w + dj0 - r + row, zeros outside the tensor) or a B row (channel
 * n0 + b % 64 at tap dj0 + b / 64 of filter row ti, b = row - A_ROWS); rows the stage's
 * taps do not read are not copied. A filter of up to 31 taps a row: the valid taps of a
 * pixel's x are bits of an int. */
template <typename Op, int TAPS, bool ASYNC, bool VECTOR, bool WGMMA>
static __device__ __forceinline__ void
bmma_tile(const uint32_t *__restrict__ input, const uint32_t *__restrict__ weights,
          const struct conv_shape &s, int m0, int n0, struct bmma_smem &sm, struct bmma_counts &out)
{
    constexpr int STAGE_CHUNKS = (A_ROWS(TAPS) + B_ROWS(TAPS)) * KSTEP_WORDS / CHUNK_WORDS;
    constexpr int CHUNKS_PER_THREAD = (STAGE_CHUNKS + BMMA_THREADS - 1) / BMMA_THREADS;
    const int tid = threadIdx.x, lane = tid % 32, warp = tid / 32;
    __builtin_assume(tid < BMMA_THREADS); /* so each chunk's A or B role is known at compile time */
    const int warp_m = warp % WARPS_M, warp_n = warp / WARPS_M;
    const int pixels = s.n * s.h * s.w, words = WORDS_PER_PIXEL(s.cin);
    const int ksize = s.ksize, taps = ksize * ksize, r = ksize / 2;
    const int words_padded = (words + KSTEP_WORDS - 1) / KSTEP_WORDS * KSTEP_WORDS;
    const int groups = (ksize + TAPS - 1) / TAPS;
    const int steps = ksize * groups * (words_padded / KSTEP_WORDS);

    struct stage_at issued = {0, 0, 0};
    auto issue = [&](int step) {
        /* [page: stage-issue] */
        uint32_t *stage = sm.ring[ASYNC ? step % STAGES : 0];
        const int width = min(TAPS, ksize - issued.dj0);
        const int a_first = m0 + (issued.ti - r) * s.w + issued.dj0 - r;
        const int word = issued.kw + tid % 2 * CHUNK_WORDS;
        const int b_first = (issued.ti * ksize + issued.dj0) * words + word;
#pragma unroll
        for (int q = 0; q < CHUNKS_PER_THREAD; q++) {
            const int row = tid / 2 + q * (BMMA_THREADS / 2); /* this thread's chunks */
            uint32_t *dst = stage + row * ROW_WORDS + tid % 2 * CHUNK_WORDS;
            if (row < A_ROWS(TAPS)) { /* zeros in the rows past those the stage's taps read */
                const int p = a_first + row;
                copy_chunk<VECTOR, ASYNC>(dst, input, p * words + word, word, words,
                                          row < BM + width - 1 && (unsigned)p < (unsigned)pixels);
            } else if (row < A_ROWS(TAPS) + width * BN) {
                const int b = row - A_ROWS(TAPS), k = n0 + b % BN; /* tap dj0 + b / BN */
                if (WGMMA)
                    dst = stage + A_ROWS(TAPS) * ROW_WORDS + wgmma_b_word(b, tid % 2);
                copy_chunk<VECTOR, ASYNC>(dst, weights, (k * taps + b / BN) * words + b_first, word,
                                          words, k < s.cout);
            }
        }
        issued.next(TAPS, ksize, words_padded);
        /* [/page: stage-issue] */
    };

#pragma unroll
    for (int i = 0; i < M_FRAGS; i++) {
#pragma unroll
        for (int j = 0; j < N_FRAGS; j++)
#pragma unroll
            for (int e = 0; e < 4; e++)
                out.acc[i][j][e] = 0;
        out.input_pop[i][0] = out.input_pop[i][1] = 0;
    }
    /* popc(x) of the warp's fragment i = warp_n only: the other warp of the same rows
     * counts the other one (the block's 2 x 32 channels share each pixel row). */
    static_assert(M_FRAGS == BN / WARP_N, "one fragment of popc(x) per warp");
    int ones_acc[4] = {};
    const uint32_t ones[2] = {~0u, ~0u};

    /* One commit per step, empty ones included, so that "all but STAGES - 2 groups
     * done" always means "this step's tiles are here". */
    if (ASYNC) {
#pragma unroll
        for (int st = 0; st < STAGES - 1; st++) {
            if (st < steps)
                issue(st);
            commit_copies();
        }
    }
    __syncthreads(); /* the pixel rows' table */

    /* The A rows this lane gives ldmatrix (row lane % 16 of fragment i, half lane / 16),
     * their y and the taps valid for their x. */
    int a_y[M_FRAGS];
    unsigned a_mask[M_FRAGS];
    const int a_row0 = warp_m * WARP_M + lane % 16, a_word = lane / 16 * CHUNK_WORDS;
#pragma unroll
    for (int i = 0; i < M_FRAGS; i++)
        a_y[i] = sm.y[a_row0 + i * 16], a_mask[i] = sm.dj_mask[a_row0 + i * 16];
    const int b_row0 = A_ROWS(TAPS) + warp_n * WARP_N + lane / 16 * 8 + lane % 8;
    const int b_word = lane / 8 % 2 * CHUNK_WORDS;
    const uint32_t *zeros = sm.zeros + a_word;

    struct stage_at at = {0, 0, 0};
    for (int step = 0; step < steps; step++) {
        /* [page: ring-wait] */
        if (ASYNC) {
            wait_copies<STAGES - 2>();
            if (WGMMA)
                fence_async_proxy(); /* visible to wgmma's reads too */
            __syncthreads();         /* this step's tiles are visible; last step's buffer is free */
            if (step + STAGES - 1 < steps)
                issue(step + STAGES - 1); /* into the buffer the warps finished with last step */
            commit_copies();
        } else {
            issue(step);
            __syncthreads(); /* this step's tiles are visible */
        }
        /* [/page: ring-wait] */
        const uint32_t *tile = sm.ring[ASYNC ? step % STAGES : 0];
        const int width = min(TAPS, ksize - at.dj0);
        /* Bit d: tap dj0 + d of this row is inside the image for the lane's pixel. */
        unsigned inside[M_FRAGS];
#pragma unroll
        for (int i = 0; i < M_FRAGS; i++)
            inside[i] = (unsigned)(a_y[i] + at.ti - r) < (unsigned)s.h ? a_mask[i] >> at.dj0 : 0u;
            /* [page: tap-mma] */
#pragma unroll
        for (int d = 0; d < TAPS; d++) {
            if (d >= width)
                break;
            uint32_t a[M_FRAGS][4];
#pragma unroll
            for (int i = 0; i < M_FRAGS; i++)
                ldmatrix_x4(a[i], inside[i] >> d & 1
                                      ? tile + (a_row0 + i * 16 + d) * ROW_WORDS + a_word
                                      : zeros);
            if constexpr (WGMMA) { /* the warpgroup's 32 channels at tap dj0 + d */
                wgmma_tap<Op>(out, a,
                              tile + A_ROWS(TAPS) * ROW_WORDS +
                                  wgmma_b_word(d * BN + warp_n * WARP_N, 0));
            } else {
                uint32_t b[N_FRAGS][2];
#pragma unroll
                for (int j = 0; j < N_FRAGS; j += 2) {
                    uint32_t q[4];
                    ldmatrix_x4(q, tile + (b_row0 + d * BN + j * 8) * ROW_WORDS + b_word);
                    b[j][0] = q[0], b[j][1] = q[1], b[j + 1][0] = q[2], b[j + 1][1] = q[3];
                }
#pragma unroll
                for (int i = 0; i < M_FRAGS; i++)
#pragma unroll
                    for (int j = 0; j < N_FRAGS; j++)
                        Op::run(out.acc[i][j], a[i], b[j]);
            }
            if (Op::COUNTS_INPUT) { /* a branch: a register array indexed at run time
                                       would go to local memory */
                if (warp_n == 0)
                    Op::run(ones_acc, a[0], ones);
                else
                    Op::run(ones_acc, a[1], ones);
            }
        }
        /* [/page: tap-mma] */
        if (WGMMA) { /* the buffer the next step refills is this one */
            wgmma_wait<0>();
#pragma unroll
            for (int i = 0; i < M_FRAGS; i++)
                pin_accumulators(accumulators(out, i));
        }
        if (!ASYNC)
            __syncthreads(); /* every warp is done with the buffer the next step refills */
        at.next(TAPS, ksize, words_padded);
    }
    if (!Op::COUNTS_INPUT)
        return;
    /* Each quad holds 8 equal columns: its first lane publishes the row's count. */
    const int pop_row = warp_m * WARP_M + warp_n * 16 + lane / 4;
    if (lane % 4 == 0)
        sm.input_pop[pop_row] = ones_acc[0], sm.input_pop[pop_row + 8] = ones_acc[2];
    __syncthreads();
#pragma unroll
    for (int i = 0; i < M_FRAGS; i++)
#pragma unroll
        for (int h = 0; h < 2; h++)
            out.input_pop[i][h] = sm.input_pop[warp_m * WARP_M + i * 16 + lane / 4 + 8 * h];
}

/* The epilogue: a thread's outputs are at channels c0 + j * 8 + e of the block. */
static __device__ __forceinline__ int thread_channel(void)
{
    const int lane = threadIdx.x % 32, warp = threadIdx.x / 32;
    return warp / WARPS_M * WARP_N + 2 * (lane % 4);
}

/* The epilogue's per-thread constants: alpha[k] and bias[k] of its 2 * N_FRAGS channels. */
struct channel_affine {
    float scale[N_FRAGS][2], shift[N_FRAGS][2];
};

/* From global memory (the steps before BMMA_TABLES): k0 = n0 + c0. */
static __device__ __forceinline__ struct channel_affine
affine_from(const float *__restrict__ alpha, const float *__restrict__ bias, int cout, int k0)
{
    struct channel_affine a;
#pragma unroll
    for (int j = 0; j < N_FRAGS; j++)
#pragma unroll
        for (int e = 0; e < 2; e++) {
            const int k = k0 + j * 8 + e;
            a.scale[j][e] = k < cout ? alpha[k] : 0.0f;
            a.shift[j][e] = k < cout && bias ? bias[k] : 0.0f;
        }
    return a;
}

/* From the block's copy in shared memory (BMMA_TABLES). */
static __device__ __forceinline__ struct channel_affine affine_at(const struct bmma_smem &sm,
                                                                  int c0)
{
    struct channel_affine a;
#pragma unroll
    for (int j = 0; j < N_FRAGS; j++)
#pragma unroll
        for (int e = 0; e < 2; e++)
            a.scale[j][e] = sm.scale[c0 + j * 8 + e], a.shift[j][e] = sm.shift[c0 + j * 8 + e];
    return a;
}

/* Where the epilogue finds the op's base of each of its outputs: at(row, c0, base) gives
 * the bases of pixel row `row` of the block at channels c0 + j * 8 and the next
 * (base[j].x, .y). Two ways, one per step of the ladder. */

/* Before BMMA_CLASSES: the AND form's base counted per output from the weight counts of
 * every tap, pops[tap * kpad + channel] (setup, 4_bmma.cu): the taps inside the image
 * for the row's y and x (its bits in the pixel rows' table) add theirs, ksize^2 pairs of
 * loads per output pair inside the image, fewer on its border. */
struct tap_bases {
    const int *pops; /* at the block's first channel */
    int kpad;
    __device__ __forceinline__ void at(const struct bmma_smem &sm, const struct conv_shape &s,
                                       int row, int c0, int2 (&base)[N_FRAGS]) const
    {
        /* The inside taps: rows i0 <= ti < i1 by y, columns the bits of the row's mask. */
        const int y = sm.y[row], r = s.ksize / 2;
        const unsigned mask = sm.dj_mask[row];
        const int i0 = max(r - y, 0), i1 = min(s.h + r - y, s.ksize);
        const int j0 = max(__ffs(mask) - 1, 0), j1 = 32 - __clz(mask); /* 0, 0 past the image */
#pragma unroll
        for (int j = 0; j < N_FRAGS; j++)
            base[j] = make_int2(0, 0);
            /* and_sum_base(C, taps, inside_weight_pop) = taps C - 2 inside_weight_pop, a tap
             * at a time */
#pragma unroll 1
        for (int ti = i0; ti < i1; ti++)
#pragma unroll 1
            for (int tj = j0; tj < j1; tj++) {
                const int *tap = pops + (ti * s.ksize + tj) * kpad + c0;
#pragma unroll
                for (int j = 0; j < N_FRAGS; j++) {
                    const int2 pop = *reinterpret_cast<const int2 *>(tap + j * 8);
                    base[j].x += and_sum_base(s.cin, 1, pop.x);
                    base[j].y += and_sum_base(s.cin, 1, pop.y);
                }
            }
    }
};

/* From BMMA_CLASSES on: the row's window class's bases, class c's base of channel
 * n0 + k at rows[c * stride + k], in global memory (the table, its padded stride) or,
 * from BMMA_TABLES on, in shared memory (the block's copy, stride BN). A kernel calls its
 * epilogue (forceinline) once with each, under a branch on bases_in_smem, so that each
 * inlined copy knows which memory it reads. Through one pointer that could be either, the
 * compiler emitted generic loads (LD.E, waited on like global loads) and kept each one
 * after the stores before it: 16 round trips in a row per thread (the profile of the
 * version before). Every base is read before any is used, so the loads go out together:
 * the table is padded to whole blocks of channels, so channels past cout are read too,
 * and only their stores are skipped. */
struct class_bases {
    const int *rows;
    int stride;
    __device__ __forceinline__ void at(const struct bmma_smem &sm, const struct conv_shape &s,
                                       int row, int c0, int2 (&base)[N_FRAGS]) const
    {
        (void)s;
        const int *bases = rows + sm.window_class[row] * stride;
#pragma unroll
        for (int j = 0; j < N_FRAGS; j++)
            base[j] = *reinterpret_cast<const int2 *>(bases + c0 + j * 8);
    }
};

/* The layer's outputs alpha * sum + bias of pixel row (i, h) at the thread's channels
 * c0 + j * 8 and the next (v[j]), from the counts and the row's bases. */
template <typename Op>
static __device__ __forceinline__ void
row_outputs(const struct channel_affine &a, const struct bmma_counts &c,
            const int2 (&base)[N_FRAGS], int i, int h, float2 (&v)[N_FRAGS])
{
    const int pop = c.input_pop[i][h];
#pragma unroll
    for (int j = 0; j < N_FRAGS; j++) {
        const int *count = c.acc[i][j] + 2 * h;
        v[j] = make_float2(
            fmaf(a.scale[j][0], (float)Op::sum(base[j].x, count[0], pop), a.shift[j][0]),
            fmaf(a.scale[j][1], (float)Op::sum(base[j].y, count[1], pop), a.shift[j][1]));
    }
}

/* The fp32 epilogue (every step, bmma_xor, pack_bmma_and): each pixel row's outputs
 * from its bases, stored as 8-byte pairs, the 4 lanes of a quad writing one 32-byte
 * sector of the pixel's row. */
template <typename Op> struct fp32_values {
    typedef float out;
    template <typename Bases>
    static __device__ __forceinline__ void
    store(const struct bmma_smem &sm, const struct bmma_counts &c, const struct channel_affine &a,
          const Bases &bases, float *__restrict__ output, const struct conv_shape &s, int m0,
          int n0)
    {
        const int lane = threadIdx.x % 32, warp = threadIdx.x / 32;
        const int c0 = thread_channel(), k0 = n0 + c0;
        const int pixels = s.n * s.h * s.w;
#pragma unroll
        for (int i = 0; i < M_FRAGS; i++)
#pragma unroll
            for (int h = 0; h < 2; h++) {
                const int pixel = m0 + warp % WARPS_M * WARP_M + i * 16 + lane / 4 + 8 * h;
                if (pixel >= pixels)
                    continue;
                int2 base[N_FRAGS];
                bases.at(sm, s, pixel - m0, c0, base);
                float2 v[N_FRAGS];
                row_outputs<Op>(a, c, base, i, h, v);
                float *row = output + (size_t)pixel * s.cout;
#pragma unroll
                for (int j = 0; j < N_FRAGS; j++) {
                    const int k = k0 + j * 8;
                    if (k >= s.cout)
                        continue;
                    if (s.cout % 2 == 0) { /* k is even: the pair is 8-byte aligned */
                        *reinterpret_cast<float2 *>(row + k) = v[j];
                    } else {
                        row[k] = v[j].x;
                        if (k + 1 < s.cout)
                            row[k + 1] = v[j].y;
                    }
                }
            }
    }
};

/* The kernel at step STEP: the loop, then Epilogue<Op>::store writes the block's
 * outputs from the counts into an output of Epilogue<Op>::out. border: what setup
 * counted for the border correction, the weight counts per tap (tap_bases) before
 * BMMA_CLASSES, the table of bases (class_bases) from it on. Three blocks (24 warps)
 * per SM: at most 80 registers. bnn-b16c256s28's 392 blocks then run in one wave on
 * 132 SMs (at two per SM, in two). BMMA_WGMMA takes two: within 80 registers ptxas
 * serialises the wgmmas (waits for each before the next), for want of registers to keep
 * a tap's A fragments and the accumulators in flight while the next tap's load. */
template <typename Op, template <typename> class Epilogue, int STEP, bool VECTOR>
__global__ void __launch_bounds__(BMMA_THREADS, STEP >= BMMA_WGMMA ? 2 : 3)
    conv2d_bmma(const uint32_t *__restrict__ input, const uint32_t *__restrict__ weights,
                const float *__restrict__ alpha, const float *__restrict__ bias,
                const int *__restrict__ border, typename Epilogue<Op>::out *__restrict__ output,
                struct conv_shape s)
{
    static_assert(STEP >= BMMA_CLASSES || Op::COUNTS_INPUT, "tap_bases is the AND form's");
    extern __shared__ __align__(16) unsigned char smem[];
    struct bmma_smem &sm = *reinterpret_cast<struct bmma_smem *>(smem);
    const int m0 = blockIdx.x * BM, n0 = blockIdx.y * BN;
    const int kpad = padded_channels(s.cout);
    int *table = reinterpret_cast<int *>(smem + sizeof(struct bmma_smem));
    /* [page: step-kernel] */
    if (STEP >= BMMA_TABLES)
        issue_epilogue_tables(alpha, bias, border, s, n0, sm, table);
    pixel_rows<STEP >= BMMA_CLASSES>(s, m0, sm);
    struct bmma_counts c;
    bmma_tile<Op, STEP >= BMMA_ROWS ? ROW_TAPS : 1, STEP >= BMMA_RING, VECTOR, STEP >= BMMA_WGMMA>(
        input, weights, s, m0, n0, sm, c);
    /* [/page: step-kernel] */
    const int c0 = thread_channel();
    if constexpr (STEP < BMMA_TABLES) {
        const struct channel_affine a = affine_from(alpha, bias, s.cout, n0 + c0);
        if constexpr (STEP < BMMA_CLASSES)
            Epilogue<Op>::store(sm, c, a, tap_bases{border + n0, kpad}, output, s, m0, n0);
        else
            Epilogue<Op>::store(sm, c, a, class_bases{border + n0, kpad}, output, s, m0, n0);
    } else {
        const struct channel_affine a = affine_at(sm, c0);
        if (bases_in_smem(&s, border))
            Epilogue<Op>::store(sm, c, a, class_bases{table, BN}, output, s, m0, n0);
        else
            Epilogue<Op>::store(sm, c, a, class_bases{border + n0, kpad}, output, s, m0, n0);
    }
}

/* The layer on packed input and weights at step STEP, with setup's border tables. */
template <typename Op, template <typename> class Epilogue, int STEP>
static void launch_bmma(const struct conv_args *a, const uint32_t *input, const uint32_t *weights,
                        const int *border, typename Epilogue<Op>::out *output)
{
    const struct conv_shape *s = &a->shape;
    auto kernel = vector_rows(s, input, weights) ? conv2d_bmma<Op, Epilogue, STEP, true>
                                                 : conv2d_bmma<Op, Epilogue, STEP, false>;
    const dim3 grid((s->n * s->h * s->w + BM - 1) / BM, (s->cout + BN - 1) / BN);
    const size_t smem = STEP >= BMMA_TABLES ? bmma_smem_bytes(s, border) : sizeof(struct bmma_smem);
    CUDA_CHECK(
        cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)smem));
    kernel<<<grid, BMMA_THREADS, smem, a->stream>>>(input, weights, a->scale, a->bias, border,
                                                    output, *s);
    CUDA_CHECK_LAUNCH();
}

/* The same on the launch's arguments, as every step but pack_bmma_and takes them:
 * a->input and a->weights packed, setup's border tables in a->scratch, a->output in the
 * epilogue's format. */
template <typename Op, template <typename> class Epilogue, int STEP>
static void launch_bmma(const struct conv_args *a)
{
    launch_bmma<Op, Epilogue, STEP>(a, (const uint32_t *)a->input, (const uint32_t *)a->weights,
                                    (const int *)a->scratch,
                                    (typename Epilogue<Op>::out *)a->output);
}

#endif
