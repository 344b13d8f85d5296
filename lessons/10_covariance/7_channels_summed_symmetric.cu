/* Lesson 10, variant channels_summed_symmetric: channels_summed_factored reading half of
 * gamma. Every gamma block is a covariance, symmetric in (p, p'), and so is mu x mu,
 * so G[p'][p] = G[p][p']: the first pass computes G in 32 x 32 tiles on and above the
 * diagonal only, reading those tiles of gamma (a little over half of it), and writes
 * each tile twice: as it is, and transposed through shared memory into its mirror
 * below the diagonal, both coalesced. The second pass (channel_sum.cuh) is
 * channels_summed_factored's. Like factored_symmetric, it needs a symmetric gamma. */
#include "channel_sum.cuh"
#include "grid_chunks.cuh"

#define TILE 32
/* Input channels whose loads a thread issues together: twice channels_summed's, as
 * the grid is half as large. */
#define CI_BATCH 8
/* Threads across a tile row: each covers 4 of its columns. */
#define ROW_THREADS (TILE / 4)

static_assert(TILE * ROW_THREADS == SUM_BLOCK, "a block covers one tile");

/* The four values a thread owns in row p of G, at columns first + col[v]; those past P
 * are dropped (with V = 4 the four are wholly inside or outside). */
template <int V>
__device__ __forceinline__ void store_owned(float *gb, size_t P, size_t p, size_t first,
                                            const int (&col)[4], const float (&x)[4])
{
    if (p >= P || first + col[0] >= P)
        return;
    if constexpr (V == 4) {
        store_floats(gb + p * P + first + col[0], x);
    } else {
#pragma unroll
        for (int v = 0; v < 4; v++)
            if (first + col[v] < P)
                gb[p * P + first + col[v]] = x[v];
    }
}

/* Tile (tr, tc) of G for every tc >= tr: block (tc, tr, b). Thread (row, quad) owns the
 * tile's row `row` and, with V = 4, its columns 4*quad .. 4*quad+3 (one float4 each);
 * with V = 1 (P not a multiple of 4) the columns quad + 8*v, one float each. Elements
 * past P are computed on the last row or column (a valid address) and not stored. */
template <int V>
__global__ void __launch_bounds__(SUM_BLOCK)
    cov_sum_channels_upper(float *__restrict__ g, const float *__restrict__ gamma,
                           const float *__restrict__ mu, struct conv_shape s)
{
    let_dependent_grid_start();
    __shared__ float mirror[TILE][TILE + 1];
    const size_t P = cov_in_positions(&s);
    const int tiles = ceil_div((int)P, TILE);
    const int tc = blockIdx.x, row = threadIdx.x / ROW_THREADS, quad = threadIdx.x % ROW_THREADS;
    int col[4];
#pragma unroll
    for (int v = 0; v < 4; v++)
        col[v] = V == 4 ? 4 * quad + v : quad + ROW_THREADS * v;
    /* [page: upper-tiles] */
    for (int b = blockIdx.z; b < s.n; b += gridDim.z)
        for (int tr = blockIdx.y; tr <= tc && tr < tiles; tr += gridDim.y) {
        /* [/page: upper-tiles] */
            const size_t p = (size_t)tr * TILE + row, p_in = min(p, P - 1);
            const float *m = mu + cov_mu_at(&s, b, 0, 0);
            float sum[4];
            if constexpr (V == 4) {
                /* P is a multiple of 4, so a float4 of columns is wholly inside or outside. */
                const size_t p2 = min((size_t)tc * TILE + col[0], P - 4);
                channel_sums<CI_BATCH>(sum, gamma + cov_gamma_diag_at(&s, b, 0, p_in, p2), P * P, m,
                                       P, p_in, p2, s.cin);
            } else {
#pragma unroll
                for (int v = 0; v < 4; v++) {
                    const size_t p2 = min((size_t)tc * TILE + col[v], P - 1);
                    float one[1];
                    channel_sums<CI_BATCH>(one, gamma + cov_gamma_diag_at(&s, b, 0, p_in, p2),
                                           P * P, m, P, p_in, p2, s.cin);
                    sum[v] = one[0];
                }
            }
            float *gb = g + (size_t)b * P * P;
            store_owned<V>(gb, P, p, (size_t)tc * TILE, col, sum);
            if (tr == tc) /* a diagonal tile is its own mirror: read and written whole */
                continue;
#pragma unroll
            for (int v = 0; v < 4; v++)
                mirror[row][col[v]] = sum[v];
            __syncthreads();
            /* Row `row` of the transposed tile: G[tc*TILE + row][tr*TILE + col]. */
            float t[4];
#pragma unroll
            for (int v = 0; v < 4; v++)
                t[v] = mirror[col[v]][row];
            store_owned<V>(gb, P, (size_t)tc * TILE + row, (size_t)tr * TILE, col, t);
            __syncthreads();
        }
}

template <int V> static void sum_channels_upper(const struct cov_args *a)
{
    const struct conv_shape *s = &a->shape;
    const int tiles = ceil_div((int)cov_in_positions(s), TILE);
    const dim3 grid(tiles, min(tiles, MAX_GRID_YZ), grid_planes(s->n));
    cov_sum_channels_upper<V>
        <<<grid, SUM_BLOCK, 0, a->stream>>>((float *)a->scratch, a->gamma, a->mu, *s);
    CUDA_CHECK_LAUNCH();
}

extern "C" void covariance_channels_summed_symmetric(const struct cov_args *a)
{
    if (cov_in_positions(&a->shape) % 4 == 0)
        sum_channels_upper<4>(a);
    else
        sum_channels_upper<1>(a);
    if (counts_fit_32_bits(&a->shape))
        box_taps<unsigned>(a, COV_FACTORED);
    else
        box_taps<size_t>(a, COV_FACTORED);
}
