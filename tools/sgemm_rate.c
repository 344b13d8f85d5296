/* sgemm_rate: the FP32 matrix-multiply rate cuBLAS reaches on this GPU, for a large
 * square product and for the GEMM each U-Net layer becomes under im2col
 * (M = output channels, N = batch x pixels, K = input channels x 3 x 3). Lesson 07
 * compares its kernels with these rates: a convolution that matches the SGEMM of
 * its own shape is as fast as plain FP32 arithmetic (no tensor cores) gets here.
 *
 *   build/bin/sgemm_rate            (plain FP32: CUBLAS_DEFAULT_MATH, no TF32)
 */
#include <cublas_v2.h>
#include <stdio.h>
#include <stdlib.h>

#include "conv_problem.h"
#include "cuda_check.h"
#include "gpu_info.h"
#include "rng.h"
#include "timing.h"

#define WARMUP 3
#define REPS 20
#define SQUARE 8192

#define CUBLAS_CHECK(expr)                                                             \
    do {                                                                               \
        cublasStatus_t cublas_check_status_ = (expr);                                  \
        if (cublas_check_status_ != CUBLAS_STATUS_SUCCESS) {                           \
            fprintf(stderr, "error: cuBLAS: %s failed at %s:%d: status %d\n", #expr,   \
                    __FILE__, __LINE__, (int)cublas_check_status_);                    \
            exit(1);                                                                   \
        }                                                                              \
    } while (0)

static float *random_device_matrix(size_t count, struct rng *r)
{
    float *host = malloc(count * sizeof *host), *dev;
    if (!host) {
        fprintf(stderr, "error: out of host memory\n");
        exit(1);
    }
    fill_uniform(host, count, -1, 1, r);
    CUDA_CHECK(cudaMalloc((void **)&dev, count * sizeof *dev));
    CUDA_CHECK(cudaMemcpy(dev, host, count * sizeof *dev, cudaMemcpyHostToDevice));
    free(host);
    return dev;
}

/* Median time of C = A B with A m x k, B k x n (column-major, as cuBLAS wants). */
static double sgemm_ms(cublasHandle_t handle, int m, int n, int k)
{
    struct rng r = rng_seeded(1);
    float *a = random_device_matrix((size_t)m * k, &r);
    float *b = random_device_matrix((size_t)k * n, &r);
    float *c;
    CUDA_CHECK(cudaMalloc((void **)&c, (size_t)m * n * sizeof *c));
    const float alpha = 1, beta = 0;
    cudaEvent_t start, stop;
    CUDA_CHECK(cudaEventCreate(&start));
    CUDA_CHECK(cudaEventCreate(&stop));
    double samples[REPS];
    for (int i = 0; i < WARMUP + REPS; i++) {
        CUDA_CHECK(cudaEventRecord(start, 0));
        CUBLAS_CHECK(cublasSgemm(handle, CUBLAS_OP_N, CUBLAS_OP_N, m, n, k, &alpha, a, m, b, k,
                                 &beta, c, m));
        CUDA_CHECK(cudaEventRecord(stop, 0));
        CUDA_CHECK(cudaEventSynchronize(stop));
        float ms;
        CUDA_CHECK(cudaEventElapsedTime(&ms, start, stop));
        if (i >= WARMUP)
            samples[i - WARMUP] = ms;
    }
    CUDA_CHECK(cudaEventDestroy(start));
    CUDA_CHECK(cudaEventDestroy(stop));
    CUDA_CHECK(cudaFree(a));
    CUDA_CHECK(cudaFree(b));
    CUDA_CHECK(cudaFree(c));
    return timing_from_samples(samples, REPS).median_ms;
}

static void report(const char *name, int m, int n, int k, double ms, double peak)
{
    double gflops = 2.0 * m * n * k / (ms * 1e-3) / 1e9;
    printf("%-16s M=%5d N=%6d K=%5d %9.4f ms %9.0f GFLOP/s %5.1f%% of peak\n", name, m, n, k,
           ms, gflops, 100 * gflops / peak);
}

int main(void)
{
    const char *why;
    if (gpu_count(&why) == 0) {
        fprintf(stderr, "skipped: sgemm_rate needs a CUDA GPU (%s)\n", why);
        return 77;
    }
    struct gpu_info g;
    gpu_query(0, &g);
    cublasHandle_t handle;
    CUBLAS_CHECK(cublasCreate(&handle));
    /* Plain FP32 FMA, the arithmetic of lesson 07 and of cuDNN's FMA row. */
    CUBLAS_CHECK(cublasSetMathMode(handle, CUBLAS_DEFAULT_MATH));
    printf("cuBLAS SGEMM on %s, fp32 peak %.1f TFLOP/s (median of %d)\n", g.name,
           g.peak_gflops[UNIT_FP32_FMA] / 1e3, REPS);
    report("square", SQUARE, SQUARE, SQUARE, sgemm_ms(handle, SQUARE, SQUARE, SQUARE),
           g.peak_gflops[UNIT_FP32_FMA]);
    const struct conv_preset *p;
    for (int i = 0; (p = preset_at(i)) != NULL; i++) {
        const struct conv_shape *s = &p->shape;
        if (s->cin == 1 && s->cout == 1)
            continue;
        int m = s->cout, n = s->n * s->h * s->w, k = s->cin * s->ksize * s->ksize;
        report(p->name, m, n, k, sgemm_ms(handle, m, n, k), g.peak_gflops[UNIT_FP32_FMA]);
    }
    CUBLAS_CHECK(cublasDestroy(handle));
    return 0;
}
