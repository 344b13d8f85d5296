/* Lesson 09, variants "bmma_and", "bmma_xor" and "pack_bmma_and": the layer as an
 * implicit GEMM on the bit tensor cores. M = pixels, N = output channels, and the
 * reduction runs over (tap, channel bits): row p of A is the packed input under tap t
 * of pixel p (zero words outside the image), column k of B the packed weights of
 * channel k at tap t. One warp instruction,
 *
 *   mma.sync.aligned.m16n8k256.row.col.s32.b1.b1.s32.{and,xor}.popc
 *
 * adds popc(a AND b) or popc(a XOR b) over 256 bits for a 16 x 8 tile of outputs.
 * A k-step is 256 bits of one tap (channel words past C are zero in A and B, which
 * changes neither count). The counts become sums of x * w in the epilogue
 * (binary_ops.cuh):
 *   XOR: zero words outside the image add popc(w) mismatches; subtract them
 *        (per-tap weight popcounts, counted by setup);
 *   AND: needs popc(x) over the valid taps too: a small kernel counts it per pixel
 *        before the GEMM, inside the timed run.
 * Hopper runs .and.popc natively and emulates .xor.popc; both are here to measure it.
 *
 * A block computes 128 pixels x 64 channels with 4 warps of 64 x 32; each k-step's
 * tiles go through registers into one of two shared-memory buffers (one barrier per
 * step), with 48-byte rows so that the 8 rows an ldmatrix reads lie in 8 different
 * 16-byte bank groups.
 *
 *   build/bin/09_binary --preset bnn-b64c512s14 --variant bmma_and
 */
#include "binary_ops.cuh"
#include "cuda_check.h"
#include "kernels.h"
#include "ldmatrix.cuh"

#define BM 128 /* pixels per block */
#define BN 64  /* output channels per block */
#define BMMA_THREADS 128
#define WARP_M 64
#define WARP_N 32
#define M_FRAGS (WARP_M / 16)
#define N_FRAGS (WARP_N / 8)
#define KSTEP_WORDS 8 /* 256 bits */
#define CHUNK_WORDS 4 /* 16 bytes */
#define ROW_WORDS 12  /* a k-step (8 words) + 4 words of padding: 48-byte rows */
#define TAP_POP_BLOCK 256
#define MIN_CC 80

/* Scratch, in this order: [packed input][packed weights] (pack_bmma_and only), the
 * popcount of every weight tap [cout][taps], each channel's total [cout], and the
 * popcount of every pixel's window [pixels] (AND). The packed tensors come first so
 * that they keep the 16-byte alignment of the allocation. */
struct bmma_scratch {
    uint32_t *packed_input, *packed_weights;
    int *tap_pop, *channel_pop, *window_pop;
};

static size_t packed_words(const struct conv_shape *s, bool input)
{
    const size_t rows = input ? (size_t)s->n * s->h * s->w : (size_t)s->cout * s->ksize * s->ksize;
    return rows * WORDS_PER_PIXEL(s->cin);
}

static size_t counts_bytes(const struct conv_shape *s)
{
    const size_t taps = (size_t)s->ksize * s->ksize;
    return ((size_t)s->cout * (taps + 1) + (size_t)s->n * s->h * s->w) * sizeof(int);
}

static struct bmma_scratch carve(const struct conv_args *a, bool packs)
{
    const struct conv_shape *s = &a->shape;
    struct bmma_scratch b;
    uint32_t *words = (uint32_t *)a->scratch;
    b.packed_input = packs ? words : NULL;
    b.packed_weights = packs ? words + packed_words(s, true) : NULL;
    int *counts = (int *)(packs ? words + packed_words(s, true) + packed_words(s, false) : words);
    b.tap_pop = counts;
    b.channel_pop = counts + (size_t)s->cout * s->ksize * s->ksize;
    b.window_pop = b.channel_pop + s->cout;
    return b;
}

/* One thread per output channel: the popcount of each tap's weight words, and
 * their total. */
__global__ void count_weight_bits(const uint32_t *__restrict__ weights, int *__restrict__ tap_pop,
                                  int *__restrict__ channel_pop, struct conv_shape s)
{
    const int k = blockIdx.x * blockDim.x + threadIdx.x;
    if (k >= s.cout)
        return;
    const int words = WORDS_PER_PIXEL(s.cin), taps = s.ksize * s.ksize;
    int total = 0;
    for (int t = 0; t < taps; t++) {
        int pop = 0;
        for (int w = 0; w < words; w++)
            pop += __popc(weights[((size_t)k * taps + t) * words + w]);
        tap_pop[(size_t)k * taps + t] = pop;
        total += pop;
    }
    channel_pop[k] = total;
}

/* One thread per pixel: popc(x) over the input words of its window's valid taps. */
__global__ void __launch_bounds__(TAP_POP_BLOCK)
    count_window_bits(const uint32_t *__restrict__ input, int *__restrict__ window_pop,
                      struct conv_shape s)
{
    const int pixel = blockIdx.x * blockDim.x + threadIdx.x;
    if (pixel >= s.n * s.h * s.w)
        return;
    const int x = pixel % s.w, y = pixel / s.w % s.h, r = s.ksize / 2;
    const int words = WORDS_PER_PIXEL(s.cin);
    const struct tap_window t = tap_window_at(y, x, &s);
    int pop = 0;
    for (int i = t.i0; i < t.i1; i++)
        for (int j = t.j0; j < t.j1; j++) {
            const uint32_t *src = input + (size_t)(pixel + (i - r) * s.w + j - r) * words;
            for (int w = 0; w < words; w++)
                pop += __popc(src[w]);
        }
    window_pop[pixel] = pop;
}

/* ldmatrix_x4 (ldmatrix.cuh) on 16-byte rows of packed bits: lane l receives word
 * l % 4 of row l / 4 of each 8x16-byte matrix. For b1 operands that is the m16n8k256
 * fragment: A's a0..a3 are (rows 0-7, words 0-3), (rows 8-15, words 0-3), (rows 0-7,
 * words 4-7), (rows 8-15, words 4-7); B's b0, b1 are words 0-3 and 4-7 of 8 channels. */
#if __CUDA_ARCH__ >= MIN_CC * 10
#define BMMA_SYNC(instruction, d, a, b)                                                            \
    asm volatile(instruction " {%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, {%0, %1, %2, %3};\n"  \
                 : "+r"(d[0]), "+r"(d[1]), "+r"(d[2]), "+r"(d[3])                                  \
                 : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]))
#else
#define BMMA_SYNC(instruction, d, a, b) __trap()
#endif

/* Each op: its instruction, and how its count becomes the sum of x * w. */
struct bmma_and {
    static constexpr bool NEEDS_WINDOW_POP = true;
    static __device__ __forceinline__ void run(int d[4], const uint32_t a[4], const uint32_t b[2])
    {
        BMMA_SYNC("mma.sync.aligned.m16n8k256.row.col.s32.b1.b1.s32.and.popc", d, a, b);
    }
    static __device__ __forceinline__ int sum(int channels, int taps, int count, int window_pop,
                                              int inside_weight_pop, int channel_pop)
    {
        (void)channel_pop;
        return sum_from_and_popc(channels, taps, count, window_pop, inside_weight_pop);
    }
};

struct bmma_xor {
    static constexpr bool NEEDS_WINDOW_POP = false;
    static __device__ __forceinline__ void run(int d[4], const uint32_t a[4], const uint32_t b[2])
    {
        BMMA_SYNC("mma.sync.aligned.m16n8k256.row.col.s32.b1.b1.s32.xor.popc", d, a, b);
    }
    static __device__ __forceinline__ int sum(int channels, int taps, int count, int window_pop,
                                              int inside_weight_pop, int channel_pop)
    {
        (void)window_pop;
        return sum_from_xor_popc(channels, taps, count, channel_pop - inside_weight_pop);
    }
};

/* 16 bytes of row `words_at` (or zeros): four words, or one 16-byte load when the
 * row length is a multiple of four words (then a chunk never straddles its end). */
template <bool VECTOR>
static __device__ __forceinline__ uint4 load_chunk(const uint32_t *__restrict__ row, int word,
                                                   int words)
{
    if (!row || word >= words)
        return make_uint4(0, 0, 0, 0);
    if (VECTOR)
        return *reinterpret_cast<const uint4 *>(row + word);
    uint4 v;
    v.x = row[word];
    v.y = word + 1 < words ? row[word + 1] : 0u;
    v.z = word + 2 < words ? row[word + 2] : 0u;
    v.w = word + 3 < words ? row[word + 3] : 0u;
    return v;
}

/* Each thread copies the same rows at every k-step: A chunks tid and tid + 128
 * (row = chunk / 2, half = chunk % 2), B chunk tid. */
#define A_LOADS 2

/* The minimum of one block per SM lifts ptxas's default register target: without it
 * the XOR kernel spilled 40 bytes (its epilogue) at 128 registers. */
template <typename Op, bool VECTOR>
__global__ void __launch_bounds__(BMMA_THREADS, 1)
    conv2d_bmma(const uint32_t *__restrict__ input, const uint32_t *__restrict__ weights,
                const float *__restrict__ alpha, const float *__restrict__ bias,
                float *__restrict__ output, struct bmma_scratch counts, struct conv_shape s)
{
    __shared__ __align__(16) uint32_t tiles[2][(BM + BN) * ROW_WORDS];
    const int tid = threadIdx.x, lane = tid % 32, warp = tid / 32;
    const int warp_m = warp % 2, warp_n = warp / 2;
    const int pixels = s.n * s.h * s.w, words = WORDS_PER_PIXEL(s.cin);
    const int taps = s.ksize * s.ksize, r = s.ksize / 2;
    const int m0 = blockIdx.x * BM, n0 = blockIdx.y * BN;
    const int ksteps = (words + KSTEP_WORDS - 1) / KSTEP_WORDS;

    /* The pixels this thread copies A rows for, decoded once. */
    int a_pixel[A_LOADS], a_y[A_LOADS], a_x[A_LOADS];
#pragma unroll
    for (int l = 0; l < A_LOADS; l++) {
        a_pixel[l] = m0 + (tid + l * BMMA_THREADS) / 2;
        a_y[l] = a_pixel[l] / s.w % s.h;
        a_x[l] = a_pixel[l] % s.w;
    }
    const int b_channel = n0 + tid / 2, half = tid % 2;

    uint4 a_regs[A_LOADS], b_regs;
    auto load = [&](int step) {
        const int tap = step / ksteps, word = step % ksteps * KSTEP_WORDS + half * CHUNK_WORDS;
        const int di = tap / s.ksize - r, dj = tap % s.ksize - r;
#pragma unroll
        for (int l = 0; l < A_LOADS; l++) {
            const int y = a_y[l] + di, x = a_x[l] + dj;
            const bool inside = a_pixel[l] < pixels && y >= 0 && y < s.h && x >= 0 && x < s.w;
            const uint32_t *row =
                inside ? input + (size_t)(a_pixel[l] + di * s.w + dj) * words : NULL;
            a_regs[l] = load_chunk<VECTOR>(row, word, words);
        }
        const uint32_t *row =
            b_channel < s.cout ? weights + ((size_t)b_channel * taps + tap) * words : NULL;
        b_regs = load_chunk<VECTOR>(row, word, words);
    };
    auto store = [&](uint32_t *tile) {
#pragma unroll
        for (int l = 0; l < A_LOADS; l++) {
            const int chunk = tid + l * BMMA_THREADS;
            *reinterpret_cast<uint4 *>(tile + (chunk / 2) * ROW_WORDS + chunk % 2 * CHUNK_WORDS) =
                a_regs[l];
        }
        *reinterpret_cast<uint4 *>(tile + (BM + tid / 2) * ROW_WORDS + half * CHUNK_WORDS) = b_regs;
    };

    int acc[M_FRAGS][N_FRAGS][4] = {};
    const int steps = taps * ksteps;
    load(0);
    for (int step = 0; step < steps; step++) {
        uint32_t *tile = tiles[step % 2];
        store(tile);
        __syncthreads(); /* one barrier: the other buffer's readers finished last step */
        if (step + 1 < steps)
            load(step + 1); /* in flight while the tensor cores work */
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
        for (int i = 0; i < M_FRAGS; i++)
#pragma unroll
            for (int j = 0; j < N_FRAGS; j++)
                Op::run(acc[i][j], a[i], b[j]);
    }

    /* acc[i][j][h * 2 + c]: pixel row i * 16 + lane / 4 + 8h, channel j * 8 + 2(lane % 4) + c. */
#pragma unroll
    for (int i = 0; i < M_FRAGS; i++)
#pragma unroll
        for (int h = 0; h < 2; h++) {
            const int pixel = m0 + warp_m * WARP_M + i * 16 + lane / 4 + 8 * h;
            if (pixel >= pixels)
                continue;
            const struct tap_window t = tap_window_at(pixel / s.w % s.h, pixel % s.w, &s);
            const bool interior = all_taps_inside(t, s.ksize);
            const int window_pop = Op::NEEDS_WINDOW_POP ? counts.window_pop[pixel] : 0;
#pragma unroll
            for (int j = 0; j < N_FRAGS; j++)
#pragma unroll
                for (int c = 0; c < 2; c++) {
                    const int k = n0 + warp_n * WARP_N + j * 8 + 2 * (lane % 4) + c;
                    if (k >= s.cout)
                        continue;
                    int inside_pop = counts.channel_pop[k];
                    if (!interior) {
                        inside_pop = 0;
                        for (int ti = t.i0; ti < t.i1; ti++)
                            for (int tj = t.j0; tj < t.j1; tj++)
                                inside_pop += counts.tap_pop[(size_t)k * taps + ti * s.ksize + tj];
                    }
                    const int sum = Op::sum(s.cin, valid_taps(t), acc[i][j][h * 2 + c], window_pop,
                                            inside_pop, counts.channel_pop[k]);
                    output[(size_t)pixel * s.cout + k] = binary_output(alpha, bias, k, sum);
                }
        }
}

template <typename Op>
static void launch_bmma(const struct conv_args *a, const uint32_t *input, const uint32_t *weights,
                        const struct bmma_scratch &counts)
{
    const struct conv_shape *s = &a->shape;
    const int pixels = s->n * s->h * s->w;
    if (Op::NEEDS_WINDOW_POP) {
        count_window_bits<<<(pixels + TAP_POP_BLOCK - 1) / TAP_POP_BLOCK, TAP_POP_BLOCK, 0,
                            a->stream>>>(input, counts.window_pop, *s);
        CUDA_CHECK_LAUNCH();
    }
    const bool vector = WORDS_PER_PIXEL(s->cin) % CHUNK_WORDS == 0 && (uintptr_t)input % 16 == 0 &&
                        (uintptr_t)weights % 16 == 0;
    auto kernel = vector ? conv2d_bmma<Op, true> : conv2d_bmma<Op, false>;
    const dim3 grid((pixels + BM - 1) / BM, (s->cout + BN - 1) / BN);
    kernel<<<grid, BMMA_THREADS, 0, a->stream>>>(input, weights, a->scale, a->bias, output_f32(a),
                                                 counts, *s);
    CUDA_CHECK_LAUNCH();
}

static void count_weights(const struct conv_args *a, const uint32_t *weights,
                          const struct bmma_scratch &counts)
{
    const int threads = 128, cout = a->shape.cout;
    count_weight_bits<<<(cout + threads - 1) / threads, threads, 0, a->stream>>>(
        weights, counts.tap_pop, counts.channel_pop, a->shape);
    CUDA_CHECK_LAUNCH();
}

extern "C" const char *bmma_unsupported(const struct gpu_info *gpu)
{
    if (gpu->cc_major * 10 + gpu->cc_minor < MIN_CC)
        return "needs compute capability 8.0 (b1 mma.m16n8k256, .and.popc); sm_75 has only "
               "m8n8k128 .xor.popc";
    /* A build without sm_80+ code runs here as JIT-compiled compute_75 PTX, in which
     * the instruction is a trap. */
    struct cudaFuncAttributes attr;
    CUDA_CHECK(cudaFuncGetAttributes(&attr, conv2d_bmma<bmma_and, true>));
    if (attr.ptxVersion < MIN_CC)
        return "built without sm_80+ code (CMAKE_CUDA_ARCHITECTURES below 80)";
    return NULL;
}

extern "C" size_t bmma_scratch_bytes(const struct conv_shape *s)
{
    return counts_bytes(s);
}

extern "C" void setup_conv2d_bmma(const struct conv_args *a)
{
    count_weights(a, (const uint32_t *)a->weights, carve(a, false));
}

extern "C" void launch_conv2d_bmma_and(const struct conv_args *a)
{
    launch_bmma<bmma_and>(a, (const uint32_t *)a->input, (const uint32_t *)a->weights,
                          carve(a, false));
}

extern "C" void launch_conv2d_bmma_xor(const struct conv_args *a)
{
    launch_bmma<bmma_xor>(a, (const uint32_t *)a->input, (const uint32_t *)a->weights,
                          carve(a, false));
}

extern "C" size_t pack_bmma_scratch_bytes(const struct conv_shape *s)
{
    return (packed_words(s, true) + packed_words(s, false)) * sizeof(uint32_t) + counts_bytes(s);
}

extern "C" void setup_conv2d_pack_bmma_and(const struct conv_args *a)
{
    const struct bmma_scratch b = carve(a, true);
    const struct conv_shape *s = &a->shape;
    enqueue_pack_signs(weights_f32(a), b.packed_weights, (long long)s->cout * s->ksize * s->ksize,
                       s->cin, a->stream);
    count_weights(a, b.packed_weights, b);
}

extern "C" void launch_conv2d_pack_bmma_and(const struct conv_args *a)
{
    const struct bmma_scratch b = carve(a, true);
    const struct conv_shape *s = &a->shape;
    enqueue_pack_signs(input_f32(a), b.packed_input, (long long)s->n * s->h * s->w, s->cin,
                       a->stream);
    launch_bmma<bmma_and>(a, b.packed_input, b.packed_weights, b);
}
