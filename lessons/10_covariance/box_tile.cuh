/* The box-filter kernel of lesson 10, shared by 4_shared_box.cu (the Co output blocks)
 * and 5_factored.cu (S written once, optionally using gamma's symmetry).
 *
 * Fix a batch element b and a row lag a = i0' - i0. For output rows t (i0 = t,
 * i0' = t + a) the op needs, for every input row i, the matrix
 *     X_i[j][j'] = sum_ci gd[b][ci][i*W + j][(i+a)*W + j'] + mu[b][ci][i][j] * mu[b][ci][i+a][j']
 * (one W x W block of each gamma block, rows read along j': coalesced), and then
 *     S(t, j0; t+a, j0') = sum_di sum_dj X_{t+di}[j0+dj][j0'+dj]
 * a box filter: along the diagonal of X_i (dj), then down k consecutive rows (di).
 * A block owns one (b, a) and a BOX_TY x BOX_TX tile of (j0, j0'); it walks down the
 * input rows i once, stages the X_i tile (with its k-1 halo) in shared memory, sums
 * each diagonal of k, and keeps the last k row sums of each output in a ring, so every
 * gamma element it needs is read from global memory once per tile (plus the halo). */
#ifndef BOX_TILE_CUH
#define BOX_TILE_CUH

#include "cuda_check.h"
#include "kernels.h"

#define BOX_TX 32 /* j0' per tile: the lanes of a warp, so stores are coalesced */
#define BOX_TY 8  /* j0 per tile: one per warp */
#define BOX_THREADS (BOX_TX * BOX_TY)
/* Grid layers (one per (b, lag)) asked for at most; the kernel strides over the rest. */
#define BOX_MAX_GRID_Z 65535
/* The static limit on shared memory per block; above it a launch must opt in. */
#define BOX_DEFAULT_SMEM_LIMIT (48 * 1024)

enum box_output {
    BOX_BLOCKS,            /* out[b][c0][q][q'] += c[c0] * S, every lag */
    BOX_FACTORED,          /* s[b][q][q'] += S, every lag */
    BOX_FACTORED_SYMMETRIC /* lags a >= 0 only; S added at (q, q') and (q', q) */
};

/* Shared floats: the X tile with its halo, the ring of k row sums per thread, and
 * (symmetric only) the tile transposed for the mirrored store, padded to 9 columns so
 * the transposing writes of a warp hit 32 different banks. */
static inline size_t box_smem_bytes(int k, enum box_output mode)
{
    const size_t x_tile = (size_t)(BOX_TY + k - 1) * (BOX_TX + k - 1);
    const size_t ring = (size_t)k * BOX_THREADS;
    const size_t mirror = mode == BOX_FACTORED_SYMMETRIC ? BOX_TX * (BOX_TY + 1) : 0;
    return sizeof(float) * (x_tile + ring + mirror);
}

/* X_i for this block's tile: rows j0_base .. j0_base+BOX_TY+k-2, columns
 * j1_base .. j1_base+BOX_TX+k-2, zero past the image (those only feed outputs past Wo).
 * Consecutive threads take consecutive columns: coalesced gamma and mu reads. */
static __device__ void stage_x(float *x_tile, const float *__restrict__ gamma,
                               const float *__restrict__ mu, const struct conv_shape &s, int b,
                               int i, int a, int j0_base, int j1_base)
{
    const int k = s.ksize;
    const int pitch = BOX_TX + k - 1;
    const int count = (BOX_TY + k - 1) * pitch;
    const size_t plane = cov_in_positions(&s);
    const size_t block = plane * plane;
    for (int e = threadIdx.y * BOX_TX + threadIdx.x; e < count; e += BOX_THREADS) {
        const int r = e / pitch;
        const int j = j0_base + r, j2 = j1_base + (e - r * pitch);
        float x = 0.0f;
        if (j < s.w && j2 < s.w) {
            const size_t p = (size_t)i * s.w + j, p2 = (size_t)(i + a) * s.w + j2;
            const float *mu_b = mu + cov_mu_at(&s, b, 0, 0);
            const float *g = gamma + cov_gamma_diag_at(&s, b, 0, p, p2);
#pragma unroll 4
            for (int ci = 0; ci < s.cin; ci++)
                x += fmaf(mu_b[ci * plane + p], mu_b[ci * plane + p2], g[ci * block]);
        }
        x_tile[e] = x;
    }
}

template <enum box_output MODE>
__global__ void __launch_bounds__(BOX_THREADS)
    cov_box(float *__restrict__ out, const float *__restrict__ gamma,
            const float *__restrict__ mu, const float *__restrict__ c, struct conv_shape s)
{
    extern __shared__ float smem[];
    const int k = s.ksize;
    const int ho = cov_out_h(&s), wo = cov_out_w(&s);
    const int pitch = BOX_TX + k - 1;
    float *x_tile = smem;
    float *ring = x_tile + (BOX_TY + k - 1) * pitch;
    float *mirror = ring + k * BOX_THREADS;
    const int tx = threadIdx.x, ty = threadIdx.y, tid = ty * BOX_TX + tx;
    const int j0_base = blockIdx.y * BOX_TY, j1_base = blockIdx.x * BOX_TX;
    const int j0 = j0_base + ty, j1 = j1_base + tx;
    const bool mine = j0 < wo && j1 < wo;
    const int lags = MODE == BOX_FACTORED_SYMMETRIC ? ho : 2 * ho - 1;

    for (int z = blockIdx.z; z < s.n * lags; z += gridDim.z) {
        const int b = z / lags;
        const int a = MODE == BOX_FACTORED_SYMMETRIC ? z % lags : z % lags - (ho - 1);
        /* Output rows t with both t and t + a inside the output. */
        const int t_lo = max(0, -a), t_hi = min(ho, ho - a);
        /* [page: box-walk] */
        for (int i = t_lo; i < t_hi + k - 1; i++) {
            stage_x(x_tile, gamma, mu, s, b, i, a, j0_base, j1_base);
            __syncthreads();
            float row_sum = 0.0f;
            for (int dj = 0; dj < k; dj++)
                row_sum += x_tile[(ty + dj) * pitch + tx + dj];
            const int step = i - t_lo;
            ring[(step % k) * BOX_THREADS + tid] = row_sum;
            /* Output row t = i - k + 1 has all k of its row sums once step >= k - 1. */
            const bool ready = step >= k - 1;
            const int t = i - k + 1;
            float total = 0.0f;
            if (ready)
                for (int m = 0; m < k; m++)
                    total += ring[m * BOX_THREADS + tid];
            /* [/page: box-walk] */
            if (ready && mine) {
                const size_t q = (size_t)t * wo + j0, q2 = (size_t)(t + a) * wo + j1;
                /* [page: box-output] */
                if (MODE == BOX_BLOCKS) {
                    for (int c0 = 0; c0 < s.cout; c0++) {
                        float *o = out + cov_out_blocks_at(&s, b, c0, q, q2);
                        *o = fmaf(c[c0], total, *o);
                    }
                } else {
                    out[cov_out_factored_at(&s, b, q, q2)] += total;
                }
                /* [/page: box-output] */
            }
            if (MODE == BOX_FACTORED_SYMMETRIC && ready)
                mirror[tx * (BOX_TY + 1) + ty] = total;
            __syncthreads();
            /* S(q', q) = S(q, q'): the lag -a tile, written as rows of BOX_TY
             * consecutive q (one 32-byte sector each) from the transposed tile. */
            if (MODE == BOX_FACTORED_SYMMETRIC && ready && a > 0) {
                const int col = tid / BOX_TY, row = tid % BOX_TY;
                if (j0_base + row < wo && j1_base + col < wo) {
                    const size_t q = (size_t)t * wo + j0_base + row;
                    const size_t q2 = (size_t)(t + a) * wo + j1_base + col;
                    out[cov_out_factored_at(&s, b, q2, q)] += mirror[col * (BOX_TY + 1) + row];
                }
            }
        }
    }
}

template <enum box_output MODE> static void launch_cov_box(const struct cov_args *a)
{
    const struct conv_shape *s = &a->shape;
    const int ho = cov_out_h(s), wo = cov_out_w(s);
    const long long layers = (long long)s->n * (MODE == BOX_FACTORED_SYMMETRIC ? ho : 2 * ho - 1);
    const dim3 grid((unsigned)((wo + BOX_TX - 1) / BOX_TX), (unsigned)((wo + BOX_TY - 1) / BOX_TY),
                    (unsigned)(layers < BOX_MAX_GRID_Z ? layers : BOX_MAX_GRID_Z));
    const size_t bytes = box_smem_bytes(s->ksize, MODE);
    if (bytes > BOX_DEFAULT_SMEM_LIMIT)
        CUDA_CHECK(cudaFuncSetAttribute(cov_box<MODE>, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                        (int)bytes));
    cov_box<MODE><<<grid, dim3(BOX_TX, BOX_TY), bytes, a->stream>>>(a->out, a->gamma, a->mu, a->c,
                                                                    *s);
    CUDA_CHECK_LAUNCH();
}

#endif
