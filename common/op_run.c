/* The recipe of lesson.c for an op (op.h): for each variant, its layout's tensors drawn
 * into every rotated buffer set, one run from the tensors as drawn, checked by the op
 * against its float64 gold, then timed; one row each in the table and the CSV. */
#include "op_run.h"

#include <math.h>
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "alloc.h"
#include "cli.h"
#include "cuda_check.h"
#include "escape.h"
#include "gpu_runner.h"
#include "gpu_timer.h"
#include "host_info.h"
#include "report.h"
#include "session.h"
#include "timing.h"

/* Sets after the first draw from seeds this far apart (as lesson.c's do). */
#define SET_SEED_STRIDE 0x9e3779b97f4a7c15ull

struct op_run {
    const struct lesson *lesson;
    const struct op *op;
    struct options opts;
    struct session session;
    int failures;
};

/* One layout's tensors: `sets` rotated copies where the variant runs (the device, or
 * the host for CPU variants), and set 0 as drawn, on the host, for the check. */
struct op_buffers {
    int layout;
    bool host;
    int count;
    struct op_tensor t[OP_MAX_TENSORS];
    int sets;
    void *set[MAX_BUFFER_SETS][OP_MAX_TENSORS];
    void *before[OP_MAX_TENSORS];
    void *after[OP_MAX_TENSORS]; /* the written tensors copied back after the checked run */
    cudaStream_t stream;
};

static size_t set_bytes(const struct op_buffers *b)
{
    size_t bytes = 0;
    for (int i = 0; i < b->count; i++)
        bytes += b->t[i].bytes;
    return bytes;
}

static void draw_set(const struct op_run *r, const struct op_buffers *b, int set,
                     void *const *host)
{
    uint64_t seed = r->opts.seed + (uint64_t)set * SET_SEED_STRIDE;
    r->op->draw(&r->opts.shape, b->layout, seed, host);
}

static void *alloc_where(bool host, size_t bytes, const char *what)
{
    return host ? host_alloc(bytes, what) : gpu_alloc(bytes, what);
}

static void free_where(bool host, void *p)
{
    if (host)
        free(p);
    else
        CUDA_CHECK(cudaFree(p));
}

static void buffers_create(const struct op_run *r, struct op_buffers *b, int layout, bool host)
{
    const struct conv_shape *s = &r->opts.shape;
    memset(b, 0, sizeof *b);
    b->layout = layout;
    b->host = host;
    b->stream = r->session.stream;
    b->count = r->op->tensors(s, layout, b->t);
    for (int i = 0; i < b->count; i++) {
        b->before[i] = host_alloc(b->t[i].bytes, "a tensor as drawn");
        if (b->t[i].written)
            b->after[i] = host_alloc(b->t[i].bytes, "a tensor after the run");
    }
    draw_set(r, b, 0, b->before);
    b->sets = host || r->opts.mode != MODE_BENCH
                  ? 1
                  : buffer_sets_for(set_bytes(b), r->session.gpu.l2_bytes,
                                    r->session.gpu.free_bytes);
    /* Sets after the first are drawn into `staged`, uploaded, and forgotten. */
    void *staged[OP_MAX_TENSORS] = {0};
    for (int i = 0; b->sets > 1 && i < b->count; i++)
        staged[i] = host_alloc(b->t[i].bytes, "a tensor of another buffer set");
    for (int set = 0; set < b->sets; set++) {
        if (set > 0)
            draw_set(r, b, set, staged);
        for (int i = 0; i < b->count; i++) {
            b->set[set][i] = alloc_where(host, b->t[i].bytes, b->t[i].name);
            const void *from = set == 0 ? b->before[i] : staged[i];
            if (host)
                memcpy(b->set[set][i], from, b->t[i].bytes);
            else
                CUDA_CHECK(cudaMemcpy(b->set[set][i], from, b->t[i].bytes,
                                      cudaMemcpyHostToDevice));
        }
    }
    for (int i = 0; i < b->count; i++)
        free(staged[i]);
}

static void buffers_free(struct op_buffers *b)
{
    for (int set = 0; set < b->sets; set++)
        for (int i = 0; i < b->count; i++)
            free_where(b->host, b->set[set][i]);
    for (int i = 0; i < b->count; i++) {
        free(b->before[i]);
        free(b->after[i]);
    }
    b->count = 0;
    b->sets = 0;
}

/* A variant and what it runs on. */
struct variant_run {
    const struct op_variant *variant;
    const struct op_buffers *b;
    struct conv_shape shape;
    void *scratch;
};

static struct op_args args_for(const struct variant_run *vr, int set)
{
    struct op_args a = {.shape = vr->shape, .scratch = vr->scratch, .stream = vr->b->stream};
    for (int i = 0; i < vr->b->count; i++)
        a.tensor[i] = vr->b->set[set][i];
    return a;
}

static void enqueue_variant(void *context, int set)
{
    const struct variant_run *vr = context;
    struct op_args a = args_for(vr, set);
    vr->variant->run(&a);
}

/* The written tensors of set 0 back to their drawn values (the op may work in place),
 * one run, and the written tensors copied to `after`. */
static void run_once(const struct variant_run *vr, struct op_buffers *b)
{
    for (int i = 0; i < b->count; i++) {
        if (!b->t[i].written)
            continue;
        if (b->host)
            memcpy(b->set[0][i], b->before[i], b->t[i].bytes);
        else
            CUDA_CHECK(cudaMemcpy(b->set[0][i], b->before[i], b->t[i].bytes,
                                  cudaMemcpyHostToDevice));
    }
    enqueue_variant((void *)vr, 0);
    if (!b->host)
        CUDA_CHECK(cudaStreamSynchronize(b->stream));
    for (int i = 0; i < b->count; i++) {
        if (!b->t[i].written)
            continue;
        if (b->host)
            memcpy(b->after[i], b->set[0][i], b->t[i].bytes);
        else
            CUDA_CHECK(cudaMemcpy(b->after[i], b->set[0][i], b->t[i].bytes,
                                  cudaMemcpyDeviceToHost));
    }
}

static void run_on_host(void *context)
{
    enqueue_variant(context, 0);
}

static double variant_flops(const struct op_run *r, const struct op_variant *v)
{
    return v->flops ? v->flops(&r->opts.shape) : r->op->flops(&r->opts.shape, v->layout);
}

static double variant_min_bytes(const struct op_run *r, const struct op_variant *v)
{
    return v->min_bytes ? v->min_bytes(&r->opts.shape) : r->op->min_bytes(&r->opts.shape, v->layout);
}

static const char *over_limit(const struct op_run *r, const struct op_variant *v, char *reason,
                              size_t size)
{
    double gflop = variant_flops(r, v) / 1e9;
    if (r->opts.variant || v->max_gflop <= 0 || gflop <= v->max_gflop)
        return NULL;
    snprintf(reason, size, "%.1f GFLOP is over its limit of %.1f (too slow; run it with "
             "--variant %s)", gflop, v->max_gflop, v->name);
    return reason;
}

static const char *blocker(const struct op_run *r, const struct op_variant *v, char *reason,
                           size_t size)
{
    const char *why = v->unsupported ? v->unsupported(&r->opts.shape) : NULL;
    return why ? why : over_limit(r, v, reason, size);
}

/* setup, the checked run, timing, teardown; the harness owns the scratch. */
static void run_variant(struct op_run *r, const struct op_variant *v, struct op_buffers *b,
                        struct result_row *row)
{
    size_t scratch = v->scratch_bytes ? v->scratch_bytes(&r->opts.shape) : 0;
    struct variant_run vr = {v, b, r->opts.shape,
                             scratch ? alloc_where(v->cpu, scratch, "the variant's scratch")
                                     : NULL};
    struct op_args a = args_for(&vr, 0);
    if (v->setup)
        v->setup(&a);
    if (!v->cpu)
        CUDA_CHECK(cudaDeviceSynchronize());
    run_once(&vr, b);
    row->verified = r->opts.verify;
    if (row->verified) {
        row->check = r->op->check(&r->opts.shape, b->layout, b->before, b->after);
        if (!row->check.pass)
            r->failures++;
    }
    row->time = v->cpu ? host_time_runs(run_on_host, &vr, r->opts.cpu_warmup, r->opts.cpu_reps)
                       : gpu_time_sets(enqueue_variant, &vr, b->sets, b->stream, r->opts.warmup,
                                       r->opts.reps);
    if (v->teardown)
        v->teardown(&a);
    if (!v->cpu)
        CUDA_CHECK(cudaDeviceSynchronize());
    if (vr.scratch)
        free_where(v->cpu, vr.scratch);
}

static void emit(struct op_run *r, const struct result_row *row)
{
    struct run_context ctx = {r->lesson->name, r->opts.preset, r->opts.shape, r->opts.csv_path};
    if (!report_row(&ctx, row)) {
        r->failures++;
        r->opts.csv_path = NULL; /* one error line, not one per row */
    }
}

static bool selected(const struct op_run *r, const struct op_variant *v)
{
    return !r->opts.variant || strcmp(r->opts.variant, v->name) == 0;
}

static void run_bench(struct op_run *r)
{
    print_table_header();
    struct op_buffers b = {0};
    bool have_buffers = false;
    for (int i = 0; i < r->op->variant_count; i++) {
        const struct op_variant *v = &r->op->variants[i];
        if (!selected(r, v))
            continue;
        char device[320], reason[200];
        struct result_row row = {.variant = v->name,
                                 .dtype = DTYPE_FP32,
                                 .layout = r->op->layout_names[v->layout],
                                 .device = device,
                                 .cudnn_ms = NAN};
        row.skipped = blocker(r, v, reason, sizeof reason);
        if (row.skipped) {
            emit(r, &row);
            continue;
        }
        if (have_buffers && (b.layout != v->layout || b.host != v->cpu)) {
            buffers_free(&b);
            have_buffers = false;
        }
        if (!have_buffers)
            buffers_create(r, &b, v->layout, v->cpu);
        have_buffers = true;
        if (v->cpu)
            cpu_description(v->parallel ? omp_get_max_threads() : 1, device, sizeof device);
        else
            snprintf(device, sizeof device, "%s", r->session.gpu.name);
        run_variant(r, v, &b, &row);
        session_fill_rates(&r->session, &row, variant_min_bytes(r, v),
                           variant_flops(r, v), !v->cpu);
        emit(r, &row);
    }
    if (have_buffers)
        buffers_free(&b);
}

/* A GPU is needed when any variant the run selects runs on one. */
static bool needs_gpu(const struct op_run *r)
{
    for (int i = 0; i < r->op->variant_count; i++)
        if (selected(r, &r->op->variants[i]) && !r->op->variants[i].cpu)
            return true;
    return false;
}

static bool any_cpu_variant(const struct op_run *r)
{
    for (int i = 0; i < r->op->variant_count; i++)
        if (selected(r, &r->op->variants[i]) && r->op->variants[i].cpu)
            return true;
    return false;
}

/* The variant --variant names must be able to run this problem. */
static int check_named_variant(const struct op_run *r)
{
    char reason[200];
    for (int i = 0; r->opts.variant && i < r->op->variant_count; i++) {
        const struct op_variant *v = &r->op->variants[i];
        const char *why = selected(r, v) ? blocker(r, v, reason, sizeof reason) : NULL;
        if (why) {
            print_error("--variant %s cannot run this problem: %s", v->name, why);
            return EXIT_USAGE;
        }
    }
    return EXIT_PASS;
}

static void print_problem(const struct op_run *r)
{
    const struct conv_shape *s = &r->opts.shape;
    printf("problem %s: n=%d cin=%d cout=%d %dx%d ksize=%d | seed %llu | check: %s\n",
           r->opts.preset, s->n, s->cin, s->cout, s->h, s->w, s->ksize,
           (unsigned long long)r->opts.seed,
           r->opts.verify ? "against float64 of the inputs as drawn" : "off (--no-verify)");
}

int op_main(const struct lesson *lesson, int argc, char **argv)
{
    struct op_run r = {.lesson = lesson, .op = lesson->op};
    switch (parse_options(lesson, argc, argv, &r.opts)) {
    case CLI_EXIT_OK: return EXIT_PASS;
    case CLI_EXIT_USAGE: return EXIT_USAGE;
    case CLI_RUN: break;
    }
    int rc = check_named_variant(&r);
    if (rc != EXIT_PASS)
        return rc;
    rc = session_open(&r.session, lesson->name, needs_gpu(&r), lesson->min_compute_capability,
                      r.opts.device);
    if (rc != EXIT_PASS)
        return rc;
    session_print_header(&r.session, any_cpu_variant(&r));
    print_problem(&r);
    run_bench(&r);
    session_close(&r.session);
    return r.failures ? EXIT_FAIL : EXIT_PASS;
}
