/* The implicit GEMM of an NHWC convolution, and how its tiles reach shared memory.
 *
 *   A (M x K)  row p = output pixel (n, y, x), column k = tap (r, s) and channel c,
 *              k = (r * S + s) * C + c:  A[p][k] = input[n][y + r - R/2][x + s - S/2][c],
 *              zero outside the image. Never stored: gathered from the input.
 *   B (K x N)  B[k][j] = weights[j][r][s][c]: in KRSC order, column j of B is row j of
 *              the weights, k contiguous.
 *   out[p][j] = bias[j] + sum_k A[p][k] B[k][j]: NHWC, the output channel contiguous.
 *
 * M = N*H*W, N = K (output channels), K = R*S*C. In NHWC the C channels of one tap are
 * contiguous, so A's k runs along memory as B's does, and a tile of either is rows of
 * 16-byte chunks: CHUNKS chunks of E = 16 / sizeof(element) values per row.
 *
 * A chunk lies within one tap when C is a multiple of E (every U-Net layer but the
 * first); it is then one 16-byte cp.async. Otherwise (C = 3 on the first layer, C = 33
 * in the tests) each element is gathered on its own, and the tile is the same. */
#ifndef GEMM_TILES_CUH
#define GEMM_TILES_CUH

#include <stdint.h>

#include <type_traits>

#include "conv_problem.h"
#include "cp_async.cuh"
#include "mma_ops.cuh"

/* The raw bits of an element (fp16, bf16: 16; fp32: 32), for loads that never look at
 * values. */
template <typename Elem>
using raw_bits = typename std::conditional<sizeof(Elem) == 2, uint16_t, uint32_t>::type;

/* Where chunk `chunk` of tile row `row` lives, in chunks from the tile's start.
 * SWIZZLE: the chunk index is XORed with bits of the row so that the 8 rows an
 * ldmatrix reads at one chunk column fall in 8 different 16-byte bank groups (a
 * 128-byte line holds 8 chunks: 128 / (16 * CHUNKS) rows). Without it, rows that
 * share a line offset share banks: a 4-way conflict for 64-byte rows. */
/* [page: swizzle] */
template <int CHUNKS, bool SWIZZLE>
static __host__ __device__ __forceinline__ int tile_chunk(int row, int chunk)
{
    static_assert(CHUNKS == 2 || CHUNKS == 4 || CHUNKS == 8, "rows of 32, 64 or 128 bytes");
    if (!SWIZZLE)
        return row * CHUNKS + chunk;
    return row * CHUNKS + (chunk ^ (row / (8 / CHUNKS) % CHUNKS));
}
/* [/page: swizzle] */

/* A 16-byte chunk's copy: cp.async when it lies inside, zeros when outside. The
 * source must be a valid address either way. */
static __device__ __forceinline__ void copy_chunk(uint4 *dst, const void *src, bool inside)
{
    copy_16_async(reinterpret_cast<float *>(dst), static_cast<const float *>(src), inside);
}

/* The tiles' rows and chunk column one thread loads, and the tap and channel its
 * chunk has reached along k. Thread t loads chunk t % CHUNKS of rows t / CHUNKS,
 * t / CHUNKS + THREADS / CHUNKS, ...: a warp fills whole rows, neighbouring bytes.
 * Raw is the element's bits (uint16_t or uint32_t): loads never look at values. */
template <typename Raw, int BM, int BN, int CHUNKS, int THREADS> struct tile_loader {
    static constexpr int E = CHUNK_BYTES / sizeof(Raw); /* values per chunk */
    static constexpr int BK = CHUNKS * E;               /* k per tile */
    static constexpr int ROW_STEP = THREADS / CHUNKS;
    static constexpr int A_ROWS = BM / ROW_STEP, B_ROWS = BN / ROW_STEP;
    static_assert(BM % ROW_STEP == 0 && BN % ROW_STEP == 0, "whole rows per thread");

    const Raw *input, *weights;
    struct conv_shape s;
    int depth;       /* K = R * S * C */
    int first_pixel; /* of the thread's first A row, (n*H + y)*W + x; row i adds i * ROW_STEP */
    int first_out;   /* output channel of its first B row */
    int kc;          /* the thread's chunk column */
    int k;           /* the first k of its chunk in the current tile */
    int r, dx, c;    /* that k as tap row, tap column minus the radius, channel */
    int y[A_ROWS], x[A_ROWS]; /* its A rows' output pixels */

    __device__ tile_loader(const Raw *in, const Raw *w, const struct conv_shape &shape, int p0,
                           int j0)
        : input(in), weights(w), s(shape)
    {
        depth = s.ksize * s.ksize * s.cin;
        kc = threadIdx.x % CHUNKS;
        const int row = threadIdx.x / CHUNKS;
        const int pixels = s.n * s.h * s.w;
        first_pixel = p0 + row;
        first_out = j0 + row;
#pragma unroll
        for (int i = 0; i < A_ROWS; i++) {
            const int p = first_pixel + i * ROW_STEP;
            /* A row past the last pixel reads as all zeros: its y is never inside. */
            y[i] = p < pixels ? p / s.w % s.h : -(1 << 30);
            x[i] = p % s.w;
        }
        k = kc * E;
        r = 0;
        dx = -(s.ksize / 2);
        c = k;
        normalise();
    }

    /* The next tile along k. The vector path carries its tap and channel along; the
     * element path finds them per element. */
    template <bool VECTOR> __device__ __forceinline__ void advance()
    {
        k += BK;
        if (VECTOR) {
            c += BK;
            normalise();
        }
    }

    /* Carries c past the channel count into the next taps. */
    __device__ __forceinline__ void normalise()
    {
        while (c >= s.cin) {
            c -= s.cin;
            if (++dx > s.ksize / 2) {
                dx = -(s.ksize / 2);
                r++;
            }
        }
    }

    /* Element k of A row i, and whether it is inside the image (and the matrix). */
    __device__ __forceinline__ bool a_source(int i, int kk, int rr, int ddx, int cc,
                                             const Raw **src) const
    {
        const int dy = rr - s.ksize / 2;
        const bool inside = kk < depth && (unsigned)(y[i] + dy) < (unsigned)s.h &&
                            (unsigned)(x[i] + ddx) < (unsigned)s.w;
        const int pixel = first_pixel + i * ROW_STEP + dy * s.w + ddx;
        *src = input + (inside ? (size_t)pixel * s.cin + cc : 0);
        return inside;
    }

    /* The current tile of A and of B^T (BN rows of k) into a_tile and b_tile. */
    template <bool SWIZZLE>
    __device__ __forceinline__ void load_vector(uint4 *a_tile, uint4 *b_tile)
    {
        const int row = threadIdx.x / CHUNKS;
#pragma unroll
        for (int i = 0; i < A_ROWS; i++) {
            const Raw *src;
            const bool inside = a_source(i, k, r, dx, c, &src);
            copy_chunk(a_tile + tile_chunk<CHUNKS, SWIZZLE>(row + i * ROW_STEP, kc), src, inside);
        }
#pragma unroll
        for (int i = 0; i < B_ROWS; i++) {
            const int out = first_out + i * ROW_STEP;
            const bool inside = out < s.cout && k < depth;
            const Raw *src = weights + (inside ? (size_t)out * depth + k : 0);
            copy_chunk(b_tile + tile_chunk<CHUNKS, SWIZZLE>(row + i * ROW_STEP, kc), src, inside);
        }
    }

    /* The same tiles one element at a time, for a C (and so K) that is not a whole
     * number of chunks: the chunk may cross taps, and the rows are not 16-byte
     * aligned in memory. Plain loads and stores: the next barrier publishes them. */
    template <bool SWIZZLE>
    __device__ __forceinline__ void load_scalar(uint4 *a_tile, uint4 *b_tile)
    {
        const int row = threadIdx.x / CHUNKS;
        for (int e = 0; e < E; e++) {
            const int kk = k + e;
            const int tap = kk / s.cin, cc = kk % s.cin;
            const int rr = tap / s.ksize, ddx = tap % s.ksize - s.ksize / 2;
#pragma unroll
            for (int i = 0; i < A_ROWS; i++) {
                const Raw *src;
                const bool inside = a_source(i, kk, rr, ddx, cc, &src);
                Raw *dst = reinterpret_cast<Raw *>(
                    a_tile + tile_chunk<CHUNKS, SWIZZLE>(row + i * ROW_STEP, kc));
                dst[e] = inside ? *src : Raw(0);
            }
#pragma unroll
            for (int i = 0; i < B_ROWS; i++) {
                const int out = first_out + i * ROW_STEP;
                const bool inside = out < s.cout && kk < depth;
                Raw *dst = reinterpret_cast<Raw *>(
                    b_tile + tile_chunk<CHUNKS, SWIZZLE>(row + i * ROW_STEP, kc));
                dst[e] = inside ? weights[(size_t)out * depth + kk] : Raw(0);
            }
        }
    }

    template <bool VECTOR, bool SWIZZLE>
    __device__ __forceinline__ void load(uint4 *a_tile, uint4 *b_tile)
    {
        if (VECTOR)
            load_vector<SWIZZLE>(a_tile, b_tile);
        else
            load_scalar<SWIZZLE>(a_tile, b_tile);
    }
};

/* Whether every chunk of this problem can be one aligned 16-byte copy. */
static inline bool chunks_are_vectors(const struct conv_shape *s, int elem_bytes, const void *input,
                                      const void *weights)
{
    const int per_chunk = CHUNK_BYTES / elem_bytes;
    return s->cin % per_chunk == 0 && (uintptr_t)input % CHUNK_BYTES == 0 &&
           (uintptr_t)weights % CHUNK_BYTES == 0;
}

#endif
