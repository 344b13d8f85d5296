/* The recipe every lesson follows: parse, load or draw the inputs, compute the gold
 * reference, then for each variant run once and check, time, and report. */
#include "lesson.h"

#include <math.h>
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "cuda_check.h"
#include "cudnn_baseline.h"
#include "fileutil.h"
#include "gold.h"
#include "gpu_info.h"
#include "gpu_runner.h"
#include "host_info.h"
#include "inputs.h"
#include "npy.h"
#include "report.h"
#include "roofline.h"

#define EXIT_PASS 0
#define EXIT_FAIL 1
#define EXIT_USAGE 2
#define EXIT_NO_GPU 77
#define EXIT_DONE (-1) /* --help or --list-presets: nothing to run */
#define ERROR_SIZE 512

/* Everything a run needs after set-up. */
struct run {
    const struct lesson *lesson;
    struct options opts;
    struct host_problem host;
    bool have_gpu;
    const char *no_gpu_reason;
    struct gpu_info gpu;
    struct gpu_buffers buffers;
    struct gold gold;
    float *host_out; /* a result copied back (GPU) or computed (CPU) */
    double cudnn_ms; /* NAN until the cuDNN row ran */
    int failures;
};

static const char *variant_blocker(const struct run *r, const struct conv_variant *v)
{
    return v->unsupported ? v->unsupported(&r->host.shape) : NULL;
}

/* Picks the GPU, or says why there is none. A GPU lesson without one exits 77. */
static int open_gpu(struct run *r)
{
    const char *why = NULL;
    int count = gpu_count(&why);
    bool needed = r->lesson->target == TARGET_GPU;
    if (count == 0) {
        if (needed) {
            fprintf(stderr, "skipped: %s needs a CUDA GPU and found none (%s)\n",
                    r->lesson->name, why);
            return EXIT_NO_GPU;
        }
        r->no_gpu_reason = why;
        return EXIT_PASS;
    }
    if (r->opts.device >= count) {
        fprintf(stderr, "error: --device %d: this machine has %d CUDA device%s (0..%d)\n",
                r->opts.device, count, count == 1 ? "" : "s", count - 1);
        return EXIT_USAGE;
    }
    gpu_query(r->opts.device, &r->gpu);
    int cc = r->gpu.cc_major * 10 + r->gpu.cc_minor;
    if (needed && cc < r->lesson->min_compute_capability) {
        fprintf(stderr, "skipped: %s needs compute capability %d.%d; %s is %d.%d\n",
                r->lesson->name, r->lesson->min_compute_capability / 10,
                r->lesson->min_compute_capability % 10, r->gpu.name, r->gpu.cc_major,
                r->gpu.cc_minor);
        return EXIT_NO_GPU;
    }
    const struct conv_shape *s = &r->host.shape;
    size_t need = buffer_set_bytes(s) + (weight_count(s) + bias_count(s)) * sizeof(float);
    if (need > r->gpu.free_bytes) {
        fprintf(stderr, "error: the problem needs %.2f GB of GPU memory and %s has %.2f GB "
                        "free: use a smaller --size, --batch or channel count\n",
                need / 1e9, r->gpu.name, r->gpu.free_bytes / 1e9);
        return EXIT_USAGE;
    }
    r->have_gpu = true;
    gpu_measure_copy_bandwidth(&r->gpu);
    int sets = r->opts.mode == MODE_BENCH
                   ? buffer_sets_for(s, r->gpu.l2_bytes, r->gpu.free_bytes) : 1;
    gpu_buffers_create(&r->buffers, s, sets, r->host.input, r->host.weights, r->host.bias);
    return EXIT_PASS;
}

static void print_header(const struct run *r)
{
    char cpu[320];
    cpu_description(omp_get_max_threads(), cpu, sizeof cpu);
    printf("lesson %s | ", r->lesson->name);
    if (r->lesson->target == TARGET_CPU)
        printf("CPU %s | ", cpu);
    if (r->have_gpu)
        printf("%s | cc %d.%d | %d SMs | L2 %.0f MB | copy %.0f GB/s | fp32 peak %.1f TFLOP/s",
               r->gpu.name, r->gpu.cc_major, r->gpu.cc_minor, r->gpu.sm_count,
               r->gpu.l2_bytes / 1e6, r->gpu.copy_gbps, r->gpu.peak_gflops / 1e3);
    else
        printf("no GPU (%s): GPU rows skipped", r->no_gpu_reason);
    printf("\n");
}

static struct roofline roofline_for(const struct run *r, double flops)
{
    struct roofline roof = {conv_min_bytes(&r->host.shape), flops, r->gpu.copy_gbps,
                            r->gpu.peak_gflops};
    return roof;
}

static void print_problem(const struct run *r)
{
    const struct conv_shape *s = &r->host.shape;
    printf("problem %s: n=%d cin=%d cout=%d %dx%d ksize=%d %s | %.3f GB min traffic, "
           "%.3f GFLOP | seed %llu\n",
           r->opts.preset, s->n, s->cin, s->cout, s->h, s->w, s->ksize,
           s->bias ? "bias" : "no bias", conv_min_bytes(s) / 1e9, conv_flops(s) / 1e9,
           (unsigned long long)r->opts.seed);
    if (r->have_gpu) {
        struct roofline roof = roofline_for(r, conv_flops(s));
        size_t set_mb = buffer_set_bytes(s) >> 20;
        printf("roofline %.4f ms (%s-bound) | cache: ", roofline_time_ms(&roof),
               roofline_memory_bound(&roof) ? "memory" : "compute");
        if (r->buffers.sets > 1)
            printf("rotating %d buffer sets of %zu MB (L2 %zu MB)", r->buffers.sets, set_mb,
                   r->gpu.l2_bytes >> 20);
        else
            printf("one buffer set of %zu MB (L2 %zu MB)", set_mb, r->gpu.l2_bytes >> 20);
    }
    if (r->opts.verify)
        printf("%scheck: %s, %zu outputs against float64\n", r->have_gpu ? " | " : "",
               r->gold.sampled ? "sampled" : "every output", r->gold.count);
    else
        printf("%scheck: off (--no-verify)\n", r->have_gpu ? " | " : "");
}

static void enqueue_variant(void *context, const struct gpu_buffers *b, int set)
{
    const struct conv_variant *v = context;
    struct conv_args a = gpu_args(b, set);
    v->run(&a);
}

static void enqueue_cudnn(void *context, const struct gpu_buffers *b, int set)
{
    cudnn_conv_run(context, b->input[set], b->weights, b->output[set]);
}

static void check_into(struct run *r, struct result_row *row)
{
    row->verified = r->opts.verify;
    if (!row->verified)
        return;
    row->check = check_output(&r->gold, r->host_out, tolerance_for(row->dtype, &r->host.shape));
    if (!row->check.pass)
        r->failures++;
}

/* Rates and roofline of the variant's own algorithm: the direct FLOP count unless
 * the variant says it does less. */
static void fill_rates(const struct run *r, struct result_row *row, double flops, bool gpu_row)
{
    const struct conv_shape *s = &r->host.shape;
    row->gbps = achieved_gbps(conv_min_bytes(s), row->time.median_ms);
    row->gflops = achieved_gflops(flops, row->time.median_ms);
    struct roofline roof = roofline_for(r, flops);
    row->roofline_pct = gpu_row ? roofline_percent(&roof, row->time.median_ms) : NAN;
    row->cudnn_ms = r->cudnn_ms;
}

static void emit(struct run *r, const struct result_row *row)
{
    print_row(row);
    if (row->skipped)
        return;
    struct run_context ctx = {r->lesson->name, r->opts.preset, r->host.shape, r->opts.csv_path};
    if (r->opts.csv_path && !csv_append(&ctx, row))
        r->failures++;
}

static struct conv_args host_args(const struct run *r)
{
    struct conv_args a = {r->host.shape, r->host.input, r->host.weights, r->host.bias,
                          r->host_out};
    return a;
}

/* prepare() once, untimed; then one run into a poisoned output, checked against gold. */
static void run_and_check(struct run *r, const struct conv_variant *v, struct result_row *row)
{
    if (r->lesson->target == TARGET_GPU) {
        struct conv_args a = gpu_args(&r->buffers, 0);
        if (v->prepare)
            v->prepare(&a);
        gpu_run_once(enqueue_variant, (void *)v, &r->buffers, r->host_out);
    } else {
        struct conv_args a = host_args(r);
        if (v->prepare)
            v->prepare(&a);
        for (size_t i = 0; i < output_count(&r->host.shape); i++)
            r->host_out[i] = NAN;
        v->run(&a);
    }
    check_into(r, row);
}

static struct timing cpu_time(const struct run *r, const struct conv_variant *v)
{
    struct conv_args a = host_args(r);
    double *samples = malloc((size_t)r->opts.reps * sizeof *samples);
    if (!samples) {
        fprintf(stderr, "error: out of host memory\n");
        exit(EXIT_FAIL);
    }
    for (int i = 0; i < r->opts.warmup; i++)
        v->run(&a);
    for (int i = 0; i < r->opts.reps; i++) {
        double t0 = host_now_ms();
        v->run(&a);
        samples[i] = host_now_ms() - t0;
    }
    struct timing t = timing_from_samples(samples, r->opts.reps);
    free(samples);
    return t;
}

static struct result_row bench_variant(struct run *r, const struct conv_variant *v,
                                       char *device, size_t device_size)
{
    struct result_row row = {.variant = v->name, .dtype = v->dtype, .device = device};
    bool gpu = r->lesson->target == TARGET_GPU;
    if (gpu)
        snprintf(device, device_size, "%s", r->gpu.name);
    else
        cpu_description(v->parallel ? omp_get_max_threads() : 1, device, device_size);
    run_and_check(r, v, &row);
    row.time = gpu ? gpu_time(enqueue_variant, (void *)v, &r->buffers, r->opts.warmup,
                              r->opts.reps)
                   : cpu_time(r, v);
    double flops = v->flops ? v->flops(&r->host.shape) : conv_flops(&r->host.shape);
    fill_rates(r, &row, flops, gpu);
    return row;
}

/* cuDNN computes the convolution without bias; the bias is added here, on the host
 * and untimed, before the same check every variant gets. */
static void bench_cudnn(struct run *r)
{
    if (!r->have_gpu || !r->opts.cudnn)
        return;
    struct result_row row = {.variant = "cudnn", .dtype = DTYPE_FP32, .device = r->gpu.name};
    const char *why = NULL;
    struct cudnn_conv *c = cudnn_conv_create(&r->host.shape, &why);
    if (!c) {
        row.skipped = why;
        print_row(&row);
        return;
    }
    gpu_run_once(enqueue_cudnn, c, &r->buffers, r->host_out);
    const struct conv_shape *s = &r->host.shape;
    if (s->bias) {
        size_t plane = (size_t)s->h * s->w;
        for (size_t i = 0; i < output_count(s); i++)
            r->host_out[i] += r->host.bias[i / plane % s->cout];
    }
    check_into(r, &row);
    row.time = gpu_time(enqueue_cudnn, c, &r->buffers, r->opts.warmup, r->opts.reps);
    r->cudnn_ms = row.time.median_ms;
    fill_rates(r, &row, conv_flops(&r->host.shape), true);
    printf("(cuDNN algorithm: %s, conv without bias)\n", cudnn_conv_algorithm(c));
    emit(r, &row);
    cudnn_conv_destroy(c);
}

static void run_bench(struct run *r)
{
    print_table_header();
    bench_cudnn(r);
    double gflop = conv_flops(&r->host.shape) / 1e9;
    for (int i = 0; i < r->lesson->variant_count; i++) {
        const struct conv_variant *v = &r->lesson->variants[i];
        if (r->opts.variant && strcmp(r->opts.variant, v->name) != 0)
            continue;
        char device[320], reason[160];
        struct result_row row = {.variant = v->name, .dtype = v->dtype, .device = device};
        row.skipped = variant_blocker(r, v);
        if (!row.skipped && !r->opts.variant && v->max_gflop > 0 && gflop > v->max_gflop) {
            snprintf(reason, sizeof reason, "%.0f GFLOP is over its limit of %.0f "
                     "(too slow; run it with --variant %s)", gflop, v->max_gflop, v->name);
            row.skipped = reason;
        }
        if (!row.skipped)
            row = bench_variant(r, v, device, sizeof device);
        emit(r, &row);
    }
}

/* Image and .npy modes: one run of one variant, checked, then written. */
static const struct conv_variant *single_variant(const struct run *r)
{
    const char *name = r->opts.variant ? r->opts.variant : r->lesson->image_variant;
    for (int i = 0; i < r->lesson->variant_count; i++)
        if (strcmp(r->lesson->variants[i].name, name) == 0)
            return &r->lesson->variants[i];
    return &r->lesson->variants[0];
}

static bool write_result(const struct run *r, char *err, size_t err_size)
{
    const struct conv_shape *s = &r->host.shape;
    if (r->opts.mode == MODE_IMAGE) {
        struct image out = r->host.image;
        out.data = r->host_out;
        for (size_t i = 0; i < output_count(s); i++)
            out.data[i] = fabsf(out.data[i]); /* edge filters give signed responses */
        return image_write(r->opts.image_out_path, &out, err, err_size);
    }
    if (!r->opts.output_path)
        return true;
    size_t shape[4] = {(size_t)s->n, (size_t)s->cout, (size_t)s->h, (size_t)s->w};
    int ndim = s->cout == 1 && r->host.input_ndim < 4 ? r->host.input_ndim : 4;
    return npy_write(r->opts.output_path, r->host_out, ndim, shape + (4 - ndim), err, err_size);
}

static void run_single(struct run *r)
{
    const struct conv_variant *v = single_variant(r);
    struct result_row row = {.variant = v->name, .dtype = v->dtype};
    run_and_check(r, v, &row);
    const char *status = row_status(&row);
    const char *path = r->opts.mode == MODE_IMAGE ? r->opts.image_out_path : r->opts.output_path;
    if (row.verified && !row.check.pass) {
        printf("variant %s: FAIL (%zu of %zu outputs off, max abs error %.3e): nothing written\n",
               v->name, row.check.failures, row.check.checked, row.check.max_abs);
        return;
    }
    char err[ERROR_SIZE];
    if (!write_result(r, err, sizeof err)) {
        fprintf(stderr, "error: %s\n", err);
        r->failures++;
        return;
    }
    printf("variant %s: %s%s%s\n", v->name, status, path ? ", wrote " : "", path ? path : "");
}

static int check_variants_apply(const struct run *r)
{
    const char *reason = NULL;
    for (int i = 0; i < r->lesson->variant_count; i++) {
        const struct conv_variant *v = &r->lesson->variants[i];
        bool chosen = r->opts.mode == MODE_BENCH ? !r->opts.variant ||
                                                       strcmp(r->opts.variant, v->name) == 0
                                                 : v == single_variant(r);
        if (!chosen)
            continue;
        reason = variant_blocker(r, v);
        if (!reason)
            return EXIT_PASS;
    }
    fprintf(stderr, "error: %s cannot run this problem: %s\n",
            r->opts.variant ? r->opts.variant : r->lesson->name, reason ? reason : "?");
    return EXIT_USAGE;
}

static int setup(struct run *r, int argc, char **argv)
{
    switch (parse_options(r->lesson, argc, argv, &r->opts)) {
    case CLI_EXIT_OK: return EXIT_DONE;
    case CLI_EXIT_USAGE: return EXIT_USAGE;
    case CLI_RUN: break;
    }
    int rc = load_inputs(r->lesson, &r->opts, &r->host);
    if (rc)
        return rc;
    if (r->lesson->check_weights) {
        const char *why = r->lesson->check_weights(&r->host.shape, r->host.weights);
        if (why) {
            fprintf(stderr, "error: %s\n", why);
            return EXIT_USAGE;
        }
    }
    if ((rc = check_variants_apply(r)) != EXIT_PASS)
        return rc;
    if ((rc = open_gpu(r)) != EXIT_PASS)
        return rc;
    r->host_out = malloc(output_count(&r->host.shape) * sizeof *r->host_out);
    if (!r->host_out) {
        fprintf(stderr, "error: out of host memory for the output\n");
        return EXIT_FAIL;
    }
    if (r->opts.verify && !gold_compute(&r->gold, &r->host.shape, r->host.input,
                                        r->host.weights, r->host.bias, r->opts.seed)) {
        fprintf(stderr, "error: out of host memory for the reference\n");
        return EXIT_FAIL;
    }
    return EXIT_PASS;
}

int lesson_main(const struct lesson *lesson, int argc, char **argv)
{
    struct run r = {.lesson = lesson, .cudnn_ms = NAN};
    int rc = setup(&r, argc, argv);
    if (rc == EXIT_PASS) {
        print_header(&r);
        print_problem(&r);
        if (r.opts.mode == MODE_BENCH)
            run_bench(&r);
        else
            run_single(&r);
        rc = r.failures ? EXIT_FAIL : EXIT_PASS;
    } else if (rc == EXIT_DONE) {
        rc = EXIT_PASS;
    }
    if (r.have_gpu)
        gpu_buffers_free(&r.buffers);
    gold_free(&r.gold);
    free(r.host_out);
    free_inputs(&r.host);
    return rc;
}
