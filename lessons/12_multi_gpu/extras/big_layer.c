/* big_layer: a convolution layer larger than one GPU's memory, on several GPUs with
 * lesson 12's rows_overlap. No GPU holds the whole layer, so none can run it as the
 * baseline, and the harness, which draws and checks a layer on the first GPU, cannot
 * run it either. Instead each GPU draws its own rows of the input where they lie, from
 * a formula of their position (layer_values.h); the layer is timed; then it is checked
 * two ways: each slab computed again alone on its GPU, its halo rows drawn instead of
 * received, must give the same bits (what a one-GPU run of that slab gives), and a few
 * thousand outputs must match float64 sums of the same values, computed on the host.
 *
 *   build/bin/big_layer [--gpus N] [--batch B] [--height H] [--width W] [--channels C]
 *                       [--ksize K] [--reps R] [--samples S]
 *
 * The default layer, 200 images of 2048 x 1024 with 64 -> 64 channels in fp16 NHWC,
 * holds 53.7 GB of input and as much output: 107 GB, more than one 80 GB GPU has.
 * Exit codes: 0 passed; 1 a check failed, or a CUDA or NCCL error; 2 bad usage (a layer
 * the GPUs cannot hold included); 77 fewer than two GPUs, or GPUs older than 8.0. */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "alloc.h"
#include "draw.h"
#include "escape.h"
#include "gpu_info.h"
#include "gpu_needs.h"
#include "int_flags.h"
#include "layer_values.h"
#include "lessons/08_tensor_cores/kernels.h"
#include "rng.h"
#include "several_gpus.h"
#include "steps.h"
#include "timing.h"
#include "verify.h"

#define FP16_BYTES 2
#define CHECK_IMAGES 8 /* images recomputed per launch by the slab check */
#define SAMPLE_SEED 12

static double gigabytes(double bytes)
{
    return bytes / 1e9;
}

/* The layer's weights (KRSC fp16) and bias (fp32) on the first GPU. */
static void upload_weights(const struct conv_shape *s, void **weights, float **bias)
{
    const size_t count = (size_t)s->cout * s->ksize * s->ksize * s->cin;
    uint16_t *w = host_alloc(count * sizeof *w, "the weights");
    float *b = host_alloc((size_t)s->cout * sizeof *b, "the bias");
    for (size_t i = 0; i < count; i++)
        w[i] = float_to_half_bits(layer_value(LAYER_WEIGHTS, i));
    for (int k = 0; k < s->cout; k++)
        b[k] = layer_value(LAYER_BIAS, (uint64_t)k);
    CUDA_CHECK(cudaSetDevice(0));
    CUDA_CHECK(cudaMalloc(weights, count * FP16_BYTES));
    CUDA_CHECK(cudaMalloc((void **)bias, (size_t)s->cout * sizeof *b));
    CUDA_CHECK(cudaMemcpy(*weights, w, count * FP16_BYTES, cudaMemcpyHostToDevice));
    CUDA_CHECK(cudaMemcpy(*bias, b, (size_t)s->cout * sizeof *b, cudaMemcpyHostToDevice));
    free(w);
    free(b);
}

/* Whether each GPU has room for its slab (input and output with their halo rows, and
 * the check's images); if not, one error line. */
static bool fits(const struct conv_shape *s, int gpus)
{
    const int rows = (s->h + gpus - 1) / gpus + 2 * (s->ksize / 2);
    const double per_image = (double)rows * s->w * (s->cin + s->cout) * FP16_BYTES;
    const double need = per_image * s->n + (double)CHECK_IMAGES * rows * s->w * s->cout *
                                               FP16_BYTES;
    for (int i = 0; i < gpus; i++) {
        size_t free_bytes = 0, total = 0;
        CUDA_CHECK(cudaSetDevice(i));
        CUDA_CHECK(cudaMemGetInfo(&free_bytes, &total));
        if (need > 0.95 * (double)free_bytes) {
            print_error("the layer needs about %.1f GB on each of %d GPUs, and GPU %d has %.1f "
                        "GB free: use fewer --batch, or more --gpus",
                        gigabytes(need), gpus, i, gigabytes((double)free_bytes));
            return false;
        }
    }
    return true;
}

/* Each slab's own rows of every image, drawn on its GPU. */
static void draw_slabs(const struct split *s)
{
    for (int i = 0; i < s->gpus; i++) {
        const struct slab *p = &s->slab[i];
        if (!split_slab_busy(p))
            continue;
        CUDA_CHECK(cudaSetDevice(p->device));
        draw_input_rows(split_input_row(s, p, p->n0, p->r0),
                        split_image_bytes(s, p, s->shape.cin) / FP16_BYTES, p->n0,
                        p->n1 - p->n0, p->r0, p->r1 - p->r0, &s->shape, p->stream);
        CUDA_CHECK(cudaStreamSynchronize(p->stream));
    }
}

/* Median and minimum of `reps` runs after one untimed (NCCL's first exchange). */
static struct timing time_runs(const struct conv_args *a, int reps)
{
    cudaEvent_t start, stop;
    CUDA_CHECK(cudaSetDevice(a->device));
    CUDA_CHECK(cudaEventCreate(&start));
    CUDA_CHECK(cudaEventCreate(&stop));
    double *ms = host_alloc((size_t)reps * sizeof *ms, "the times");
    run_rows_overlap(a);
    CUDA_CHECK(cudaStreamSynchronize(a->stream));
    for (int r = 0; r < reps; r++) {
        CUDA_CHECK(cudaEventRecord(start, a->stream));
        run_rows_overlap(a);
        CUDA_CHECK(cudaEventRecord(stop, a->stream));
        CUDA_CHECK(cudaEventSynchronize(stop));
        float t = 0;
        CUDA_CHECK(cudaEventElapsedTime(&t, start, stop));
        ms[r] = t;
    }
    const struct timing t = timing_from_samples(ms, reps);
    free(ms);
    CUDA_CHECK(cudaEventDestroy(start));
    CUDA_CHECK(cudaEventDestroy(stop));
    return t;
}

/* Whether slab p's own output rows of image n equal those at `alone` (the image as the
 * slab alone computed it, all its held rows). */
static bool same_rows(const struct split *s, const struct slab *p, int n, const void *alone,
                      void *host_a, void *host_b)
{
    const size_t bytes = split_row_bytes(s, p->r1 - p->r0, s->shape.cout);
    CUDA_CHECK(cudaMemcpy(host_a, split_output_row(s, p, n, p->r0), bytes,
                          cudaMemcpyDeviceToHost));
    CUDA_CHECK(cudaMemcpy(host_b, (const char *)alone + split_row_bytes(s, p->top, s->shape.cout),
                          bytes, cudaMemcpyDeviceToHost));
    return memcmp(host_a, host_b, bytes) == 0;
}

/* Each slab again, alone on its GPU: its halo rows drawn over the ones the exchange
 * brought, its images computed CHECK_IMAGES at a time aside and compared bit for bit
 * with the split's. Returns the images that differ, over all slabs. */
static long check_slabs(const struct split *s)
{
    const size_t own_bytes = split_row_bytes(s, s->shape.h, s->shape.cout);
    void *host_a = host_alloc(own_bytes, "an image's rows"), *host_b = host_alloc(own_bytes,
                                                                               "an image's rows");
    long differ = 0;
    for (int i = 0; i < s->gpus; i++) {
        const struct slab *p = &s->slab[i];
        if (!split_slab_busy(p))
            continue;
        const size_t stride = split_image_bytes(s, p, s->shape.cin) / FP16_BYTES;
        const int images = p->n1 - p->n0, held = p->top + (p->r1 - p->r0) + p->bottom;
        CUDA_CHECK(cudaSetDevice(p->device));
        draw_input_rows(split_input_row(s, p, p->n0, p->r0 - p->top), stride, p->n0, images,
                        p->r0 - p->top, p->top, &s->shape, p->stream);
        draw_input_rows(split_input_row(s, p, p->n0, p->r1), stride, p->n0, images, p->r1,
                        p->bottom, &s->shape, p->stream);
        void *alone = NULL;
        CUDA_CHECK(cudaMalloc(&alone, CHECK_IMAGES * split_image_bytes(s, p, s->shape.cout)));
        for (int n = p->n0; n < p->n1; n += CHECK_IMAGES) {
            const int count = p->n1 - n < CHECK_IMAGES ? p->n1 - n : CHECK_IMAGES;
            split_compute(s, p, count, held, split_input_row(s, p, n, p->r0 - p->top), alone,
                          p->stream, 0);
            CUDA_CHECK(cudaStreamSynchronize(p->stream));
            for (int k = 0; k < count; k++)
                differ += !same_rows(s, p, n + k,
                                     (const char *)alone +
                                         k * split_image_bytes(s, p, s->shape.cout),
                                     host_a, host_b);
        }
        CUDA_CHECK(cudaFree(alone));
    }
    free(host_a);
    free(host_b);
    return differ;
}

/* The float64 sum for output (n, k, y, x) from the layer's values, and the magnitude of
 * its terms (verify.h). */
static double reference(const struct conv_shape *s, int n, int k, int y, int x, double *magnitude)
{
    const int half = s->ksize / 2;
    double sum = layer_value(LAYER_BIAS, (uint64_t)k);
    *magnitude = fabs(sum);
    for (int dy = 0; dy < s->ksize; dy++)
        for (int dx = 0; dx < s->ksize; dx++) {
            const int yy = y + dy - half, xx = x + dx - half;
            if (yy < 0 || yy >= s->h || xx < 0 || xx >= s->w)
                continue;
            for (int c = 0; c < s->cin; c++) {
                const uint64_t at = (((uint64_t)n * s->h + yy) * s->w + xx) * s->cin + c;
                const uint64_t wt = (((uint64_t)k * s->ksize + dy) * s->ksize + dx) * s->cin + c;
                const double term = (double)layer_value(LAYER_INPUT, at) *
                                    layer_value(LAYER_WEIGHTS, wt);
                sum += term;
                *magnitude += fabs(term);
            }
        }
    return sum;
}

/* `samples` outputs at random places, read from the slab that owns them, against
 * float64; the image's first and last rows and columns come up as often as any. */
static struct check_result check_samples(const struct split *s, int samples)
{
    const struct conv_shape *sh = &s->shape;
    const struct tolerance tol = tolerance_for(DTYPE_FP16, sh);
    struct rng r = rng_seeded(SAMPLE_SEED);
    struct check_accum acc;
    check_begin(&acc);
    for (int i = 0; i < samples; i++) {
        const int n = (int)rng_below(&r, (size_t)sh->n), k = (int)rng_below(&r, (size_t)sh->cout);
        const int y = (int)rng_below(&r, (size_t)sh->h), x = (int)rng_below(&r, (size_t)sh->w);
        const struct slab *p = &s->slab[0];
        while (y >= p->r1)
            p++;
        uint16_t bits = 0;
        CUDA_CHECK(cudaSetDevice(p->device));
        CUDA_CHECK(cudaMemcpy(&bits,
                              (const char *)split_output_row(s, p, n, y) +
                                  ((size_t)x * sh->cout + k) * FP16_BYTES,
                              FP16_BYTES, cudaMemcpyDeviceToHost));
        double magnitude = 0;
        const double ref = reference(sh, n, k, y, x, &magnitude);
        const size_t at = (((size_t)n * sh->cout + k) * sh->h + y) * sh->w + x;
        check_add(&acc, at, half_bits_to_float(bits), ref, magnitude, tol);
    }
    return check_end(&acc);
}

int main(int argc, char **argv)
{
    struct int_flag flags[] = {
        {"--gpus", "GPUs to split the layer over, from device 0 (0: every one)", 0,
         SPLIT_MAX_GPUS, 0},
        {"--batch", "images", 1, 100000, 200},
        {"--height", "rows of an image", 1, 1 << 20, 2048},
        {"--width", "columns of an image", 1, 1 << 20, 1024},
        {"--channels", "input and output channels", 1, 1024, 64},
        {"--ksize", "the filter's side, odd", 1, 31, 3},
        {"--reps", "timed runs", 1, 1000, 10},
        {"--samples", "outputs checked against float64", 0, 1000000, 4096},
    };
    bool done = false;
    const int rc = int_flags_parse(argc, argv,
                                   "usage: big_layer [--gpus N] [--batch B] [--height H] "
                                   "[--width W] [--channels C] [--ksize K] [--reps R] "
                                   "[--samples S]",
                                   flags, (int)(sizeof flags / sizeof flags[0]), &done);
    if (rc || done)
        return rc;
    const struct conv_shape shape = {(int)flags[1].value, (int)flags[4].value,
                                     (int)flags[4].value, (int)flags[2].value,
                                     (int)flags[3].value, (int)flags[5].value, true};
    if (shape.ksize % 2 == 0) {
        print_error("--ksize %d: the lessons' filters are odd", shape.ksize);
        return EXIT_USAGE;
    }
    if ((double)shape.h * shape.w * shape.cin >= INT32_MAX) {
        print_error("--height %d --width %d --channels %d: one image of 2^31 elements or more; "
                    "the kernels index with 32-bit integers",
                    shape.h, shape.w, shape.cin);
        return EXIT_USAGE;
    }
    int gpus = 0;
    const int found = several_gpus("big_layer", (int)flags[0].value, &gpus);
    if (found)
        return found;
    /* What lesson 12's variants need (its main.c): lesson 08's mma.sync. */
    const struct gpu_needs needs = {.cc = 80, .smem_bytes = mma_smem_bytes};
    struct gpu_info info;
    gpu_query(0, &info);
    char why[256];
    if (gpu_needs_unmet(&needs, &info, &shape, why, sizeof why)) {
        fprintf(stderr, "skipped: big_layer runs lesson 08's mma.sync, which %s\n", why);
        return EXIT_SKIP;
    }
    if (!fits(&shape, gpus))
        return EXIT_USAGE;

    struct conv_args a = {.shape = shape, .device = 0, .gpus = gpus};
    upload_weights(&shape, (void **)&a.weights, (float **)&a.bias);
    CUDA_CHECK(cudaStreamCreateWithFlags(&a.stream, cudaStreamNonBlocking));
    setup_rows_overlap(&a); /* no a.input: the slabs are left for draw_slabs */
    const struct split *s = &the_split;
    draw_slabs(s);

    const double bytes = (double)shape.n * shape.h * shape.w * (shape.cin + shape.cout) *
                         FP16_BYTES;
    printf("big_layer | %d x %s | rows_overlap, lesson 08's fastest fp16 kernel on each GPU\n",
           gpus, info.name);
    printf("layer: %d images of %d x %d, %d -> %d channels, %dx%d, fp16 NHWC: input and output "
           "%.1f GB (one GPU has %.1f GB); each GPU holds %d or %d rows of every image and its "
           "halo\n",
           shape.n, shape.h, shape.w, shape.cin, shape.cout, shape.ksize, shape.ksize,
           gigabytes(bytes), gigabytes((double)info.total_bytes), shape.h / gpus,
           (shape.h + gpus - 1) / gpus);
    const struct timing t = time_runs(&a, (int)flags[6].value);
    printf("time: median %.3f ms, min %.3f ms over %d runs after one untimed: %.1f TFLOP/s\n",
           t.median_ms, t.min_ms, (int)flags[6].value,
           conv_flops(&shape) / (t.median_ms * 1e9));
    const long differ = check_slabs(s);
    printf("check, each slab alone on its GPU (its halo drawn, not received): %ld of %d images "
           "differ: %s\n",
           differ, shape.n, differ ? "FAIL" : "PASS");
    const struct check_result c = check_samples(s, (int)flags[7].value);
    printf("check, %zu outputs against float64: %zu fail, max abs error %.3g: %s\n", c.checked,
           c.failures, c.max_abs, c.pass ? "PASS" : "FAIL");
    teardown_rows_overlap(&a);
    CUDA_CHECK(cudaSetDevice(0));
    CUDA_CHECK(cudaStreamDestroy(a.stream));
    CUDA_CHECK(cudaFree((void *)a.weights));
    CUDA_CHECK(cudaFree((void *)a.bias));
    return differ == 0 && c.pass ? 0 : 1;
}
