/* The recipe of lesson.c for an op (op.h): for each variant, its layout's tensors drawn
 * into every rotated buffer set, one run from the tensors as drawn, checked by the op
 * against its float64 gold, then timed; one row each in the table and the CSV. A
 * sequence op's run is a pass over its frames, each checked, each timed alone. */
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
#include "op_files.h"
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
    int frames; /* of a sequence op; 0 for one that is not */
    struct op_files files; /* the files' values in .npy mode (opts.mode == MODE_NPY) */
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

/* Set 0 holds the files' values in .npy mode; every other set is drawn. */
static bool draw_set(const struct op_run *r, const struct op_buffers *b, int set,
                     void *const *host)
{
    if (set == 0 && r->opts.mode == MODE_NPY) {
        r->files.set->from_files(&r->opts.shape, b->layout, r->files.tensor, host);
        return true;
    }
    uint64_t seed = r->opts.seed + (uint64_t)set * SET_SEED_STRIDE;
    char err[1024];
    if (r->op->draw(&r->opts.shape, r->opts.param, b->layout, seed, host, err, sizeof err))
        return true;
    print_error("%s", err);
    return false;
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

/* false, with the op's message printed, when the inputs cannot be drawn. A sequence
 * has one set: its frames are different memory already. */
static bool buffers_create(const struct op_run *r, struct op_buffers *b, int layout, bool host)
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
    if (!draw_set(r, b, 0, b->before))
        return false;
    b->sets = host || r->frames ? 1
                                : buffer_sets_for(set_bytes(b), r->session.gpu.l2_bytes,
                                                  r->session.gpu.free_bytes);
    /* Sets after the first are drawn into `staged`, uploaded, and forgotten. */
    void *staged[OP_MAX_TENSORS] = {0};
    for (int i = 0; b->sets > 1 && i < b->count; i++)
        staged[i] = host_alloc(b->t[i].bytes, "a tensor of another buffer set");
    for (int set = 0; set < b->sets; set++) {
        if (set > 0 && !draw_set(r, b, set, staged))
            return false;
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
    return true;
}

static void buffers_free(struct op_buffers *b)
{
    for (int set = 0; set < MAX_BUFFER_SETS; set++)
        for (int i = 0; i < b->count; i++)
            if (b->set[set][i])
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
    const double *param;
    void *scratch;
};

static struct op_args args_for(const struct variant_run *vr, int set, int frame)
{
    struct op_args a = {.shape = vr->shape, .param = vr->param, .frame = frame,
                        .scratch = vr->scratch, .stream = vr->b->stream};
    for (int i = 0; i < vr->b->count; i++)
        a.tensor[i] = vr->b->set[set][i];
    return a;
}

static void enqueue_variant(void *context, int set)
{
    const struct variant_run *vr = context;
    struct op_args a = args_for(vr, set, 0);
    vr->variant->run(&a);
}

static void enqueue_frame(const struct variant_run *vr, int frame)
{
    struct op_args a = args_for(vr, 0, frame);
    vr->variant->run(&a);
}

/* The written tensors of set 0 back to their drawn values (the op may work in place). */
static void reset_written(struct op_buffers *b)
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
}

/* The written tensors of set 0 to `after`, once the work queued so far is done. */
static void fetch_written(struct op_buffers *b)
{
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
    if (r->frames && v->cpu)
        return "a sequence runs on the GPU (its frames are timed with device events)";
    const char *why = v->unsupported ? v->unsupported(&r->opts.shape) : NULL;
    return why ? why : over_limit(r, v, reason, size);
}

static struct op_check check_args(const struct op_run *r, const struct variant_run *vr,
                                  const struct op_buffers *b, int frame)
{
    return (struct op_check){&r->opts.shape, r->opts.param, vr->variant, b->layout, frame,
                             b->before, b->after};
}

/* One run from the tensors as drawn, checked. */
static struct check_result check_once(const struct op_run *r, const struct variant_run *vr,
                                      struct op_buffers *b)
{
    reset_written(b);
    enqueue_variant((void *)vr, 0);
    fetch_written(b);
    struct op_check c = check_args(r, vr, b, 0);
    return r->opts.verify ? r->op->check(&c) : (struct check_result){.pass = true};
}

/* The sequence's check: the worst frame's errors, every frame's outputs counted. */
static void check_merge(struct check_result *all, const struct check_result *frame)
{
    if (all->pass && !frame->pass)
        all->first_failure = frame->first_failure;
    all->checked += frame->checked;
    all->failures += frame->failures;
    all->rel_l2 = !(frame->rel_l2 <= all->rel_l2) ? frame->rel_l2 : all->rel_l2;
    all->max_abs = !(frame->max_abs <= all->max_abs) ? frame->max_abs : all->max_abs;
    all->pass = all->pass && frame->pass;
}

/* A pass over every frame from the written tensors as drawn, each frame checked. */
static struct check_result check_sequence(const struct op_run *r, const struct variant_run *vr,
                                          struct op_buffers *b, struct frame_row *fr)
{
    struct check_result all = {.pass = true};
    reset_written(b);
    for (int f = 0; f < r->frames; f++) {
        enqueue_frame(vr, f);
        fetch_written(b);
        fr[f] = (struct frame_row){.frame = f, .time = {NAN, NAN, 0}, .verified = r->opts.verify};
        if (!r->opts.verify)
            continue;
        struct op_check c = check_args(r, vr, b, f);
        fr[f].check = r->op->check(&c);
        check_merge(&all, &fr[f].check);
    }
    return all;
}

/* Passes over the sequence: frame 0 untimed (it starts the state afresh), then every
 * later frame between its own pair of events. Enough passes for `reps` timed frames,
 * after one untimed pass when there is a warm-up. The row's time is over every timed
 * frame; fr[f].time over frame f's passes. */
static struct timing time_sequence(const struct op_run *r, const struct variant_run *vr,
                                   struct frame_row *fr)
{
    const int timed = r->frames - 1;
    const int passes = (r->opts.reps + timed - 1) / timed;
    const int warm = r->opts.warmup > 0;
    double *ms = host_alloc((size_t)passes * timed * sizeof(double), "the frame times");
    cudaEvent_t *ev = host_alloc((size_t)r->frames * sizeof *ev, "the events");
    for (int f = 0; f < r->frames; f++)
        CUDA_CHECK(cudaEventCreate(&ev[f]));
    for (int pass = 0; pass < warm + passes; pass++) {
        for (int f = 0; f < r->frames; f++) {
            enqueue_frame(vr, f);
            CUDA_CHECK(cudaEventRecord(ev[f], vr->b->stream));
        }
        CUDA_CHECK(cudaEventSynchronize(ev[r->frames - 1]));
        for (int f = 1; pass >= warm && f < r->frames; f++) {
            float frame_ms;
            CUDA_CHECK(cudaEventElapsedTime(&frame_ms, ev[f - 1], ev[f]));
            ms[(size_t)(f - 1) * passes + pass - warm] = frame_ms;
        }
    }
    for (int f = 0; f < r->frames; f++)
        CUDA_CHECK(cudaEventDestroy(ev[f]));
    double *one = host_alloc((size_t)passes * sizeof(double), "a frame's times");
    for (int f = 1; f < r->frames; f++) {
        memcpy(one, ms + (size_t)(f - 1) * passes, (size_t)passes * sizeof(double));
        fr[f].time = timing_from_samples(one, passes);
    }
    struct timing all = timing_from_samples(ms, passes * timed);
    free(one);
    free(ev);
    free(ms);
    return all;
}

/* setup, the checked run (a checked pass for a sequence), timing, teardown; the
 * harness owns the scratch. fr gets a sequence's frames. */
static void run_variant(struct op_run *r, const struct op_variant *v, struct op_buffers *b,
                        struct result_row *row, struct frame_row *fr)
{
    size_t scratch = v->scratch_bytes ? v->scratch_bytes(&r->opts.shape, r->opts.param) : 0;
    struct variant_run vr = {v, b, r->opts.shape, r->opts.param,
                             scratch ? alloc_where(v->cpu, scratch, "the variant's scratch")
                                     : NULL};
    struct op_args a = args_for(&vr, 0, 0);
    if (v->setup)
        v->setup(&a);
    if (!v->cpu)
        CUDA_CHECK(cudaDeviceSynchronize());
    row->verified = r->opts.verify;
    row->check = r->frames ? check_sequence(r, &vr, b, fr) : check_once(r, &vr, b);
    if (!row->check.pass)
        r->failures++;
    if (r->frames)
        row->time = time_sequence(r, &vr, fr);
    else if (v->cpu)
        row->time = host_time_runs(run_on_host, &vr, r->opts.cpu_warmup, r->opts.cpu_reps);
    else
        row->time = gpu_time_sets(enqueue_variant, &vr, b->sets, b->stream, r->opts.warmup,
                                  r->opts.reps);
    if (v->teardown)
        v->teardown(&a);
    if (!v->cpu)
        CUDA_CHECK(cudaDeviceSynchronize());
    if (vr.scratch)
        free_where(v->cpu, vr.scratch);
}

static struct run_context context_of(const struct op_run *r)
{
    return (struct run_context){r->lesson->name, r->opts.preset, r->opts.shape,
                                r->opts.csv_path};
}

static void emit(struct op_run *r, const struct result_row *row)
{
    struct run_context ctx = context_of(r);
    if (!report_row(&ctx, row)) {
        r->failures++;
        r->opts.csv_path = NULL; /* one error line, not one per row */
    }
}

static void emit_frames(struct op_run *r, const struct result_row *row,
                        const struct frame_row *fr)
{
    struct run_context ctx = context_of(r);
    if (r->opts.frames_csv_path &&
        !frame_csv_append(r->opts.frames_csv_path, &ctx, row, fr, r->frames)) {
        r->failures++;
        r->opts.frames_csv_path = NULL;
    }
}

static bool selected(const struct op_run *r, const struct op_variant *v)
{
    return !r->opts.variant || strcmp(r->opts.variant, v->name) == 0;
}

/* The op's flags as flag=value;..., then what the variant says of its work on these
 * inputs; returns the share of the op's FLOPs it does (1 unless it says otherwise). */
static double describe(const struct op_run *r, const struct op_variant *v,
                       const struct op_buffers *b, char *text, size_t size)
{
    size_t used = 0;
    text[0] = '\0';
    for (int i = 0; i < r->op->param_count && used < size; i++)
        used += (size_t)snprintf(text + used, size - used, "%s%s=%g", i ? ";" : "",
                                 r->op->params[i].flag, r->opts.param[i]);
    if (!v->work_share || used + 1 >= size)
        return 1.0;
    if (used > 0)
        text[used++] = ';';
    return v->work_share(&r->opts.shape, r->opts.param, b->before, text + used, size - used);
}

/* --output: the written tensor after the checked run, unless it failed the check; a
 * file that cannot be written is a runtime error. */
static void write_output(struct op_run *r, const struct op_buffers *b,
                         const struct result_row *row)
{
    if (!result_may_be_written(row))
        return;
    if (!op_files_write(r->op, &r->opts.shape, b->layout, b->after, &r->files,
                        r->opts.output_path)) {
        r->failures++;
        return;
    }
    print_written(row, r->opts.output_path);
}

/* false when the inputs could not be drawn (the message is printed). */
static bool run_bench(struct op_run *r)
{
    print_table_header();
    struct op_buffers b = {0};
    bool have_buffers = false, drawn = true;
    struct frame_row *fr =
        r->frames ? host_alloc((size_t)r->frames * sizeof *fr, "the frame rows") : NULL;
    for (int i = 0; drawn && i < r->op->variant_count; i++) {
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
        if (!have_buffers && !(drawn = buffers_create(r, &b, v->layout, v->cpu)))
            break;
        have_buffers = true;
        if (v->cpu)
            cpu_description(v->parallel ? omp_get_max_threads() : 1, device, sizeof device);
        else
            snprintf(device, sizeof device, "%s", r->session.gpu.name);
        const double share = describe(r, v, &b, row.params, sizeof row.params);
        run_variant(r, v, &b, &row, fr);
        session_fill_rates(&r->session, &row, variant_min_bytes(r, v),
                           share * variant_flops(r, v), !v->cpu);
        emit(r, &row);
        if (r->frames)
            emit_frames(r, &row, fr);
        if (r->opts.output_path) /* --variant names the one variant */
            write_output(r, &b, &row);
    }
    buffers_free(&b);
    free(fr);
    return drawn;
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
    printf("problem %s: n=%d cin=%d cout=%d %dx%d ksize=%d", r->opts.preset, s->n, s->cin,
           s->cout, s->h, s->w, s->ksize);
    for (int i = 0; i < r->op->param_count; i++)
        printf(" %s=%g", r->op->params[i].flag, r->opts.param[i]);
    if (r->frames)
        printf(" | %d frames, each timed alone after an untimed frame 0", r->frames);
    const bool files = r->opts.mode == MODE_NPY;
    if (files) {
        char list[256];
        op_files_list(r->op, list, sizeof list);
        printf(" | data: %s in %s", list, r->files.set->name);
    }
    printf(" | seed %llu | check: %s\n", (unsigned long long)r->opts.seed,
           !r->opts.verify ? "off (--no-verify)"
           : r->frames     ? "every frame, against float64 of the inputs as drawn"
           : files         ? "against float64 of the files' values"
                           : "against float64 of the inputs as drawn");
}

/* .npy mode: the set the files' ranks pick, --output checked against it before their
 * data is read, then the files; false after one error line. */
static bool read_files(struct op_run *r)
{
    const char *const *path = r->opts.op_file_path;
    const struct op_file_set *set = op_files_pick_set(r->op, path);
    return set &&
           (!r->opts.output_path ||
            op_files_check_output(r->op, set, r->opts.variant, r->opts.output_path)) &&
           op_files_read(r->op, set, path, r->opts.param, &r->opts.shape, &r->files);
}

/* The run after the flags: the files read (.npy mode), the GPU if a variant needs one. */
static int run_op(struct op_run *r)
{
    if (r->opts.mode == MODE_NPY && !read_files(r))
        return EXIT_USAGE;
    r->frames = r->op->frames ? r->op->frames(&r->opts.shape) : 0;
    int rc = check_named_variant(r);
    if (rc != EXIT_PASS)
        return rc;
    rc = session_open(&r->session, r->lesson->name, needs_gpu(r),
                      r->lesson->min_compute_capability, r->opts.device);
    if (rc != EXIT_PASS)
        return rc;
    session_print_header(&r->session, any_cpu_variant(r));
    print_problem(r);
    const bool drawn = run_bench(r);
    session_close(&r->session);
    return !drawn ? EXIT_USAGE : r->failures ? EXIT_FAIL : EXIT_PASS;
}

int op_main(const struct lesson *lesson, int argc, char **argv)
{
    struct op_run r = {.lesson = lesson, .op = lesson->op};
    switch (parse_options(lesson, argc, argv, &r.opts)) {
    case CLI_EXIT_OK: return EXIT_PASS;
    case CLI_EXIT_USAGE: return EXIT_USAGE;
    case CLI_RUN: break;
    }
    const int rc = run_op(&r);
    op_files_free(&r.files);
    return rc;
}
