/* Seed 000's two kernels timed two ways: the notebook's way (a host timer around a call that
 * allocates and zero-fills the output, copies the filter to constant memory and launches, as
 * `%timeit` saw it) and the harness's way (CUDA events around the launch only). The kernels
 * follow the notebook's design: a naive kernel with the filter in global memory and a run-time
 * radius in 16x16 blocks, and a 16x16 tile with the halo read from global memory through the
 * caches and a `__constant__` filter with a compile-time radius. Problem: seed000, one
 * 1000x2000 float image, 3x3 filter. Exit codes: 0 both checks passed, 1 a check failed, 77 no
 * GPU. */
#include "cuda_check.h"
#include "gold.h"
#include "rng.h"
#include "verify.h"

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

enum { IMG_H = 1000, IMG_W = 2000, RADIUS = 1, KSIZE = 2 * RADIUS + 1, TILE = 16 };
enum { TIMEIT_RUNS = 7, TIMEIT_LOOPS = 2000 };    /* %timeit: 7 runs, mean of each run's loops */
enum { HARNESS_WARMUP = 10, HARNESS_REPS = 200 }; /* the lessons' defaults */
enum { HARNESS_SETS = 16 }; /* rotated buffers, so the 16 MB problem is not L2-resident */
#define SEED 1

__constant__ float filter_c[KSIZE][KSIZE];

/* The seed's naive kernel: one thread per output, filter in global memory. */
__global__ void seed_naive(const float *in, const float *filter, float *out, int ksize, int h,
                           int w)
{
    int row = blockIdx.y * blockDim.y + threadIdx.y;
    int col = blockIdx.x * blockDim.x + threadIdx.x;
    int r = ksize / 2;
    if (row >= h || col >= w)
        return;
    float acc = 0.0f;
    for (int i = 0; i < ksize; i++)
        for (int j = 0; j < ksize; j++) {
            int y = row - r + i, x = col - r + j;
            if (y >= 0 && y < h && x >= 0 && x < w)
                acc += in[y * w + x] * filter[i * ksize + j];
        }
    out[row * w + col] = acc;
}

/* The seed's tiled kernel: the block's own 16x16 pixels in shared memory; a tap outside the
 * tile reads global memory (betting on L1/L2). Thread indices are copied to int first: the
 * notebook's unsigned `threadIdx.x - r + j >= 0` is always true and only worked because the
 * wrapped value also failed `< TILE`; with int the same taps take the same path. */
__global__ void seed_tiled(const float *in, float *out, int h, int w)
{
    __shared__ float tile[TILE][TILE];
    int tx = threadIdx.x, ty = threadIdx.y;
    int row = blockIdx.y * TILE + ty, col = blockIdx.x * TILE + tx;
    bool inside = row < h && col < w;
    tile[ty][tx] = inside ? in[row * w + col] : 0.0f;
    __syncthreads();
    if (!inside)
        return;
    float acc = 0.0f;
#pragma unroll
    for (int i = 0; i < KSIZE; i++)
#pragma unroll
        for (int j = 0; j < KSIZE; j++) {
            int sy = ty - RADIUS + i, sx = tx - RADIUS + j;
            if (sy >= 0 && sy < TILE && sx >= 0 && sx < TILE) {
                acc += tile[sy][sx] * filter_c[i][j];
            } else {
                int y = row - RADIUS + i, x = col - RADIUS + j;
                if (y >= 0 && y < h && x >= 0 && x < w)
                    acc += in[y * w + x] * filter_c[i][j];
            }
        }
    out[row * w + col] = acc;
}

enum kernel_kind { NAIVE, TILED };
/* Where the seed-style call copies the filter from: the notebook's filter tensor was on the
 * GPU; FROM_HOST shows what a host filter would cost (pageable copy, synchronous). */
enum filter_source { FROM_DEVICE, FROM_HOST };

struct problem {
    const float *in; /* device input, set 0 */
    float *in_sets[HARNESS_SETS];
    float *out_sets[HARNESS_SETS];
    const float *filter;      /* device copy */
    const float *host_filter; /* the same filter in host memory */
    struct gold gold;         /* float64 reference of every output (common/ops/conv/gold.c) */
    struct tolerance tol;     /* the harness's fp32 tolerance for this shape */
    size_t bytes;
};

static void launch(enum kernel_kind k, const float *in, const float *filter, float *out)
{
    dim3 block(TILE, TILE);
    dim3 grid((IMG_W + TILE - 1) / TILE, (IMG_H + TILE - 1) / TILE);
    if (k == NAIVE)
        seed_naive<<<grid, block>>>(in, filter, out, KSIZE, IMG_H, IMG_W);
    else
        seed_tiled<<<grid, block>>>(in, out, IMG_H, IMG_W);
    CUDA_CHECK_LAUNCH();
}

/* One call as the notebook's function made it: torch::zeros (the caching allocator hands back
 * the block freed by the last call, then a fill kernel; here a stream-ordered pool that keeps
 * its memory, and a memset), the tiled kernel's cudaMemcpyToSymbol, the launch, and the output
 * released when the tensor dies. Everything on the legacy default stream, no synchronisation.
 * With keep != NULL the output is handed back instead of freed. */
static void seed_call(enum kernel_kind k, const struct problem *p, enum filter_source src,
                      float **keep)
{
    float *out;
    CUDA_CHECK(cudaMallocAsync((void **)&out, p->bytes, 0));
    CUDA_CHECK(cudaMemsetAsync(out, 0, p->bytes, 0));
    if (k == TILED)
        CUDA_CHECK(cudaMemcpyToSymbol(filter_c, src == FROM_DEVICE ? p->filter : p->host_filter,
                                      sizeof filter_c, 0, cudaMemcpyDefault));
    launch(k, p->in, p->filter, out);
    if (keep)
        *keep = out;
    else
        CUDA_CHECK(cudaFreeAsync(out, 0));
}

/* The per-call pieces on their own, to see what each costs. */
enum piece { PIECE_CALL, PIECE_ALLOC_FILL, PIECE_FILTER_COPY, PIECE_LAUNCH };

static void run_piece(enum piece what, enum kernel_kind k, const struct problem *p,
                      enum filter_source src)
{
    float *out;
    switch (what) {
    case PIECE_CALL: seed_call(k, p, src, NULL); break;
    case PIECE_ALLOC_FILL:
        CUDA_CHECK(cudaMallocAsync((void **)&out, p->bytes, 0));
        CUDA_CHECK(cudaMemsetAsync(out, 0, p->bytes, 0));
        CUDA_CHECK(cudaFreeAsync(out, 0));
        break;
    case PIECE_FILTER_COPY:
        CUDA_CHECK(cudaMemcpyToSymbol(filter_c, src == FROM_DEVICE ? p->filter : p->host_filter,
                                      sizeof filter_c, 0, cudaMemcpyDefault));
        break;
    case PIECE_LAUNCH: launch(k, p->in, p->filter, p->out_sets[0]); break;
    }
}

static double now_us(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec * 1e6 + t.tv_nsec * 1e-3;
}

struct stats {
    double mean, spread; /* %timeit: mean and std. dev. of the runs; harness: median and min */
};

/* %timeit's measurement: host time of TIMEIT_LOOPS back-to-back calls, per call, TIMEIT_RUNS
 * times; with sync the call also waits for the GPU to finish, as a careful host timer would. */
static struct stats host_timed(enum piece what, enum kernel_kind k, const struct problem *p,
                               enum filter_source src, bool sync)
{
    double per_call[TIMEIT_RUNS];
    for (int i = 0; i < TIMEIT_LOOPS; i++) /* warm-up: pool grown, module loaded */
        run_piece(what, k, p, src);
    CUDA_CHECK(cudaDeviceSynchronize());
    for (int r = 0; r < TIMEIT_RUNS; r++) {
        double t0 = now_us();
        for (int i = 0; i < TIMEIT_LOOPS; i++) {
            run_piece(what, k, p, src);
            if (sync)
                CUDA_CHECK(cudaDeviceSynchronize());
        }
        per_call[r] = (now_us() - t0) / TIMEIT_LOOPS;
    }
    CUDA_CHECK(cudaDeviceSynchronize());
    struct stats s = {0, 0};
    for (int r = 0; r < TIMEIT_RUNS; r++)
        s.mean += per_call[r] / TIMEIT_RUNS;
    for (int r = 0; r < TIMEIT_RUNS; r++)
        s.spread += (per_call[r] - s.mean) * (per_call[r] - s.mean) / TIMEIT_RUNS;
    s.spread = sqrt(s.spread);
    return s;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* GPU time of `what` (events on the default stream around each call), median and min over
 * HARNESS_REPS after HARNESS_WARMUP; for the launch alone the input and output rotate over
 * HARNESS_SETS buffer sets as in the harness. */
static struct stats event_timed(enum piece what, enum kernel_kind k, const struct problem *p)
{
    cudaEvent_t ev[2 * HARNESS_REPS];
    double ms[HARNESS_REPS];
    for (int i = 0; i < 2 * HARNESS_REPS; i++)
        CUDA_CHECK(cudaEventCreate(&ev[i]));
    if (what == PIECE_CALL || what == PIECE_ALLOC_FILL) {
        for (int i = 0; i < HARNESS_WARMUP; i++)
            run_piece(what, k, p, FROM_DEVICE);
        for (int i = 0; i < HARNESS_REPS; i++) {
            CUDA_CHECK(cudaEventRecord(ev[2 * i], 0));
            run_piece(what, k, p, FROM_DEVICE);
            CUDA_CHECK(cudaEventRecord(ev[2 * i + 1], 0));
        }
    } else {
        CUDA_CHECK(cudaMemcpyToSymbol(filter_c, p->filter, sizeof filter_c, 0, cudaMemcpyDefault));
        for (int i = 0; i < HARNESS_WARMUP; i++)
            launch(k, p->in_sets[i % HARNESS_SETS], p->filter, p->out_sets[i % HARNESS_SETS]);
        for (int i = 0; i < HARNESS_REPS; i++) {
            int s = i % HARNESS_SETS;
            CUDA_CHECK(cudaEventRecord(ev[2 * i], 0));
            launch(k, p->in_sets[s], p->filter, p->out_sets[s]);
            CUDA_CHECK(cudaEventRecord(ev[2 * i + 1], 0));
        }
    }
    CUDA_CHECK(cudaDeviceSynchronize());
    for (int i = 0; i < HARNESS_REPS; i++) {
        float t;
        CUDA_CHECK(cudaEventElapsedTime(&t, ev[2 * i], ev[2 * i + 1]));
        ms[i] = t;
    }
    for (int i = 0; i < 2 * HARNESS_REPS; i++)
        CUDA_CHECK(cudaEventDestroy(ev[i]));
    qsort(ms, HARNESS_REPS, sizeof ms[0], cmp_double);
    struct stats s = {1e3 * ms[HARNESS_REPS / 2], 1e3 * ms[0]};
    return s;
}

/* Outputs outside the harness's tolerance (NaN-safe, common/measure/verify.c). */
static long check(const float *got, const struct problem *p)
{
    return (long)check_output(&p->gold, got, p->tol).failures;
}

/* Output of one seed-style call and of the event-timed launch, both against float64. */
static long check_kernel(enum kernel_kind k, const struct problem *p, float *host_out)
{
    float *out;
    seed_call(k, p, FROM_DEVICE, &out);
    CUDA_CHECK(cudaMemcpy(host_out, out, p->bytes, cudaMemcpyDeviceToHost));
    CUDA_CHECK(cudaFreeAsync(out, 0));
    long bad = check(host_out, p);
    CUDA_CHECK(cudaMemset(p->out_sets[0], 0xff, p->bytes)); /* NaN: unwritten outputs fail */
    CUDA_CHECK(cudaMemcpyToSymbol(filter_c, p->filter, sizeof filter_c, 0, cudaMemcpyDefault));
    launch(k, p->in, p->filter, p->out_sets[0]);
    CUDA_CHECK(cudaMemcpy(host_out, p->out_sets[0], p->bytes, cudaMemcpyDeviceToHost));
    return bad + check(host_out, p);
}

static void print_row(const char *method, const char *what, struct stats n, struct stats t,
                      bool is_host)
{
    char ns[32], ts[32];
    snprintf(ns, sizeof ns, is_host ? "%.1f ± %.1f" : "%.1f (min %.1f)", n.mean, n.spread);
    snprintf(ts, sizeof ts, is_host ? "%.1f ± %.1f" : "%.1f (min %.1f)", t.mean, t.spread);
    printf("| %s | %s | %s | %s | %.2f |\n", method, what, ns, ts, t.mean / n.mean);
}

int main(void)
{
    int devices = 0;
    if (cudaGetDeviceCount(&devices) != cudaSuccess || devices == 0) {
        fprintf(stderr, "seed000_timing: no usable GPU, skipped\n");
        return 77;
    }
    struct cudaDeviceProp prop;
    int driver, runtime;
    CUDA_CHECK(cudaGetDeviceProperties(&prop, 0));
    CUDA_CHECK(cudaDriverGetVersion(&driver));
    CUDA_CHECK(cudaRuntimeGetVersion(&runtime));
    printf("seed 000's kernels, timed the notebook's way and the harness's way\n");
    printf("%s | cc %d.%d | %d SMs | driver %d | runtime %d\n", prop.name, prop.major, prop.minor,
           prop.multiProcessorCount, driver, runtime);
    printf("problem: %dx%d float image, %dx%d filter, zero padding, 16x16 blocks\n\n", IMG_H, IMG_W,
           KSIZE, KSIZE);

    /* The pool keeps freed blocks, as PyTorch's caching allocator does. */
    cudaMemPool_t pool;
    uint64_t keep_all = UINT64_MAX;
    CUDA_CHECK(cudaDeviceGetDefaultMemPool(&pool, 0));
    CUDA_CHECK(cudaMemPoolSetAttribute(pool, cudaMemPoolAttrReleaseThreshold, &keep_all));

    struct problem p;
    p.bytes = (size_t)IMG_H * IMG_W * sizeof(float);
    float *host_in = (float *)malloc(p.bytes), *host_out = (float *)malloc(p.bytes);
    static float host_filter[KSIZE * KSIZE];
    if (!host_in || !host_out) {
        fprintf(stderr, "seed000_timing: out of host memory\n");
        return 1;
    }
    struct rng r = rng_seeded(SEED);
    fill_uniform(host_in, p.bytes / sizeof(float), 0.0f, 1.0f, &r); /* torch.rand */
    /* Conv2d's default init: U(-1/3, 1/3) for 3x3 */
    fill_uniform(host_filter, KSIZE * KSIZE, -1.0f / 3, 1.0f / 3, &r);
    p.host_filter = host_filter;
    const struct conv_shape shape = {1, 1, 1, IMG_H, IMG_W, KSIZE, false};
    gold_compute(&p.gold, &shape, host_in, host_filter, NULL, SEED);
    p.tol = tolerance_for(DTYPE_FP32, &shape);
    for (int s = 0; s < HARNESS_SETS; s++) {
        CUDA_CHECK(cudaMalloc((void **)&p.in_sets[s], p.bytes));
        CUDA_CHECK(cudaMalloc((void **)&p.out_sets[s], p.bytes));
        CUDA_CHECK(cudaMemcpy(p.in_sets[s], host_in, p.bytes, cudaMemcpyHostToDevice));
    }
    p.in = p.in_sets[0];
    float *dev_filter;
    CUDA_CHECK(cudaMalloc((void **)&dev_filter, sizeof host_filter));
    CUDA_CHECK(cudaMemcpy(dev_filter, host_filter, sizeof host_filter, cudaMemcpyHostToDevice));
    p.filter = dev_filter;

    long bad_naive = check_kernel(NAIVE, &p, host_out);
    long bad_tiled = check_kernel(TILED, &p, host_out);

    struct stats n_call = host_timed(PIECE_CALL, NAIVE, &p, FROM_DEVICE, false);
    struct stats t_call = host_timed(PIECE_CALL, TILED, &p, FROM_DEVICE, false);
    struct stats t_call_hf = host_timed(PIECE_CALL, TILED, &p, FROM_HOST, false);
    struct stats n_sync = host_timed(PIECE_CALL, NAIVE, &p, FROM_DEVICE, true);
    struct stats t_sync = host_timed(PIECE_CALL, TILED, &p, FROM_DEVICE, true);
    struct stats n_launch_host = host_timed(PIECE_LAUNCH, NAIVE, &p, FROM_DEVICE, false);
    struct stats t_launch_host = host_timed(PIECE_LAUNCH, TILED, &p, FROM_DEVICE, false);
    struct stats alloc_host = host_timed(PIECE_ALLOC_FILL, NAIVE, &p, FROM_DEVICE, false);
    struct stats copy_host = host_timed(PIECE_FILTER_COPY, TILED, &p, FROM_DEVICE, false);
    struct stats copy_host_hf = host_timed(PIECE_FILTER_COPY, TILED, &p, FROM_HOST, false);
    struct stats n_call_gpu = event_timed(PIECE_CALL, NAIVE, &p);
    struct stats t_call_gpu = event_timed(PIECE_CALL, TILED, &p);
    struct stats alloc_gpu = event_timed(PIECE_ALLOC_FILL, NAIVE, &p);
    struct stats n_kernel = event_timed(PIECE_LAUNCH, NAIVE, &p);
    struct stats t_kernel = event_timed(PIECE_LAUNCH, TILED, &p);

    printf("Host timer: mean ± std. dev. of %d runs of %d calls (%%timeit's statistic), µs per "
           "call.\nEvents: median (min) of %d timed calls after %d warm-up, µs.\n\n",
           TIMEIT_RUNS, TIMEIT_LOOPS, HARNESS_REPS, HARNESS_WARMUP);
    printf("| timing method | what is timed | naive µs | tiled µs | tiled / naive |\n");
    printf("| --- | --- | --- | --- | --- |\n");
    print_row("host timer, no sync (the notebook's %timeit)",
              "alloc + zero-fill + filter copy (tiled) + launch", n_call, t_call, true);
    print_row("host timer, no sync, filter from host memory",
              "as above, tiled filter copied from pageable host memory", n_call, t_call_hf, true);
    print_row("host timer, cudaDeviceSynchronize per call", "as above, waiting for the GPU", n_sync,
              t_sync, true);
    print_row("host timer, no sync, launch only", "the launch alone, back to back", n_launch_host,
              t_launch_host, true);
    print_row("events around the whole call", "GPU time of alloc + fill + copy + kernel",
              n_call_gpu, t_call_gpu, false);
    print_row("events around the launch (the harness)", "the kernel alone, 16 rotated buffer sets",
              n_kernel, t_kernel, false);

    printf("\n| per-call piece | host timer, no sync, µs | events, µs |\n");
    printf("| --- | --- | --- |\n");
    printf("| alloc + zero-fill + free of the 8 MB output | %.1f ± %.1f | %.1f (min %.1f) |\n",
           alloc_host.mean, alloc_host.spread, alloc_gpu.mean, alloc_gpu.spread);
    printf("| cudaMemcpyToSymbol of the filter, from device memory | %.1f ± %.1f | |\n",
           copy_host.mean, copy_host.spread);
    printf("| cudaMemcpyToSymbol of the filter, from host memory | %.1f ± %.1f | |\n",
           copy_host_hf.mean, copy_host_hf.spread);

    printf("\ncheck against float64 (the harness's gold and fp32 tolerance, rtol %.2e of each "
           "output's magnitude), the seed-style call's output and the harness launch's: naive "
           "%s (%ld bad), tiled %s (%ld bad)\n",
           p.tol.rtol, bad_naive ? "FAIL" : "PASS", bad_naive, bad_tiled ? "FAIL" : "PASS",
           bad_tiled);

    for (int s = 0; s < HARNESS_SETS; s++) {
        CUDA_CHECK(cudaFree(p.in_sets[s]));
        CUDA_CHECK(cudaFree(p.out_sets[s]));
    }
    CUDA_CHECK(cudaFree(dev_filter));
    gold_free(&p.gold);
    free(host_in);
    free(host_out);
    return bad_naive || bad_tiled ? 1 : 0;
}
