/* The recipe every lesson follows, for its op (op.h): the library rows the variants are
 * compared with, then for each variant its layout's tensors drawn into every rotated
 * buffer set, one run from the tensors as drawn, checked by the op against its float64
 * gold, then timed; one row each in the table and the CSV. A sequence op's run is a
 * pass over its frames, each checked, each timed alone. When the flags gave the op's
 * own data (the convolution's --input or --image), one variant runs once, checked, and
 * the op writes its result. */
#include "op_run.h"

#include <math.h>
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "alloc.h"
#include "cuda_check.h"
#include "escape.h"
#include "gpu_timer.h"
#include "host_info.h"
#include "library_rows.h"
#include "op_buffers.h"
#include "op_files.h"
#include "report.h"
#include "session.h"
#include "timing.h"

struct op_run {
    const struct lesson *lesson;
    const struct op *op;
    struct options opts;
    struct session session;
    int frames; /* of a sequence op; 0 for one that is not */
    struct op_files files; /* the files' values in .npy mode with the op's file sets */
    bool apply;            /* one variant on the op's own data, written (op.write) */
    struct library_rows library;
    int failures;
    double reference_ms; /* the op's scaling_reference row's time in this run, else 0 */
};

/* The variant's buffers: one set where they are not timed in rotation (a CPU variant,
 * a sequence, a run that applies one variant), else enough to outgrow the L2; false
 * when the inputs could not be drawn (the message is printed). */
static bool buffers_create(const struct op_run *r, struct op_buffers *b, int layout, bool host)
{
    const struct op_source src = {r->op, &r->opts.shape, r->opts.param, r->opts.seed, &r->files};
    const int sets = host || r->frames || r->apply
                         ? 1
                         : op_sets_for(r->op, &r->opts.shape, layout, &r->session.gpu);
    return op_buffers_create(b, &src, layout, host, sets, r->session.stream);
}

/* A variant and what it runs on. */
struct variant_run {
    const struct op_variant *variant;
    const struct op_buffers *b;
    struct conv_shape shape;
    const double *param;
    void *scratch;
    const struct gpu_info *gpu;
};

static struct op_args args_for(const struct variant_run *vr, int set, int frame)
{
    struct op_args a = {.shape = vr->shape,
                        .param = vr->param,
                        .frame = frame,
                        .scratch = vr->scratch,
                        .stream = vr->b->stream,
                        .device = vr->gpu->id,
                        .gpus = vr->gpu->gpus,
                        .variant = vr->variant};
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

/* Why the variant cannot run on this GPU (once it is open) and this build, or NULL. */
static const char *unsupported_gpu(const struct op_run *r, const struct op_variant *v,
                                   char *reason, size_t size)
{
    if (!r->session.have_gpu || v->cpu)
        return NULL;
    return gpu_needs_unmet(&v->needs, &r->session.gpu, &r->opts.shape, reason, size);
}

/* Why the variant cannot run this problem (on this GPU, once it is open), or NULL. */
static const char *unsupported(const struct op_run *r, const struct op_variant *v, char *reason,
                               size_t size)
{
    const char *why = unsupported_gpu(r, v, reason, size);
    if (!why && r->op->unsupported)
        why = r->op->unsupported(&r->opts.shape);
    return why || !v->unsupported ? why : v->unsupported(&r->opts.shape);
}

static const char *blocker(const struct op_run *r, const struct op_variant *v, char *reason,
                           size_t size)
{
    const char *why = unsupported(r, v, reason, size);
    return why || r->apply ? why : over_limit(r, v, reason, size);
}

static struct op_check check_args(const struct op_run *r, const struct variant_run *vr,
                                  const struct op_buffers *b, int frame, struct result_row *row)
{
    const size_t used = strlen(row->params);
    return (struct op_check){.op = r->op,
                             .shape = &r->opts.shape,
                             .param = r->opts.param,
                             .variant = vr->variant,
                             .layout = b->layout,
                             .frame = frame,
                             .seed = r->opts.seed,
                             .before = b->before,
                             .after = b->after,
                             .params = row->params + used,
                             .params_size = sizeof row->params - used};
}

/* One run from the tensors as drawn, checked. */
static struct check_result check_once(const struct op_run *r, const struct variant_run *vr,
                                      struct op_buffers *b, struct result_row *row)
{
    op_buffers_reset_written(b);
    enqueue_variant((void *)vr, 0);
    if (vr->variant->collect) {
        struct op_args a = args_for(vr, 0, 0);
        vr->variant->collect(&a);
    }
    op_buffers_fetch_written(b);
    struct op_check c = check_args(r, vr, b, 0, row);
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
                                          struct op_buffers *b, struct frame_row *fr,
                                          struct result_row *row)
{
    struct check_result all = {.pass = true};
    op_buffers_reset_written(b);
    for (int f = 0; f < r->frames; f++) {
        enqueue_frame(vr, f);
        op_buffers_fetch_written(b);
        fr[f] = (struct frame_row){.frame = f, .time = {NAN, NAN, 0}, .verified = r->opts.verify};
        if (!r->opts.verify)
            continue;
        struct op_check c = check_args(r, vr, b, f, row);
        fr[f].check = r->op->check(&c);
        check_merge(&all, &fr[f].check);
    }
    return all;
}

/* Passes over the sequence: frame 0 untimed (it starts the state afresh), then every
 * later frame timed alone: between its own pair of device events, or on the host clock
 * for a CPU variant. Enough passes for `reps` timed frames, after one untimed pass when
 * there is a warm-up. The row's time is over every timed frame; fr[f].time over frame
 * f's passes. */
static struct timing time_sequence(const struct op_run *r, const struct variant_run *vr,
                                   struct frame_row *fr)
{
    const bool cpu = vr->variant->cpu;
    const int timed = r->frames - 1;
    const int reps = cpu ? r->opts.cpu_reps : r->opts.reps;
    const int passes = (reps + timed - 1) / timed;
    const int warm = (cpu ? r->opts.cpu_warmup : r->opts.warmup) > 0;
    double *ms = host_alloc((size_t)passes * timed * sizeof(double), "the frame times");
    double *done = host_alloc((size_t)r->frames * sizeof *done, "the frame times");
    cudaEvent_t *ev = cpu ? NULL : host_alloc((size_t)r->frames * sizeof *ev, "the events");
    for (int f = 0; ev && f < r->frames; f++)
        CUDA_CHECK(cudaEventCreate(&ev[f]));
    for (int pass = 0; pass < warm + passes; pass++) {
        for (int f = 0; f < r->frames; f++) {
            enqueue_frame(vr, f);
            if (cpu)
                done[f] = host_now_ms();
            else
                CUDA_CHECK(cudaEventRecord(ev[f], vr->b->stream));
        }
        if (!cpu)
            CUDA_CHECK(cudaEventSynchronize(ev[r->frames - 1]));
        for (int f = 1; pass >= warm && f < r->frames; f++) {
            float frame_ms = 0;
            if (cpu)
                frame_ms = (float)(done[f] - done[f - 1]);
            else
                CUDA_CHECK(cudaEventElapsedTime(&frame_ms, ev[f - 1], ev[f]));
            ms[(size_t)(f - 1) * passes + pass - warm] = frame_ms;
        }
    }
    for (int f = 0; ev && f < r->frames; f++)
        CUDA_CHECK(cudaEventDestroy(ev[f]));
    double *one = host_alloc((size_t)passes * sizeof(double), "a frame's times");
    for (int f = 1; f < r->frames; f++) {
        memcpy(one, ms + (size_t)(f - 1) * passes, (size_t)passes * sizeof(double));
        fr[f].time = timing_from_samples(one, passes);
    }
    struct timing all = timing_from_samples(ms, passes * timed);
    free(one);
    free(ev);
    free(done);
    free(ms);
    return all;
}

/* A timed pass: the sequence's frames, or warm-up and repetitions (rotating the sets). */
static struct timing time_variant(const struct op_run *r, const struct variant_run *vr,
                                  struct frame_row *fr)
{
    if (r->frames)
        return time_sequence(r, vr, fr);
    if (vr->variant->cpu)
        return host_time_runs(run_on_host, (void *)vr, r->opts.cpu_warmup, r->opts.cpu_reps);
    return gpu_time_sets(enqueue_variant, (void *)vr, vr->b->sets, vr->b->stream, r->opts.warmup,
                         r->opts.reps);
}

/* setup, the checked run (a checked pass for a sequence), timing unless the run applies
 * one variant, teardown; the harness owns the scratch. fr gets a sequence's frames. */
static void run_variant(struct op_run *r, const struct op_variant *v, struct op_buffers *b,
                        struct result_row *row, struct frame_row *fr)
{
    size_t scratch = v->scratch_bytes ? v->scratch_bytes(v, &r->opts.shape, r->opts.param) : 0;
    struct variant_run vr = {v, b, r->opts.shape, r->opts.param,
                             scratch ? op_alloc_where(v->cpu, scratch, "the variant's scratch")
                                     : NULL,
                             &r->session.gpu};
    struct op_args a = args_for(&vr, 0, 0);
    if (v->setup)
        v->setup(&a);
    if (!v->cpu) /* setup may have used the default stream (cudaMemcpyToSymbol) */
        CUDA_CHECK(cudaDeviceSynchronize());
    row->verified = r->opts.verify;
    row->check = r->frames ? check_sequence(r, &vr, b, fr, row) : check_once(r, &vr, b, row);
    if (!row->check.pass)
        r->failures++;
    if (!r->apply)
        row->time = time_variant(r, &vr, fr);
    if (v->teardown)
        v->teardown(&a);
    if (!v->cpu)
        CUDA_CHECK(cudaDeviceSynchronize());
    if (vr.scratch)
        op_free_where(v->cpu, vr.scratch);
}

static int longest_variant_name(const struct op *op)
{
    int longest = 0;
    for (int i = 0; i < op->variant_count; i++)
        if ((int)strlen(op->variants[i].name) > longest)
            longest = (int)strlen(op->variants[i].name);
    return longest;
}

static struct run_context context_of(const struct op_run *r)
{
    return (struct run_context){r->lesson->name, r->opts.preset, r->opts.shape,
                                r->opts.csv_path, longest_variant_name(r->op)};
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

/* The library rows of the variants that will run, and those the op always times. */
static void collect_baselines(struct op_run *r)
{
    if (!r->op->baselines || !r->session.have_gpu || !r->opts.cudnn || r->apply)
        return;
    char reason[200];
    for (int i = -1; i < r->op->variant_count; i++) {
        const struct op_variant *v = i < 0 ? NULL : &r->op->variants[i];
        if (!v || (selected(r, v) && !blocker(r, v, reason, sizeof reason)))
            library_rows_add(&r->library, r->op, v);
    }
}

static void run_baselines(struct op_run *r)
{
    const struct op_bench bench = {&r->session, &r->opts};
    struct library_rows *l = &r->library;
    for (int i = 0; i < l->count; i++) {
        struct result_row row = {.variant = "cudnn",
                                 .dtype = l->row[i].dtype,
                                 .layout = l->row[i].layout,
                                 .device = r->session.gpu.name,
                                 .cudnn_ms = NAN};
        r->op->time_baseline(r->op, &l->row[i], &bench, &row);
        if (!row.skipped) {
            l->ms[i] = row.cudnn_ms = row.time.median_ms;
            if (row.verified && !row.check.pass)
                r->failures++;
        }
        emit(r, &row);
    }
}

/* The op's one-GPU reference time, and each row of a variant spread over several GPUs
 * gets its efficiency against it: T1 / (gpus * T), 1 when the split costs nothing. */
static void note_scaling(struct op_run *r, const struct op_variant *v, struct result_row *row)
{
    const char *reference = r->op->scaling_reference;
    if (!reference || row->skipped || !row->check.pass)
        return;
    if (strcmp(v->name, reference) == 0) {
        r->reference_ms = row->time.median_ms;
        return;
    }
    if (v->needs.gpus < 2 || !(r->reference_ms > 0))
        return;
    const size_t used = strlen(row->params);
    snprintf(row->params + used, sizeof row->params - used, "%sefficiency=%.3f",
             used ? ";" : "", r->reference_ms / (r->session.gpu.gpus * row->time.median_ms));
}

/* false when the inputs could not be drawn (the message is printed). */
static bool run_bench(struct op_run *r)
{
    print_table_header(longest_variant_name(r->op));
    collect_baselines(r);
    run_baselines(r);
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
                                 .dtype = v->dtype,
                                 .layout = r->op->layout_names[v->layout],
                                 .device = device,
                                 .cudnn_ms = NAN};
        row.skipped = blocker(r, v, reason, sizeof reason);
        if (row.skipped) {
            emit(r, &row);
            continue;
        }
        if (have_buffers && (b.layout != v->layout || b.host != v->cpu)) {
            op_buffers_free(&b);
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
        row.cudnn_ms = library_rows_fastest(&r->library, r->op, v);
        note_scaling(r, v, &row);
        emit(r, &row);
        if (r->frames)
            emit_frames(r, &row, fr);
        if (r->opts.output_path && r->files.set) /* --variant names the one variant */
            write_output(r, &b, &row);
    }
    op_buffers_free(&b);
    free(fr);
    return drawn;
}

/* The variant the run applies to the op's own data: --variant, else the op's
 * apply_variant, else the first. */
static const struct op_variant *applied_variant(const struct op_run *r)
{
    const char *name = r->opts.variant ? r->opts.variant : r->op->apply_variant;
    for (int i = 0; name && i < r->op->variant_count; i++)
        if (strcmp(r->op->variants[i].name, name) == 0)
            return &r->op->variants[i];
    return &r->op->variants[0];
}

/* One variant on the op's own data, checked, untimed, then written unless it failed. */
static bool run_apply(struct op_run *r)
{
    const struct op_variant *v = applied_variant(r);
    struct result_row row = {
        .variant = v->name, .dtype = v->dtype, .layout = r->op->layout_names[v->layout]};
    struct op_buffers b;
    if (!buffers_create(r, &b, v->layout, v->cpu)) {
        op_buffers_free(&b);
        return false;
    }
    run_variant(r, v, &b, &row, NULL);
    const char *path = NULL;
    if (result_may_be_written(&row)) {
        if (r->op->write(r->op, v->layout, b.after, &path))
            print_written(&row, path);
        else
            r->failures++;
    }
    op_buffers_free(&b);
    return true;
}

/* A GPU is needed when any variant the run selects runs on one, or when the lesson
 * has no variants (its rows are the library's). */
static bool needs_gpu(const struct op_run *r)
{
    for (int i = 0; i < r->op->variant_count; i++)
        if (selected(r, &r->op->variants[i]) && !r->op->variants[i].cpu &&
            (!r->apply || &r->op->variants[i] == applied_variant(r)))
            return true;
    return r->op->variant_count == 0;
}

static bool any_cpu_variant(const struct op_run *r)
{
    for (int i = 0; i < r->op->variant_count; i++)
        if (selected(r, &r->op->variants[i]) && r->op->variants[i].cpu)
            return true;
    return false;
}

/* Something must be able to run: the variant --variant names or the run applies, or
 * one of the lesson's (a run with none is the library's rows alone). When only the GPU
 * or the build for it stops them, the run is skipped (EXIT_NO_GPU); when the problem
 * stops one, the problem is at fault (EXIT_USAGE), and the line also says why the
 * others were skipped. */
static int check_variants_run(const struct op_run *r)
{
    char reason[200], problem[200] = "", gpu[200] = "";
    if (r->apply && r->op->variant_count == 0) {
        print_error("%s has no kernel variant to apply to its data", r->lesson->name);
        return EXIT_USAGE;
    }
    const struct op_variant *applied = r->apply ? applied_variant(r) : NULL;
    for (int i = 0; i < r->op->variant_count; i++) {
        const struct op_variant *v = &r->op->variants[i];
        if (applied ? v != applied : !selected(r, v))
            continue;
        const char *gpu_why = unsupported_gpu(r, v, reason, sizeof reason);
        const char *why = gpu_why                       ? gpu_why
                          : r->apply || r->opts.variant ? blocker(r, v, reason, sizeof reason)
                                                        : unsupported(r, v, reason, sizeof reason);
        if (!why)
            return EXIT_PASS;
        char *first = gpu_why ? gpu : problem;
        if (!*first)
            snprintf(first, sizeof problem, "%s", why);
    }
    const char *who = applied ? applied->name : r->opts.variant;
    if (!*problem) {
        if (!*gpu)
            return EXIT_PASS;
        fprintf(stderr, "skipped: %s%s%s: %s\n", r->lesson->name, who ? " " : "", who ? who : "",
                gpu);
        return EXIT_NO_GPU;
    }
    const char *also = *gpu ? "; the others are skipped on this GPU: " : "";
    if (applied && !r->opts.variant)
        print_error("%s cannot run this problem: %s%s%s", applied->name, problem, also, gpu);
    else if (r->opts.variant)
        print_error("--variant %s cannot run this problem: %s%s%s", r->opts.variant, problem,
                    also, gpu);
    else
        print_error("%s cannot run this problem: %s%s%s", r->lesson->name, problem, also, gpu);
    return EXIT_USAGE;
}

/* One buffer set of every layout a selected GPU variant runs on must fit on the GPU. */
static int check_gpu_memory(const struct op_run *r)
{
    size_t need = 0;
    for (int i = 0; r->session.have_gpu && i < r->op->variant_count; i++) {
        const struct op_variant *v = &r->op->variants[i];
        if (!selected(r, v) || v->cpu)
            continue;
        struct op_tensor t[OP_MAX_TENSORS];
        size_t bytes = 0;
        for (int k = 0, n = r->op->tensors(&r->opts.shape, v->layout, t); k < n; k++)
            bytes += t[k].bytes;
        need = bytes > need ? bytes : need;
    }
    if (need <= r->session.gpu.free_bytes)
        return EXIT_PASS;
    print_error("out of GPU memory: the problem needs %.2f GB and %s has %.2f GB free: use a "
                "smaller problem (--preset, --size, --batch or channel counts)",
                need / 1e9, r->session.gpu.name, r->session.gpu.free_bytes / 1e9);
    return EXIT_USAGE;
}

static void print_problem(const struct op_run *r)
{
    if (r->op->print_problem) {
        const struct op_bench bench = {&r->session, &r->opts};
        r->op->print_problem(r->op, &bench);
        return;
    }
    const struct conv_shape *s = &r->opts.shape;
    printf("problem %s: n=%d cin=%d cout=%d %dx%d ksize=%d", r->opts.preset, s->n, s->cin,
           s->cout, s->h, s->w, s->ksize);
    for (int i = 0; i < r->op->param_count; i++)
        printf(" %s=%g", r->op->params[i].flag, r->opts.param[i]);
    if (r->frames)
        printf(" | %d frames, each timed alone after an untimed frame 0", r->frames);
    const bool files = r->files.set != NULL;
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

/* The GPUs an op's gpus flag asks for, from --device on (0: all of them), which the
 * machine must have. */
static int open_gpus(struct op_run *r)
{
    for (int i = 0; r->session.have_gpu && i < r->op->param_count; i++) {
        if (!r->op->params[i].gpus)
            continue;
        const char *why = NULL;
        const int from = r->opts.device, count = gpu_count(&why);
        const int want = r->opts.param[i] > 0 ? (int)r->opts.param[i] : count - from;
        if (from + want > count) {
            print_error("--%s %d: this machine has %d CUDA device%s from --device %d on",
                        r->op->params[i].flag, want, count - from, count - from == 1 ? "" : "s",
                        from);
            return EXIT_USAGE;
        }
        r->opts.param[i] = want;
        r->session.gpu.gpus = want;
    }
    return EXIT_PASS;
}

/* The run after the flags: the files read, the GPU if a variant needs one. */
static int run(struct op_run *r)
{
    if (r->opts.mode == MODE_FILES && !read_files(r))
        return EXIT_USAGE;
    r->frames = r->op->frames ? r->op->frames(&r->opts.shape) : 0;
    int rc = check_variants_run(r);
    if (rc != EXIT_PASS)
        return rc;
    rc = session_open(&r->session, r->lesson->name, needs_gpu(r),
                      r->lesson->min_compute_capability, r->opts.device);
    if (rc != EXIT_PASS || (rc = open_gpus(r)) != EXIT_PASS)
        return rc;
    /* Once more now that the GPU is known: what the variants need of it and of the
     * build, so that no kernel is launched whose code this GPU cannot run. */
    if ((rc = check_variants_run(r)) != EXIT_PASS)
        return rc;
    if ((rc = check_gpu_memory(r)) != EXIT_PASS)
        return rc;
    session_print_header(&r->session, any_cpu_variant(r));
    print_problem(r);
    const bool drawn = r->apply ? run_apply(r) : run_bench(r);
    return !drawn ? EXIT_USAGE : r->failures ? EXIT_FAIL : EXIT_PASS;
}

int op_run(const struct lesson *lesson, const struct options *opts)
{
    struct op_run r = {.lesson = lesson, .op = lesson->op, .opts = *opts};
    r.apply = opts->mode == MODE_DATA;
    const int rc = run(&r);
    session_close(&r.session);
    op_files_free(&r.files);
    return rc;
}
