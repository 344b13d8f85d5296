/* The recipe every lesson follows: parse, load or draw the inputs, then for each
 * cuDNN baseline and each variant: convert the inputs to its format, run once and
 * check against the float64 gold of the inputs as that format stores them, time,
 * and report. */
#include "lesson.h"

#include <math.h>
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "alloc.h"
#include "cli.h"
#include "cuda_check.h"
#include "cudnn_baseline.h"
#include "cudnn_rows.h"
#include "escape.h"
#include "fileutil.h"
#include "gold.h"
#include "gpu_info.h"
#include "gpu_runner.h"
#include "host_info.h"
#include "inputs.h"
#include "npy.h"
#include "op_run.h"
#include "report.h"
#include "rng.h"
#include "roofline.h"
#include "session.h"
#include "xnor_scale.h"

#define EXIT_DONE (-1) /* --help or --list-presets: nothing to run */
#define ERROR_SIZE 512
/* A baseline for binary variants is cuDNN at fp32 and at fp16 NHWC. */
#define MAX_BASELINES_PER_FORMAT 2
#define MAX_BASELINES 16
/* Sets after the first get inputs from seeds this far apart. */
#define SET_SEED_STRIDE 0x9e3779b97f4a7c15ull

/* The inputs as one dtype stores them (fp16, bf16 and binary round them), and the
 * gold reference of exactly those inputs. */
struct rounded_inputs {
    bool ready;
    float *input, *weights; /* owned, or the host problem's own arrays for fp32 */
    float *scale;           /* binary: alpha[k] (the weights are alpha[k] * sign), else NULL */
    struct gold gold;
};

/* One cuDNN row's format and, once it ran, its time. */
struct baseline {
    struct baseline_format format;
    double median_ms; /* NAN when it did not run */
};

/* Everything a run needs after set-up. */
struct run {
    const struct lesson *lesson;
    struct options opts;
    struct host_problem host;
    struct session session;
    struct rounded_inputs rounded[DTYPE_COUNT]; /* indexed by rounding_of(dtype) */
    struct baseline baselines[MAX_BASELINES];
    int baseline_count;
    float *host_out; /* a result copied back (GPU) or computed (CPU), float32 NCHW */
    int failures;
};

/* A variant and the scratch memory the harness gave it. */
struct variant_run {
    const struct conv_variant *variant;
    void *scratch;
};

static const char *variant_blocker(const struct run *r, const struct conv_variant *v)
{
    if (r->session.have_gpu && v->unsupported_gpu) {
        const char *why = v->unsupported_gpu(&r->session.gpu);
        if (why)
            return why;
    }
    return v->unsupported ? v->unsupported(&r->host.shape) : NULL;
}

/* dtypes whose inputs are the same values share one gold. */
static enum dtype rounding_of(enum dtype d)
{
    return d == DTYPE_FP16 || d == DTYPE_BF16 || d == DTYPE_BINARY ? d : DTYPE_FP32;
}

static float *rounded_copy(const float *x, size_t count, enum dtype d)
{
    float *y = host_alloc(count * sizeof *y, "a rounded copy of the inputs");
    for (size_t i = 0; i < count; i++)
        y[i] = dtype_round(d, x[i]);
    return y;
}

static struct rounded_inputs *inputs_for(struct run *r, enum dtype d)
{
    enum dtype key = rounding_of(d);
    struct rounded_inputs *ri = &r->rounded[key];
    if (ri->ready)
        return ri;
    const struct conv_shape *s = &r->host.shape;
    ri->ready = true;
    if (key == DTYPE_FP32) {
        ri->input = r->host.input;
        ri->weights = r->host.weights;
    } else if (key == DTYPE_BINARY) {
        ri->input = rounded_copy(r->host.input, input_count(s), key);
        ri->weights = host_alloc(weight_count(s) * sizeof *ri->weights, "the binary weights");
        ri->scale = host_alloc((size_t)s->cout * sizeof *ri->scale, "the scaling factors");
        xnor_scale_weights(s, r->host.weights, ri->scale, ri->weights);
    } else {
        ri->input = rounded_copy(r->host.input, input_count(s), key);
        ri->weights = rounded_copy(r->host.weights, weight_count(s), key);
    }
    if (r->opts.verify)
        gold_compute(&ri->gold, s, ri->input, ri->weights, r->host.bias, r->opts.seed);
    return ri;
}

static void free_rounded(struct run *r)
{
    for (int d = 0; d < DTYPE_COUNT; d++) {
        struct rounded_inputs *ri = &r->rounded[d];
        if (ri->input != r->host.input)
            free(ri->input);
        if (ri->weights != r->host.weights)
            free(ri->weights);
        free(ri->scale);
        gold_free(&ri->gold);
    }
}

/* Buffer set 0 holds the problem's input; every other set a fresh random input of
 * the same kind, so that no two sets are the same data. */
struct draw_context {
    struct run *run;
    enum dtype dtype;
};

static void draw_set_input(void *context, int set, float *input)
{
    struct draw_context *dc = context;
    const struct conv_shape *s = &dc->run->host.shape;
    size_t count = input_count(s);
    if (set == 0) {
        memcpy(input, inputs_for(dc->run, dc->dtype)->input, count * sizeof *input);
        return;
    }
    struct rng g = rng_seeded(dc->run->opts.seed + (uint64_t)set * SET_SEED_STRIDE);
    fill_uniform(input, count, -1.0f, 1.0f, &g);
    for (size_t i = 0; i < count; i++)
        input[i] = dtype_round(dc->dtype, input[i]);
}

/* Buffer sets to rotate over in this format: one outside bench mode. */
static int sets_for(const struct run *r, enum dtype d, enum layout l, enum output_format o)
{
    if (r->opts.mode != MODE_BENCH)
        return 1;
    return buffer_sets_for(buffer_set_bytes(&r->host.shape, d, l, o), r->session.gpu.l2_bytes,
                           r->session.gpu.free_bytes);
}

static void create_buffers(struct run *r, struct gpu_buffers *b, enum dtype d, enum layout l,
                           enum output_format o)
{
    const struct conv_shape *s = &r->host.shape;
    int sets = sets_for(r, d, l, o);
    struct draw_context dc = {r, d};
    struct rounded_inputs *ri = inputs_for(r, d);
    gpu_buffers_create(b, s, d, l, o, sets, draw_set_input, &dc, ri->weights, r->host.bias,
                       r->session.stream);
    if (ri->scale)
        gpu_buffers_upload_scale(b, ri->scale);
}

/* The GPU, or why there is none (a GPU lesson without one exits 77), and room for
 * the problem on it. */
static int open_gpu(struct run *r)
{
    const struct lesson *l = r->lesson;
    int rc = session_open(&r->session, l->name, l->target == TARGET_GPU, l->min_compute_capability,
                          r->opts.device);
    if (rc != EXIT_PASS || !r->session.have_gpu)
        return rc;
    /* float32 NCHW is the largest format: if it fits, every format does. */
    const struct conv_shape *s = &r->host.shape;
    size_t need = buffer_set_bytes(s, DTYPE_FP32, LAYOUT_NCHW, OUTPUT_VALUES) +
                  (weight_count(s) + bias_count(s)) * sizeof(float);
    if (need > r->session.gpu.free_bytes) {
        print_error("out of GPU memory: the problem needs %.2f GB and %s has %.2f GB free: use "
                    "a smaller --size, --batch or channel count",
                    need / 1e9, r->session.gpu.name, r->session.gpu.free_bytes / 1e9);
        return EXIT_USAGE;
    }
    return EXIT_PASS;
}

/* Minimum traffic of one run in a format: each tensor once, at its element size (the
 * output at one bit per value when the variant writes packed signs). */
static double min_bytes(const struct conv_shape *s, enum dtype d, enum layout l,
                        enum output_format o)
{
    struct dims4 w = {s->cout, s->cin, s->ksize, s->ksize};
    return (double)buffer_set_bytes(s, d, l, o) + (double)tensor_bytes(w, d, l) +
           (double)bias_count(s) * sizeof(float);
}

static void print_problem(const struct run *r)
{
    const struct conv_shape *s = &r->host.shape;
    double bytes = min_bytes(s, DTYPE_FP32, LAYOUT_NCHW, OUTPUT_VALUES);
    printf("problem %s: n=%d cin=%d cout=%d %dx%d ksize=%d %s | %.3f GB min traffic at fp32, "
           "%.3f GFLOP | seed %llu\n",
           r->opts.preset, s->n, s->cin, s->cout, s->h, s->w, s->ksize,
           s->bias ? "bias" : "no bias", bytes / 1e9, conv_flops(s) / 1e9,
           (unsigned long long)r->opts.seed);
    if (r->session.have_gpu) {
        struct roofline roof = session_roofline(&r->session, bytes, conv_flops(s), DTYPE_FP32);
        size_t set_mb = buffer_set_bytes(s, DTYPE_FP32, LAYOUT_NCHW, OUTPUT_VALUES) >> 20;
        int sets = sets_for(r, DTYPE_FP32, LAYOUT_NCHW, OUTPUT_VALUES);
        printf("fp32 roofline %.4f ms (%s-bound) | cache: ", roofline_time_ms(&roof),
               roofline_memory_bound(&roof) ? "memory" : "compute");
        if (sets > 1)
            printf("rotating %d buffer sets of %zu MB at fp32 (L2 %zu MB)", sets, set_mb,
                   r->session.gpu.l2_bytes >> 20);
        else
            printf("one buffer set of %zu MB at fp32 (L2 %zu MB)", set_mb,
                   r->session.gpu.l2_bytes >> 20);
    }
    if (r->opts.verify)
        printf("%scheck: %s against float64 of the inputs as each dtype stores them\n",
               r->session.have_gpu ? " | " : "", gold_is_sampled(s) ? "sampled" : "every output");
    else
        printf("%scheck: off (--no-verify)\n", r->session.have_gpu ? " | " : "");
}

static void enqueue_variant(void *context, const struct gpu_buffers *b, int set)
{
    const struct variant_run *vr = context;
    struct conv_args a = gpu_args(b, set);
    a.scratch = vr->scratch;
    vr->variant->run(&a);
}

static struct check_result check_against(struct run *r, enum dtype d, const float *out)
{
    return check_output(&inputs_for(r, d)->gold, out, tolerance_for(d, &r->host.shape));
}

/* A variant that writes packed signs is checked, and its row says so in params. */
static void check_into(struct run *r, const struct conv_variant *v, struct result_row *row)
{
    row->verified = r->opts.verify;
    if (!row->verified)
        return;
    if (v->output == OUTPUT_SIGN_BITS) {
        const struct conv_shape *s = &r->host.shape;
        row->check =
            check_sign_bits(&inputs_for(r, row->dtype)->gold, (const uint32_t *)r->host_out, s,
                            tolerance_for(row->dtype, s));
        snprintf(row->params, sizeof row->params, "output=%s;near_zero=%zu",
                 output_format_name(v->output), row->check.near_zero);
    } else {
        row->check = check_against(r, row->dtype, r->host_out);
    }
    if (!row->check.pass)
        r->failures++;
}

/* Rates and roofline of the variant's own algorithm and format. */
static void fill_rates(const struct run *r, struct result_row *row, enum layout l,
                       enum output_format o, double flops, bool gpu_row)
{
    double bytes = min_bytes(&r->host.shape, row->dtype, l, o);
    session_fill_rates(&r->session, row, bytes, flops, gpu_row);
}

static void emit(struct run *r, const struct result_row *row)
{
    struct run_context ctx = {r->lesson->name, r->opts.preset, r->host.shape, r->opts.csv_path};
    if (!report_row(&ctx, row)) {
        r->failures++;
        r->opts.csv_path = NULL; /* one error line, not one per row */
    }
}

/* The cuDNN rows a variant of this format is compared with. */
static int baselines_of(enum dtype d, enum layout l, struct baseline_format *out)
{
    switch (d) {
    case DTYPE_BINARY:
        out[0] = (struct baseline_format){DTYPE_FP32, LAYOUT_NCHW};
        out[1] = (struct baseline_format){DTYPE_FP16, LAYOUT_NHWC};
        return 2;
    case DTYPE_3XTF32: out[0] = (struct baseline_format){DTYPE_FP32, l}; return 1;
    default: out[0] = (struct baseline_format){d, l}; return 1;
    }
}

static struct baseline *find_baseline(struct run *r, struct baseline_format f)
{
    for (int i = 0; i < r->baseline_count; i++)
        if (r->baselines[i].format.dtype == f.dtype && r->baselines[i].format.layout == f.layout)
            return &r->baselines[i];
    return NULL;
}

static void add_baseline(struct run *r, struct baseline_format f)
{
    if (!find_baseline(r, f) && r->baseline_count < MAX_BASELINES)
        r->baselines[r->baseline_count++] = (struct baseline){f, NAN};
}

/* The fastest cuDNN row among those the format is compared with. */
static double cudnn_ms_for(struct run *r, enum dtype d, enum layout l)
{
    struct baseline_format f[MAX_BASELINES_PER_FORMAT];
    double best = NAN;
    for (int i = 0, n = baselines_of(d, l, f); i < n; i++) {
        struct baseline *b = find_baseline(r, f[i]);
        if (b && !isnan(b->median_ms) && !(b->median_ms >= best))
            best = b->median_ms;
    }
    return best;
}

/* cuDNN computes the convolution without bias; the bias is added here, on the host
 * and untimed, before the same check every variant gets. */
struct cudnn_check_context {
    struct run *run;
    enum dtype dtype;
};

static struct check_result check_cudnn_output(void *context, float *out)
{
    struct cudnn_check_context *cc = context;
    const struct conv_shape *s = &cc->run->host.shape;
    if (!cc->run->opts.verify)
        return (struct check_result){.pass = true};
    if (s->bias) {
        size_t plane = (size_t)s->h * s->w;
        for (size_t i = 0; i < output_count(s); i++)
            out[i] += cc->run->host.bias[i / plane % s->cout];
    }
    return check_against(cc->run, cc->dtype, out);
}

static void bench_cudnn(struct run *r, struct baseline *base)
{
    enum dtype d = base->format.dtype;
    enum layout l = base->format.layout;
    struct result_row row = {
        .variant = "cudnn", .dtype = d, .layout = layout_name(l), .device = r->session.gpu.name};
    struct gpu_buffers b;
    create_buffers(r, &b, d, l, OUTPUT_VALUES);
    struct cudnn_check_context cc = {r, d};
    size_t free_bytes, total_bytes;
    CUDA_CHECK(cudaMemGetInfo(&free_bytes, &total_bytes));
    struct cudnn_row best = cudnn_best_row(&b, free_bytes, check_cudnn_output, &cc, r->host_out,
                                           r->opts.gpu_warmup, r->opts.gpu_reps);
    gpu_buffers_free(&b);
    printf("(cuDNN %s %s, conv without bias, every algorithm timed: %s)\n", dtype_name(d),
           layout_name(l), best.tried);
    if (best.skipped) {
        row.skipped = best.skipped;
        print_row(&row);
        return;
    }
    row.time = best.time;
    row.verified = r->opts.verify;
    row.check = best.check;
    if (row.verified && !row.check.pass)
        r->failures++;
    base->median_ms = row.time.median_ms;
    row.cudnn_ms = row.time.median_ms;
    int v = cudnn_version();
    snprintf(row.params, sizeof row.params, "algo=%s;cudnn=%d.%d.%d",
             cudnn_algorithm_name(best.algorithm), v / 10000, v % 10000 / 100, v % 100);
    fill_rates(r, &row, l, OUTPUT_VALUES, conv_flops(&r->host.shape), true);
    emit(r, &row);
}

static void *alloc_scratch(const struct run *r, const struct conv_variant *v)
{
    size_t bytes = v->scratch_bytes ? v->scratch_bytes(&r->host.shape) : 0;
    if (bytes == 0)
        return NULL;
    return r->lesson->target == TARGET_GPU ? gpu_alloc(bytes, "the variant's scratch")
                                           : host_alloc(bytes, "the variant's scratch");
}

static void free_scratch(const struct run *r, void *p)
{
    if (r->lesson->target == TARGET_GPU)
        CUDA_CHECK(cudaFree(p));
    else
        free(p);
}

static struct conv_args host_args(const struct run *r, void *scratch)
{
    struct conv_args a = {.shape = r->host.shape,
                          .input = r->host.input,
                          .weights = r->host.weights,
                          .bias = r->host.bias,
                          .output = r->host_out,
                          .scratch = scratch};
    return a;
}

/* One run into a poisoned output, checked against gold. */
static void run_and_check(struct run *r, const struct variant_run *vr, const struct gpu_buffers *b,
                          struct result_row *row)
{
    if (r->lesson->target == TARGET_GPU) {
        gpu_run_once(enqueue_variant, (void *)vr, b, r->host_out);
    } else {
        struct conv_args a = host_args(r, vr->scratch);
        for (size_t i = 0; i < output_count(&r->host.shape); i++)
            r->host_out[i] = NAN;
        vr->variant->run(&a);
    }
    check_into(r, vr->variant, row);
}

/* One CPU run of a variant on the host problem (host_time_runs' callback). */
struct host_run {
    const struct conv_variant *variant;
    struct conv_args args;
};

static void run_host(void *context)
{
    const struct host_run *hr = context;
    hr->variant->run(&hr->args);
}

static struct timing cpu_time(const struct run *r, const struct variant_run *vr)
{
    struct host_run hr = {vr->variant, host_args(r, vr->scratch)};
    return host_time_runs(run_host, &hr, r->opts.warmup, r->opts.reps);
}

/* setup, run and check, time (bench mode), teardown; the harness owns the scratch. */
static void run_variant(struct run *r, const struct conv_variant *v, const struct gpu_buffers *b,
                        struct result_row *row, bool timed)
{
    bool gpu = r->lesson->target == TARGET_GPU;
    struct variant_run vr = {v, alloc_scratch(r, v)};
    struct conv_args a = gpu ? gpu_args(b, 0) : host_args(r, NULL);
    a.scratch = vr.scratch;
    if (v->setup)
        v->setup(&a);
    if (gpu) /* setup may have used the default stream (cudaMemcpyToSymbol) */
        CUDA_CHECK(cudaDeviceSynchronize());
    run_and_check(r, &vr, b, row);
    if (timed)
        row->time = gpu ? gpu_time(enqueue_variant, &vr, b, r->opts.warmup, r->opts.reps)
                        : cpu_time(r, &vr);
    if (v->teardown)
        v->teardown(&a);
    if (gpu)
        CUDA_CHECK(cudaDeviceSynchronize());
    if (vr.scratch)
        free_scratch(r, vr.scratch);
}

static const char *over_limit(const struct run *r, const struct conv_variant *v, char *reason,
                              size_t size)
{
    double gflop = conv_flops(&r->host.shape) / 1e9;
    if (r->opts.variant || v->max_gflop <= 0 || gflop <= v->max_gflop)
        return NULL;
    snprintf(reason, size,
             "%.0f GFLOP is over its limit of %.0f (too slow; run it with "
             "--variant %s)",
             gflop, v->max_gflop, v->name);
    return reason;
}

static bool selected(const struct run *r, const struct conv_variant *v)
{
    return !r->opts.variant || strcmp(r->opts.variant, v->name) == 0;
}

static void collect_baselines(struct run *r)
{
    if (!r->session.have_gpu || !r->opts.cudnn)
        return;
    char reason[160];
    for (int i = 0; i < r->lesson->variant_count; i++) {
        const struct conv_variant *v = &r->lesson->variants[i];
        if (!selected(r, v) || variant_blocker(r, v) || over_limit(r, v, reason, sizeof reason))
            continue;
        struct baseline_format f[MAX_BASELINES_PER_FORMAT];
        for (int j = 0, n = baselines_of(v->dtype, v->layout, f); j < n; j++)
            add_baseline(r, f[j]);
    }
    for (int i = 0; i < r->lesson->extra_baseline_count; i++)
        add_baseline(r, r->lesson->extra_baselines[i]);
}

static void run_bench(struct run *r)
{
    print_table_header();
    collect_baselines(r);
    for (int i = 0; i < r->baseline_count; i++)
        bench_cudnn(r, &r->baselines[i]);
    bool gpu = r->lesson->target == TARGET_GPU;
    struct gpu_buffers b = {0};
    bool have_buffers = false;
    for (int i = 0; i < r->lesson->variant_count; i++) {
        const struct conv_variant *v = &r->lesson->variants[i];
        if (!selected(r, v))
            continue;
        char device[320], reason[160];
        struct result_row row = {.variant = v->name,
                                 .dtype = v->dtype,
                                 .layout = layout_name(v->layout),
                                 .device = device};
        row.skipped = variant_blocker(r, v);
        if (!row.skipped)
            row.skipped = over_limit(r, v, reason, sizeof reason);
        if (row.skipped) {
            emit(r, &row);
            continue;
        }
        if (gpu) {
            snprintf(device, sizeof device, "%s", r->session.gpu.name);
            if (have_buffers &&
                (b.dtype != v->dtype || b.layout != v->layout || b.output_format != v->output)) {
                gpu_buffers_free(&b);
                have_buffers = false;
            }
            if (!have_buffers)
                create_buffers(r, &b, v->dtype, v->layout, v->output);
            have_buffers = true;
        } else {
            cpu_description(v->parallel ? omp_get_max_threads() : 1, device, sizeof device);
        }
        run_variant(r, v, &b, &row, true);
        double flops = v->flops ? v->flops(&r->host.shape) : conv_flops(&r->host.shape);
        fill_rates(r, &row, v->layout, v->output, flops, gpu);
        row.cudnn_ms = cudnn_ms_for(r, v->dtype, v->layout);
        emit(r, &row);
    }
    if (have_buffers)
        gpu_buffers_free(&b);
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
    struct result_row row = {
        .variant = v->name, .dtype = v->dtype, .layout = layout_name(v->layout)};
    struct gpu_buffers b = {0};
    bool gpu = r->lesson->target == TARGET_GPU;
    if (gpu)
        create_buffers(r, &b, v->dtype, v->layout, v->output);
    run_variant(r, v, &b, &row, false);
    if (gpu)
        gpu_buffers_free(&b);
    const char *path = r->opts.mode == MODE_IMAGE ? r->opts.image_out_path : r->opts.output_path;
    if (!result_may_be_written(&row))
        return;
    char err[ERROR_SIZE];
    if (!write_result(r, err, sizeof err)) {
        print_error("%s %s", r->opts.mode == MODE_IMAGE ? "--out" : "--output", err);
        r->failures++;
        return;
    }
    print_written(&row, path);
}

static int check_variants_apply(const struct run *r)
{
    if (r->lesson->variant_count == 0) {
        if (r->opts.mode == MODE_BENCH)
            return EXIT_PASS; /* baseline rows only */
        print_error("%s has no kernel variant to apply: --input and --image need a lesson",
                    r->lesson->name);
        return EXIT_USAGE;
    }
    const char *reason = NULL;
    for (int i = 0; i < r->lesson->variant_count; i++) {
        const struct conv_variant *v = &r->lesson->variants[i];
        bool chosen = r->opts.mode == MODE_BENCH ? selected(r, v) : v == single_variant(r);
        if (!chosen)
            continue;
        reason = variant_blocker(r, v);
        if (!reason && r->opts.mode != MODE_BENCH && v->output == OUTPUT_SIGN_BITS)
            reason = "it writes packed signs; --input and --image write values";
        if (!reason)
            return EXIT_PASS;
    }
    print_error("%s cannot run this problem: %s",
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
        if (why) { /* named by the file or filter the weights came from, if any */
            const char *from = r->opts.weights_path ? r->opts.weights_path : r->opts.filter_spec;
            if (from)
                print_error("%s %s: %s", r->opts.weights_path ? "--weights" : "--filter", from,
                            why);
            else
                print_error("%s", why);
            return EXIT_USAGE;
        }
    }
    if ((rc = check_variants_apply(r)) != EXIT_PASS)
        return rc;
    r->host_out = host_alloc(output_count(&r->host.shape) * sizeof *r->host_out, "the output");
    if ((rc = open_gpu(r)) != EXIT_PASS)
        return rc;
    /* Once more now that the GPU is known (a variant's unsupported_gpu): bench mode shows
     * a variant this GPU cannot run as a skipped row, but the one variant --input or
     * --image applies would otherwise be launched on it. */
    return r->opts.mode == MODE_BENCH ? EXIT_PASS : check_variants_apply(r);
}

int lesson_main(const struct lesson *lesson, int argc, char **argv)
{
    if (lesson->op)
        return op_main(lesson, argc, argv);
    struct run r = {.lesson = lesson};
    int rc = setup(&r, argc, argv);
    if (rc == EXIT_PASS) {
        session_print_header(&r.session, lesson->target == TARGET_CPU);
        print_problem(&r);
        if (r.opts.mode == MODE_BENCH)
            run_bench(&r);
        else
            run_single(&r);
        rc = r.failures ? EXIT_FAIL : EXIT_PASS;
    } else if (rc == EXIT_DONE) {
        rc = EXIT_PASS;
    }
    session_close(&r.session);
    free_rounded(&r);
    free(r.host_out);
    free_inputs(&r.host);
    return rc;
}
