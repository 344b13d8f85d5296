/* Lesson 09: the main loop of the bit tensor-core kernels (conv_bmma.cu writes fp32,
 * conv_bmma_fused.cu packed signs). The layer is an implicit GEMM: M = pixels, N =
 * output channels, the reduction over (tap, channel bits): row p of A is the packed
 * input under tap t of pixel p (zero words outside the image), column k of B the
 * packed weights of channel k at tap t. One warp instruction,
 *
 *   mma.sync.aligned.m16n8k256.row.col.s32.b1.b1.s32.{and,xor}.popc
 *
 * adds popc(a AND b) or popc(a XOR b) over 256 bits for a 16 x 8 tile of outputs. A
 * k-step is 256 bits of one tap (channel words past C are zero in A and B, which
 * changes neither count).
 *
 * A block computes 128 pixels x 64 channels with 8 warps of 32 x 32. The reduction is
 * short (taps x ceil(C/256) k-steps: 9 for C = 256), so the loop is built for latency:
 * each k-step's tiles go straight from global to shared memory with cp.async into a
 * ring of STAGES buffers, three k-steps in flight while the tensor cores work on the
 * fourth, one barrier per step; rows are 48 bytes so that the 8 rows an ldmatrix reads
 * lie in 8 different 16-byte bank groups. The AND form also needs popc(x) over each
 * pixel's window: one more mma per 16 rows against an all-ones B fragment counts it
 * (popc(x AND 1...1) = popc(x); the zero words outside the image count nothing). */
#ifndef BMMA_TILE_CUH
#define BMMA_TILE_CUH

#include "binary_ops.cuh"
#include "cp_async.cuh"
#include "ldmatrix.cuh"

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
#define STAGES 4
#define STAGE_WORDS ((BM + BN) * ROW_WORDS)
#define MIN_CC 80

#if __CUDA_ARCH__ >= MIN_CC * 10
#define BMMA_SYNC(instruction, d, a, b)                                                            \
    asm volatile(instruction " {%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, {%0, %1, %2, %3};\n"  \
                 : "+r"(d[0]), "+r"(d[1]), "+r"(d[2]), "+r"(d[3])                                  \
                 : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]))
#else
#define BMMA_SYNC(instruction, d, a, b) __trap()
#endif

/* Each op: its instruction, its value at zero counts per (window class, channel)
 * (binary_ops.cuh; setup counts it), and how its count becomes the sum of x * w. */
struct bmma_and {
    static constexpr bool COUNTS_INPUT = true;
    static __device__ __forceinline__ void run(int d[4], const uint32_t a[4], const uint32_t b[2])
    {
        BMMA_SYNC("mma.sync.aligned.m16n8k256.row.col.s32.b1.b1.s32.and.popc", d, a, b);
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

/* The table of bases: [window class][channel], each class's row padded to whole blocks
 * of channels so that a block never reads past it. */
static __host__ __device__ __forceinline__ int padded_channels(int cout)
{
    return (cout + BN - 1) / BN * BN;
}

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

/* 16 bytes of a packed row into shared memory: one 16-byte copy when rows are whole
 * 16-byte chunks (VECTOR), else four 4-byte copies; zeros outside the image and past
 * the row's end. `any` is a valid address for the copies that read nothing. */
template <bool VECTOR>
static __device__ __forceinline__ void copy_chunk(uint32_t *dst, const uint32_t *row, int word,
                                                  int words, bool inside, const uint32_t *any)
{
    if (VECTOR) {
        const bool ok = inside && word < words;
        copy_16_async(reinterpret_cast<float *>(dst),
                      reinterpret_cast<const float *>(ok ? row + word : any), ok);
    } else {
#pragma unroll
        for (int q = 0; q < CHUNK_WORDS; q++) {
            const bool ok = inside && word + q < words;
            copy_4_async(reinterpret_cast<float *>(dst + q),
                         reinterpret_cast<const float *>(ok ? row + word + q : any), ok);
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

/* What a warp holds after the loop. acc[i][j][h * 2 + c]: pixel row i * 16 + lane / 4
 * + 8h of the warp's 32, channel j * 8 + 2 (lane % 4) + c of its 32; input_pop[i][h]:
 * popc(x) over the window of that pixel row (COUNTS_INPUT only). */
struct bmma_counts {
    int acc[M_FRAGS][N_FRAGS][4];
    int input_pop[M_FRAGS][2];
};

/* The counts of the block's tile at pixels m0.., channels n0..; `tiles` is
 * STAGES * STAGE_WORDS words of shared memory. Each thread copies the same rows at
 * every k-step: A row tid / 2 and, in the first 128 threads, B row tid / 2, 16 bytes
 * (half tid % 2) of each. */
template <typename Op, bool VECTOR>
static __device__ __forceinline__ void
bmma_tile(const uint32_t *__restrict__ input, const uint32_t *__restrict__ weights,
          const struct conv_shape &s, int m0, int n0, uint32_t *tiles, struct bmma_counts &out)
{
    const int tid = threadIdx.x, lane = tid % 32, warp = tid / 32;
    const int warp_m = warp % WARPS_M, warp_n = warp / WARPS_M;
    const int pixels = s.n * s.h * s.w, words = WORDS_PER_PIXEL(s.cin);
    const int taps = s.ksize * s.ksize, r = s.ksize / 2;
    const int ksteps = (words + KSTEP_WORDS - 1) / KSTEP_WORDS, steps = taps * ksteps;

    const int half = tid % 2, row = tid / 2;
    const int a_pixel = m0 + row, a_y = a_pixel / s.w % s.h, a_x = a_pixel % s.w;
    const bool a_valid = a_pixel < pixels, copies_b = row < BN;
    const bool b_valid = copies_b && n0 + row < s.cout;
    const uint32_t *b_rows = b_valid ? weights + (size_t)(n0 + row) * taps * words : weights;

    auto issue = [&](int step) {
        uint32_t *stage = tiles + step % STAGES * STAGE_WORDS;
        const int tap = step / ksteps;
        const int word = (step - tap * ksteps) * KSTEP_WORDS + half * CHUNK_WORDS;
        const int di = tap / s.ksize - r, dj = tap % s.ksize - r;
        const int y = a_y + di, x = a_x + dj;
        const bool inside = a_valid && y >= 0 && y < s.h && x >= 0 && x < s.w;
        const uint32_t *a_row = inside ? input + (size_t)(a_pixel + di * s.w + dj) * words : input;
        copy_chunk<VECTOR>(stage + row * ROW_WORDS + half * CHUNK_WORDS, a_row, word, words, inside,
                           input);
        if (copies_b)
            copy_chunk<VECTOR>(stage + (BM + row) * ROW_WORDS + half * CHUNK_WORDS,
                               b_rows + (size_t)tap * words, word, words, b_valid, weights);
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
    int ones_acc[M_FRAGS][4] = {};
    const uint32_t ones[2] = {~0u, ~0u};

    /* One commit per step, empty ones included, so that "all but STAGES - 2 groups
     * done" always means "this step's tiles are here". */
#pragma unroll
    for (int st = 0; st < STAGES - 1; st++) {
        if (st < steps)
            issue(st);
        commit_copies();
    }
    for (int step = 0; step < steps; step++) {
        wait_copies<STAGES - 2>();
        __syncthreads(); /* this step's tiles are visible; last step's buffer is free */
        if (step + STAGES - 1 < steps)
            issue(step + STAGES - 1); /* into the buffer the warps finished with last step */
        commit_copies();
        const uint32_t *tile = tiles + step % STAGES * STAGE_WORDS;
        uint32_t a[M_FRAGS][4], b[N_FRAGS][2];
#pragma unroll
        for (int i = 0; i < M_FRAGS; i++)
            ldmatrix_x4(a[i], tile + (warp_m * WARP_M + i * 16 + lane % 16) * ROW_WORDS +
                                  lane / 16 * CHUNK_WORDS);
#pragma unroll
        for (int j = 0; j < N_FRAGS; j += 2) {
            uint32_t q[4];
            const int q_row = lane / 16 * 8 + lane % 8, q_word = lane / 8 % 2 * CHUNK_WORDS;
            ldmatrix_x4(q, tile + (BM + warp_n * WARP_N + j * 8 + q_row) * ROW_WORDS + q_word);
            b[j][0] = q[0], b[j][1] = q[1], b[j + 1][0] = q[2], b[j + 1][1] = q[3];
        }
#pragma unroll
        for (int i = 0; i < M_FRAGS; i++) {
#pragma unroll
            for (int j = 0; j < N_FRAGS; j++)
                Op::run(out.acc[i][j], a[i], b[j]);
            if (Op::COUNTS_INPUT)
                Op::run(ones_acc[i], a[i], ones);
        }
    }
#pragma unroll
    for (int i = 0; i < M_FRAGS; i++)
        out.input_pop[i][0] = ones_acc[i][0], out.input_pop[i][1] = ones_acc[i][2];
}

#endif
