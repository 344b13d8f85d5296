/* The convolution as an op: formats, tensors, draws, the gold check, cuDNN rows, and
 * the files of --input and --image. */
#include "conv_op.h"

#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "alloc.h"
#include "conv_flags.h"
#include "cuda_check.h"
#include "cudnn_baseline.h"
#include "cudnn_rows.h"
#include "escape.h"
#include "gold.h"
#include "gpu_runner.h"
#include "inputs.h"
#include "npy.h"
#include "op_buffers.h"
#include "rng.h"
#include "roofline.h"
#include "session.h"
#include "xnor_scale.h"

#define ERROR_SIZE 512

/* The inputs as one dtype stores them (fp16, bf16 and binary round them), and the
 * gold reference of exactly those inputs. */
struct rounded_inputs {
    bool ready;
    float *input, *weights; /* owned, or the host problem's own arrays for fp32 */
    float *scale;           /* binary: alpha[k] (the weights are alpha[k] * sign), else NULL */
    struct gold gold;
};

/* A format: the op's layout index packs a storage dtype (fp32 stands for tf32 and
 * 3xtf32 too), a layout and what the output holds. */
struct conv_format {
    enum dtype dtype;
    enum layout layout;
    enum output_format output;
};
#define LAYOUT_COUNT 3
#define OUTPUT_FORMAT_COUNT 2
#define FORMAT_COUNT (DTYPE_COUNT * LAYOUT_COUNT * OUTPUT_FORMAT_COUNT)

struct conv_op {
    struct op op; /* first: the op's context points here */
    const struct conv_spec *spec;
    const struct options *opts; /* the run's, from prepare on */
    struct host_problem host;
    struct rounded_inputs rounded[DTYPE_COUNT]; /* indexed by rounding_of(dtype) */
    const char *layout_names[FORMAT_COUNT];
    struct op_variant *variants;
};

static struct conv_op *state_of(const struct op *op)
{
    return op->context;
}

/* dtypes whose inputs are the same values share one gold and one storage. */
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

static struct rounded_inputs *inputs_for(struct conv_op *c, enum dtype d)
{
    enum dtype key = rounding_of(d);
    struct rounded_inputs *ri = &c->rounded[key];
    if (ri->ready)
        return ri;
    const struct conv_shape *s = &c->host.shape;
    ri->ready = true;
    if (key == DTYPE_FP32) {
        ri->input = c->host.input;
        ri->weights = c->host.weights;
    } else if (key == DTYPE_BINARY) {
        ri->input = rounded_copy(c->host.input, input_count(s), key);
        ri->weights = host_alloc(weight_count(s) * sizeof *ri->weights, "the binary weights");
        ri->scale = host_alloc((size_t)s->cout * sizeof *ri->scale, "the scaling factors");
        xnor_scale_weights(s, c->host.weights, ri->scale, ri->weights);
    } else {
        ri->input = rounded_copy(c->host.input, input_count(s), key);
        ri->weights = rounded_copy(c->host.weights, weight_count(s), key);
    }
    if (c->opts->verify)
        gold_compute(&ri->gold, s, ri->input, ri->weights, c->host.bias, c->opts->seed);
    return ri;
}

/* Buffer set 0 holds the problem's input; every other set a fresh random input of the
 * same kind, so that no two sets are the same data. */
static void draw_input(struct conv_op *c, enum dtype d, int set, float *input)
{
    const size_t count = input_count(&c->host.shape);
    if (set == 0) {
        memcpy(input, inputs_for(c, d)->input, count * sizeof *input);
        return;
    }
    struct rng g = rng_seeded(op_set_seed(c->opts->seed, set));
    fill_uniform(input, count, -1.0f, 1.0f, &g);
    for (size_t i = 0; i < count; i++)
        input[i] = dtype_round(d, input[i]);
}

static int format_index(struct conv_format f)
{
    return ((int)rounding_of(f.dtype) * LAYOUT_COUNT + (int)f.layout) * OUTPUT_FORMAT_COUNT +
           (int)f.output;
}

static struct conv_format format_at(int index)
{
    return (struct conv_format){(enum dtype)(index / OUTPUT_FORMAT_COUNT / LAYOUT_COUNT),
                                (enum layout)(index / OUTPUT_FORMAT_COUNT % LAYOUT_COUNT),
                                (enum output_format)(index % OUTPUT_FORMAT_COUNT)};
}

/* ---- the op's callbacks ---- */

static int tensors(const struct conv_shape *s, int layout, struct op_tensor *t)
{
    const struct conv_format fmt = format_at(layout), *f = &fmt;
    t[CONV_INPUT] = (struct op_tensor){
        .name = "the input", .bytes = tensor_bytes(conv_input_dims(s), f->dtype, f->layout)};
    t[CONV_WEIGHTS] =
        (struct op_tensor){.name = "the weights",
                           .bytes = tensor_bytes(conv_weight_dims(s), f->dtype, f->layout),
                           .shared = true};
    t[CONV_OUTPUT] = (struct op_tensor){
        .name = "the output",
        .bytes = output_tensor_bytes(conv_output_dims(s), f->dtype, f->layout, f->output),
        .written = true};
    t[CONV_BIAS] = (struct op_tensor){
        .name = "the bias", .bytes = bias_count(s) * sizeof(float), .shared = true};
    t[CONV_SCALE] =
        (struct op_tensor){.name = "the scaling factors",
                           .bytes = f->dtype == DTYPE_BINARY ? (size_t)s->cout * sizeof(float) : 0,
                           .shared = true};
    return CONV_TENSORS;
}

/* Minimum traffic of one run in a format: each tensor once, at its element size (the
 * output at one bit per value when the variant writes packed signs). */
static double min_bytes(const struct conv_shape *s, int layout)
{
    struct op_tensor t[CONV_TENSORS];
    tensors(s, layout, t);
    double bytes = 0;
    for (int i = 0; i < CONV_TENSORS; i++)
        bytes += i == CONV_SCALE ? 0 : (double)t[i].bytes;
    return bytes;
}

static double flops(const struct conv_shape *s, int layout)
{
    (void)layout;
    return conv_flops(s);
}

/* The input (set 0: the problem's, rounded to the dtype; others fresh), and with set 0
 * the weights, bias and scale; the output poisoned (NaN in every dtype). */
static bool draw(const struct op_draw *d, char *err, size_t err_size)
{
    (void)err, (void)err_size;
    struct conv_op *c = state_of(d->op);
    const struct conv_shape *s = d->shape;
    const struct conv_format f = format_at(d->layout);
    struct rounded_inputs *ri = inputs_for(c, f.dtype);
    void *const *t = d->tensor;
    float *input = host_alloc(input_count(s) * sizeof *input, "the input");
    draw_input(c, f.dtype, d->set, input);
    tensor_from_nchw(input, conv_input_dims(s), f.dtype, f.layout, t[CONV_INPUT]);
    free(input);
    struct op_tensor sizes[CONV_TENSORS];
    tensors(s, d->layout, sizes);
    memset(t[CONV_OUTPUT], POISON_BYTE, sizes[CONV_OUTPUT].bytes);
    if (t[CONV_WEIGHTS])
        tensor_from_nchw(ri->weights, conv_weight_dims(s), f.dtype, f.layout, t[CONV_WEIGHTS]);
    if (t[CONV_BIAS])
        memcpy(t[CONV_BIAS], c->host.bias, sizes[CONV_BIAS].bytes);
    if (t[CONV_SCALE])
        memcpy(t[CONV_SCALE], ri->scale, sizes[CONV_SCALE].bytes);
    return true;
}

/* The output as float32 NCHW, from the format it was written in (values only). */
static float *output_as_nchw(const struct conv_shape *s, struct conv_format f, const void *out)
{
    float *nchw = host_alloc(output_count(s) * sizeof *nchw, "the output's conversion");
    tensor_to_nchw(out, conv_output_dims(s), output_dtype(f.dtype), output_layout(f.layout), nchw);
    return nchw;
}

/* The outputs the check reads, in its plan's order, as float32 from the format they were
 * written in: a sampled check of a large layer converts tens of thousands of outputs,
 * not all of its billions. */
static float *planned_outputs(const struct gold *g, const struct conv_shape *s,
                              struct conv_format f, const void *out)
{
    float *v = host_alloc(g->count * sizeof *v, "the checked outputs");
    for (size_t i = 0; i < g->count; i++)
        v[i] = tensor_value_at(out, conv_output_dims(s), output_dtype(f.dtype),
                               output_layout(f.layout), gold_output(g, i));
    return v;
}

/* ---- values a dtype cannot store ---- */

/* The largest finite value a dtype stores: fp16's 65504 and bf16's 0x1.fep127 (a little
 * short of fp32's largest); TF32 and 3xTF32 are rounded on the device, in fp32's range;
 * binary keeps signs. */
static double dtype_largest(enum dtype d)
{
    switch (d) {
    case DTYPE_FP16: return 65504.0;
    case DTYPE_BF16: return 0x1.fep127;
    default: return FLT_MAX;
    }
}

/* True when storing x in d gives an infinity: x is beyond d's range. */
static bool unstorable(enum dtype d, double x)
{
    return isfinite(x) && (fabs(x) > FLT_MAX || isinf(dtype_round(d, (float)x)));
}

/* The first of count values that d cannot store, or count. */
static size_t first_unstorable(enum dtype d, const float *x, size_t count)
{
    for (size_t i = 0; i < count; i++)
        if (unstorable(d, x[i]))
            return i;
    return count;
}

/* A flat C-order index as "(1, 0, 2)" in the dims given. */
static void format_element(char *buf, size_t size, int ndim, const size_t *dims, size_t flat)
{
    size_t at[4] = {0};
    for (int k = ndim - 1; k >= 0; k--) {
        at[k] = flat % dims[k];
        flat /= dims[k];
    }
    size_t used = 0;
    for (int k = 0; k < ndim && used < size; k++)
        used += (size_t)snprintf(buf + used, size - used, "%s%zu", k ? ", " : "(", at[k]);
    if (used < size)
        snprintf(buf + used, size - used, ")");
}

/* Why data for dtype d cannot be stored: the flag, the file and its first value beyond
 * d's range, in the file's own indices, into why; false when every value fits. Only
 * files and filters can hold such values: the drawn inputs and weights lie in [-1, 1),
 * an image's pixels in [0, 255]. */
static bool data_beyond_range(const struct conv_request *q, const struct host_problem *p,
                              enum dtype d, char *why, size_t size)
{
    const struct conv_shape *s = &p->shape;
    char range[96], where[96];
    snprintf(range, sizeof range, "beyond %s's range (its largest finite value is %g)",
             dtype_name(d), dtype_largest(d));
    size_t at = input_count(s);
    if (q->input && (at = first_unstorable(d, p->input, input_count(s))) < input_count(s)) {
        const size_t all[4] = {(size_t)s->n, (size_t)s->cin, (size_t)s->h, (size_t)s->w};
        format_element(where, sizeof where, p->input_ndim, all + 4 - p->input_ndim, at);
        snprintf(why, size, "--input %s: element %s (flat index %zu) is %g, %s", q->input, where,
                 at, (double)p->input[at], range);
        return true;
    }
    const size_t count = weight_count(s);
    if (!(q->weights || q->filter) || (at = first_unstorable(d, p->weights, count)) == count)
        return false;
    const size_t taps = (size_t)s->ksize * s->ksize;
    if (q->weights) {
        /* The file's rank: RxS (one channel pair) or KxCxRxS. */
        int ndim = 4;
        size_t shape[NPY_MAX_DIMS];
        char err[ERROR_SIZE];
        if (!npy_read_shape(q->weights, &ndim, shape, err, sizeof err) || ndim != 2)
            ndim = 4;
        const size_t all[4] = {(size_t)s->cout, (size_t)s->cin, (size_t)s->ksize,
                               (size_t)s->ksize};
        format_element(where, sizeof where, ndim, all + 4 - ndim, at);
        snprintf(why, size, "--weights %s: element %s (flat index %zu) is %g, %s", q->weights,
                 where, at, (double)p->weights[at], range);
    } else { /* the filter's taps, repeated for every channel pair */
        snprintf(why, size, "--filter %s: the tap at row %zu, column %zu is %g, %s", q->filter,
                 at % taps / (size_t)s->ksize, at % (size_t)s->ksize, (double)p->weights[at],
                 range);
    }
    return true;
}

/* Why the variants of a dtype (by rounding_of) cannot take the problem's data, "" when
 * they can. The variants' unsupported hooks see the shape alone, so the reasons live
 * here; only fp16 and bf16 can be short of range. */
#define RANGE_WHY_SIZE 1024
static char range_why[DTYPE_COUNT][RANGE_WHY_SIZE];

static const char *fp16_range(const struct conv_shape *s)
{
    (void)s;
    return range_why[DTYPE_FP16][0] ? range_why[DTYPE_FP16] : NULL;
}

static const char *bf16_range(const struct conv_shape *s)
{
    (void)s;
    return range_why[DTYPE_BF16][0] ? range_why[DTYPE_BF16] : NULL;
}

/* The variant a run on the op's own data applies (op_run.c's choice): --variant, else
 * the op's apply_variant, else the first. */
static const struct op_variant *applied_variant(const struct conv_op *c, const char *name)
{
    name = name ? name : c->op.apply_variant;
    for (int i = 0; name && i < c->op.variant_count; i++)
        if (strcmp(c->variants[i].name, name) == 0)
            return &c->variants[i];
    return &c->variants[0];
}

/* Before any GPU work: data that the dtype of a variant cannot store. Applying one
 * variant to the data (--input, --image), it is bad input: one line naming the flag, the
 * file, the first value and the range, and false. Timing (a --filter file), the
 * variants of that dtype are skipped with the same reason, and so are cuDNN's rows. */
static bool data_in_range(struct conv_op *c, const struct conv_request *q, const struct options *o)
{
    if (c->op.variant_count == 0) /* conv_cudnn_row's problem: the caller's data */
        return true;
    memset(range_why, 0, sizeof range_why);
    char why[RANGE_WHY_SIZE];
    if (o->mode == MODE_DATA) {
        const struct op_variant *v = applied_variant(c, o->variant);
        const enum dtype d = rounding_of(v->dtype);
        if (!data_beyond_range(q, &c->host, d, why, sizeof why))
            return true;
        print_error("%s: %s stores its inputs in %s; scale the data, or pick a --variant of "
                    "another dtype", why, v->name, dtype_name(d));
        return false;
    }
    for (int i = 0; i < c->op.variant_count; i++) {
        const enum dtype d = rounding_of(c->variants[i].dtype);
        if (d != DTYPE_FP16 && d != DTYPE_BF16)
            continue;
        if (!range_why[d][0] && data_beyond_range(q, &c->host, d, why, sizeof why))
            escape_text(range_why[d], sizeof range_why[d], why);
        if (range_why[d][0])
            c->variants[i].unsupported = d == DTYPE_FP16 ? fp16_range : bf16_range;
    }
    return true;
}

/* Checked outputs whose reference the output's dtype cannot store (stored, an
 * infinity); *first gets the first one's flat index. */
static size_t outputs_beyond_range(const struct gold *g, enum dtype d, size_t *first)
{
    size_t n = 0;
    for (size_t i = 0; i < g->count; i++)
        if (unstorable(d, g->value[i]) && n++ == 0)
            *first = g->index ? g->index[i] : i;
    return n;
}

/* Against the gold of the inputs as the variant's dtype stores them; a variant that
 * writes packed signs is checked bit by bit, and its params say so. A result whose true
 * values its dtype cannot store (an fp16 output past 65504 from inputs within range) is
 * not one: the row fails, its params count those outputs (output_beyond_range=N), and
 * a line before it says why. */
static struct check_result check(const struct op_check *k)
{
    struct conv_op *c = state_of(k->op);
    const struct conv_shape *s = k->shape;
    const enum dtype d = k->variant->dtype;
    const struct conv_format f = format_at(k->layout);
    const struct gold *g = &inputs_for(c, d)->gold;
    const struct tolerance tol = tolerance_for(d, s);
    if (f.output == OUTPUT_SIGN_BITS) {
        struct check_result r = check_sign_bits(g, k->after[CONV_OUTPUT], s, tol);
        snprintf(k->params, k->params_size, "output=%s;near_zero=%zu", output_format_name(f.output),
                 r.near_zero);
        return r;
    }
    float *out = planned_outputs(g, s, f, k->after[CONV_OUTPUT]);
    struct check_result r = check_planned(g, out, tol);
    free(out);
    const enum dtype od = output_dtype(d);
    size_t first = 0;
    const size_t beyond = outputs_beyond_range(g, od, &first);
    if (beyond) {
        r.pass = false;
        snprintf(k->params, k->params_size, "output_beyond_range=%zu", beyond);
        printf("(%s: %zu of the %zu outputs checked are beyond %s's range, its largest finite "
               "value %g, from output %zu on: %s stores them as infinity, so it fails)\n",
               k->variant->name, beyond, g->count, dtype_name(od), dtype_largest(od), first,
               dtype_name(od));
    }
    return r;
}

struct op_baseline conv_baseline(enum dtype d, enum layout l)
{
    return (struct op_baseline){d, layout_name(l), (int)l};
}

/* The cuDNN rows a variant of this dtype and layout is compared with: its own format,
 * fp32 for 3xtf32 (the accuracy it delivers), fp32 NCHW and fp16 NHWC for binary. */
static int baselines(const struct op *op, const struct op_variant *v, struct op_baseline *out)
{
    const struct conv_spec *spec = state_of(op)->spec;
    if (!v) {
        int n = 0;
        for (; n < spec->extra_baseline_count && n < OP_MAX_BASELINES; n++) {
            const struct baseline_format *b = &spec->extra_baselines[n];
            out[n] = conv_baseline(b->dtype, b->layout);
        }
        return n;
    }
    const struct conv_variant *cv = v->impl;
    switch (cv->dtype) {
    case DTYPE_BINARY:
        out[0] = conv_baseline(DTYPE_FP32, LAYOUT_NCHW);
        out[1] = conv_baseline(DTYPE_FP16, LAYOUT_NHWC);
        return 2;
    case DTYPE_3XTF32: out[0] = conv_baseline(DTYPE_FP32, cv->layout); return 1;
    default: out[0] = conv_baseline(cv->dtype, cv->layout); return 1;
    }
}

/* cuDNN computes the convolution without bias; the bias is added here, on the host
 * and untimed, before the same check every variant gets. */
struct cudnn_check_context {
    struct conv_op *c;
    enum dtype dtype;
};

static struct check_result check_cudnn_output(void *context, float *out)
{
    struct cudnn_check_context *cc = context;
    const struct conv_shape *s = &cc->c->host.shape;
    if (!cc->c->opts->verify)
        return (struct check_result){.pass = true};
    if (s->bias) {
        size_t plane = (size_t)s->h * s->w;
        for (size_t i = 0; i < output_count(s); i++)
            out[i] += cc->c->host.bias[i / plane % s->cout];
    }
    return check_output(&inputs_for(cc->c, cc->dtype)->gold, out, tolerance_for(cc->dtype, s));
}

/* cuDNN's view of the op's buffer sets of a format. */
static struct gpu_buffers gpu_buffers_of(const struct op_buffers *ob, const struct conv_shape *s,
                                         enum dtype d, enum layout l)
{
    struct gpu_buffers b = {.shape = *s,
                            .dtype = d,
                            .layout = l,
                            .sets = ob->sets,
                            .weights = ob->set[0][CONV_WEIGHTS],
                            .bias = ob->set[0][CONV_BIAS],
                            .input_bytes = ob->t[CONV_INPUT].bytes,
                            .output_bytes = ob->t[CONV_OUTPUT].bytes,
                            .weight_bytes = ob->t[CONV_WEIGHTS].bytes,
                            .stream = ob->stream};
    for (int i = 0; i < ob->sets; i++) {
        b.input[i] = ob->set[i][CONV_INPUT];
        b.output[i] = ob->set[i][CONV_OUTPUT];
    }
    return b;
}

/* Every algorithm cuDNN offers for this format, timed with the harness's protocol on the
 * problem's own inputs (cudnn_rows.h); the fastest that passed is the row. */
static void time_baseline(const struct op *op, const struct op_baseline *b,
                          const struct op_bench *bench, struct result_row *row)
{
    struct conv_op *c = state_of(op);
    const struct conv_shape *s = &c->host.shape;
    const enum dtype d = b->dtype;
    const enum layout l = (enum layout)b->id;
    if ((d == DTYPE_BF16 || d == DTYPE_TF32) && bench->session->gpu.cc_major < 8) {
        row->skipped = "bf16 and TF32 tensor cores need compute capability 8.0";
        return;
    }
    if (range_why[rounding_of(d)][0]) { /* data_in_range */
        row->skipped = range_why[rounding_of(d)];
        return;
    }
    const int format = format_index((struct conv_format){d, l, OUTPUT_VALUES});
    const struct op_source src = {op, s, NULL, c->opts->seed, NULL};
    struct op_buffers ob;
    if (!op_buffers_create(&ob, &src, format, false,
                           op_sets_for(op, s, format, &bench->session->gpu),
                           bench->session->stream)) {
        op_buffers_free(&ob);
        row->skipped = "its inputs could not be drawn";
        return;
    }
    struct gpu_buffers buf = gpu_buffers_of(&ob, s, d, l);
    struct cudnn_check_context cc = {c, d};
    size_t free_bytes, total_bytes;
    CUDA_CHECK(cudaMemGetInfo(&free_bytes, &total_bytes));
    float *host_out = host_alloc(output_count(s) * sizeof *host_out, "the output");
    struct cudnn_row best = cudnn_best_row(&buf, free_bytes, check_cudnn_output, &cc, host_out,
                                           bench->opts->warmup, bench->opts->reps);
    free(host_out);
    op_buffers_free(&ob);
    printf("(cuDNN %s %s, conv without bias, every algorithm timed: %s)\n", dtype_name(d),
           layout_name(l), best.tried);
    if (best.skipped) {
        row->skipped = best.skipped;
        return;
    }
    row->time = best.time;
    row->verified = bench->opts->verify;
    row->check = best.check;
    int v = cudnn_version();
    snprintf(row->params, sizeof row->params, "algo=%s;cudnn=%d.%d.%d",
             cudnn_algorithm_name(best.algorithm), v / 10000, v % 10000 / 100, v % 100);
    struct conv_format f = {d, l, OUTPUT_VALUES};
    session_fill_rates(bench->session, row, min_bytes(s, format_index(f)), conv_flops(s), true);
}

void conv_cudnn_row(const struct conv_shape *s, const struct op_baseline *b,
                    const struct op_bench *bench, struct result_row *row)
{
    static const struct conv_spec no_variants = {0};
    struct options o = *bench->opts;
    o.mode = MODE_BENCH;
    o.shape = *s;
    memset(o.data, 0, sizeof o.data);
    const struct op *op = conv_op(&no_variants);
    if (op->prepare(op, &o) == 0)
        time_baseline(op, b, bench, row);
    else
        row->skipped = "its inputs could not be made";
    op->release(op);
}

static void print_problem(const struct op *op, const struct op_bench *bench)
{
    struct conv_op *c = state_of(op);
    const struct session *ss = bench->session;
    const struct conv_shape *s = &c->host.shape;
    const struct conv_format fp32 = {DTYPE_FP32, LAYOUT_NCHW, OUTPUT_VALUES};
    double bytes = min_bytes(s, format_index(fp32));
    printf("problem %s: n=%d cin=%d cout=%d %dx%d ksize=%d %s | %.3f GB min traffic at fp32, "
           "%.3f GFLOP | seed %llu\n",
           c->opts->preset, s->n, s->cin, s->cout, s->h, s->w, s->ksize,
           s->bias ? "bias" : "no bias", bytes / 1e9, conv_flops(s) / 1e9,
           (unsigned long long)c->opts->seed);
    if (ss->have_gpu) {
        struct roofline roof = session_roofline(ss, bytes, conv_flops(s), DTYPE_FP32);
        const int format = format_index(fp32);
        size_t set_mb = op_set_bytes(op, s, format) >> 20;
        int sets = c->opts->mode == MODE_BENCH ? op_sets_for(op, s, format, &ss->gpu) : 1;
        printf("fp32 roofline %.4f ms (%s-bound) | cache: ", roofline_time_ms(&roof),
               roofline_memory_bound(&roof) ? "memory" : "compute");
        if (sets > 1)
            printf("rotating %d buffer sets of %zu MB at fp32 (L2 %zu MB)", sets, set_mb,
                   ss->gpu.l2_bytes >> 20);
        else
            printf("one buffer set of %zu MB at fp32 (L2 %zu MB)", set_mb, ss->gpu.l2_bytes >> 20);
    }
    if (c->opts->verify)
        printf("%scheck: %s against float64 of the inputs as each dtype stores them\n",
               ss->have_gpu ? " | " : "", gold_is_sampled(s) ? "sampled" : "every output");
    else
        printf("%scheck: off (--no-verify)\n", ss->have_gpu ? " | " : "");
}

/* --out (the image, each response's magnitude) or --output (.npy, the input's rank
 * when it has one channel). */
static bool write_result(const struct op *op, int layout, void *const *after, const char **path)
{
    struct conv_op *c = state_of(op);
    const struct options *o = c->opts;
    const struct conv_shape *s = &c->host.shape;
    const bool image = o->data[DATA_IMAGE] != NULL;
    *path = image ? o->data[DATA_OUT] : o->output_path;
    if (!*path)
        return true;
    float *out = output_as_nchw(s, format_at(layout), after[CONV_OUTPUT]);
    char err[ERROR_SIZE];
    bool ok;
    if (image) {
        struct image picture = c->host.image;
        picture.data = out;
        for (size_t i = 0; i < output_count(s); i++)
            out[i] = fabsf(out[i]); /* edge filters give signed responses */
        ok = image_write(*path, &picture, err, sizeof err);
    } else {
        size_t shape[4] = {(size_t)s->n, (size_t)s->cout, (size_t)s->h, (size_t)s->w};
        int ndim = s->cout == 1 && c->host.input_ndim < 4 ? c->host.input_ndim : 4;
        ok = npy_write(*path, out, ndim, shape + (4 - ndim), err, sizeof err);
    }
    free(out);
    if (!ok)
        print_error("%s %s", image ? "--out" : "--output", err);
    return ok;
}

/* ---- the lesson's variants, through the op ---- */

/* What a conv_variant's run gets from the op's tensors. */
static struct conv_args conv_args_of(const struct op_args *a)
{
    return (struct conv_args){.shape = a->shape,
                              .input = a->tensor[CONV_INPUT],
                              .weights = a->tensor[CONV_WEIGHTS],
                              .bias = a->tensor[CONV_BIAS],
                              .scale = a->tensor[CONV_SCALE],
                              .output = a->tensor[CONV_OUTPUT],
                              .scratch = a->scratch,
                              .stream = a->stream,
                              .device = a->device,
                              .gpus = a->gpus};
}

static const struct conv_variant *conv_variant_of(const struct op_args *a)
{
    return a->variant->impl;
}

/* The op's run, setup, teardown and collect (run_conv, ...): the variant's own, called
 * with the convolution's arguments. */
#define CALL_VARIANT(hook)                                                                         \
    static void hook##_conv(const struct op_args *a)                                               \
    {                                                                                              \
        struct conv_args c = conv_args_of(a);                                                      \
        conv_variant_of(a)->hook(&c);                                                              \
    }
CALL_VARIANT(run)
CALL_VARIANT(setup)
CALL_VARIANT(teardown)
CALL_VARIANT(collect)

static size_t scratch_conv(const struct op_variant *v, const struct conv_shape *s,
                           const double *param)
{
    (void)param;
    const struct conv_variant *cv = v->impl;
    return cv->scratch_bytes(s);
}

static const char *writes_signs(const struct conv_shape *s)
{
    (void)s;
    return "it writes packed sign bits, which --input and --image cannot save (they save "
           "values): pick another --variant";
}

/* The weights the lesson can use, or one line naming the file or filter they came from. */
static bool weights_usable(const struct conv_spec *spec, const struct conv_request *q,
                           const struct host_problem *p)
{
    const char *why = spec->check_weights ? spec->check_weights(&p->shape, p->weights) : NULL;
    if (!why)
        return true;
    const char *from = q->weights ? q->weights : q->filter;
    if (from)
        print_error("%s %s: %s", q->weights ? "--weights" : "--filter", from, why);
    else
        print_error("%s", why);
    return false;
}

/* The problem the flags ask for: files, an image (with its default filter and size), a
 * named filter or the seed. */
static int prepare(const struct op *op, struct options *o)
{
    struct conv_op *c = state_of(op);
    const char *const *d = o->data;
    const bool image = d[DATA_IMAGE] != NULL;
    struct conv_request q = {.input = d[DATA_INPUT],
                             .weights = d[DATA_WEIGHTS],
                             .bias = d[DATA_BIAS],
                             .image = d[DATA_IMAGE],
                             .out = d[DATA_OUT],
                             .filter = d[DATA_FILTER] || !image ? d[DATA_FILTER]
                                                                : IMAGE_DEFAULT_FILTER,
                             .shape = o->shape,
                             .preset = o->preset,
                             .ksize_given = o->ksize_given,
                             .separable = c->spec->separable_weights,
                             .seed = o->seed};
    if (image && !q.shape.ksize)
        q.shape.ksize = IMAGE_DEFAULT_KSIZE;
    c->opts = o;
    if (load_inputs(&q, &c->host) != 0 || !weights_usable(c->spec, &q, &c->host) ||
        !data_in_range(c, &q, o))
        return EXIT_USAGE;
    o->shape = c->host.shape;
    for (int i = 0; o->mode == MODE_DATA && i < c->op.variant_count; i++)
        if (c->spec->variants[i].output == OUTPUT_SIGN_BITS)
            c->variants[i].unsupported = writes_signs;
    return EXIT_PASS;
}

static void release(const struct op *op)
{
    struct conv_op *c = state_of(op);
    for (int d = 0; d < DTYPE_COUNT; d++) {
        struct rounded_inputs *ri = &c->rounded[d];
        if (ri->input != c->host.input)
            free(ri->input);
        if (ri->weights != c->host.weights)
            free(ri->weights);
        free(ri->scale);
        gold_free(&ri->gold);
    }
    free_inputs(&c->host);
    free(c->variants);
    free(c);
}

/* The variants as the op's: one layout per format, run through conv_args. */
static struct op_variant op_variant_of(const struct conv_variant *cv, bool cpu)
{
    const int layout = format_index((struct conv_format){cv->dtype, cv->layout, cv->output});
    return (struct op_variant){.name = cv->name,
                               .what = cv->what,
                               .layout = layout,
                               .dtype = cv->dtype,
                               .cpu = cpu,
                               .parallel = cv->parallel,
                               .unsupported = cv->unsupported,
                               .needs = cv->needs,
                               .scratch_bytes = cv->scratch_bytes ? scratch_conv : NULL,
                               .setup = cv->setup ? setup_conv : NULL,
                               .teardown = cv->teardown ? teardown_conv : NULL,
                               .collect = cv->collect ? collect_conv : NULL,
                               .run = run_conv,
                               .flops = cv->flops,
                               .max_gflop = cv->max_gflop,
                               .impl = cv};
}

const struct op *conv_op(const struct conv_spec *spec)
{
    struct conv_op *c = host_alloc(sizeof *c, "the problem");
    memset(c, 0, sizeof *c);
    c->spec = spec;
    const int count = spec->variant_count;
    c->variants = host_alloc((size_t)(count ? count : 1) * sizeof *c->variants, "the variants");
    for (int i = 0; i < count; i++)
        c->variants[i] = op_variant_of(&spec->variants[i], spec->cpu);
    for (int i = 0; i < FORMAT_COUNT; i++)
        c->layout_names[i] = layout_name(format_at(i).layout);
    c->op = (struct op){.context = c,
                        .variants = c->variants,
                        .variant_count = count,
                        .unsupported = spec->unsupported,
                        .layout_names = c->layout_names,
                        .tensors = tensors,
                        .draw = draw,
                        .check = check,
                        .min_bytes = min_bytes,
                        .flops = flops,
                        .baselines = baselines,
                        .time_baseline = time_baseline,
                        .print_problem = print_problem,
                        .prepare = prepare,
                        .release = release,
                        .apply_variant = spec->image_variant,
                        .write = write_result,
                        .params = spec->params,
                        .param_count = spec->param_count,
                        .scaling_reference = spec->scaling_reference};
    conv_flags_declare(&c->op);
    return &c->op;
}
