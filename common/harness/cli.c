#include "cli.h"

#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "escape.h"
#include "fileutil.h"
#include "op_files.h"
#include "op_params.h"

enum flag {
    FLAG_SIZE = 256, FLAG_BATCH, FLAG_CIN, FLAG_COUT, FLAG_KSIZE, FLAG_PRESET, FLAG_LIST_PRESETS,
    FLAG_REPS, FLAG_WARMUP, FLAG_SEED, FLAG_VARIANT, FLAG_NO_VERIFY, FLAG_NO_CUDNN, FLAG_CSV,
    FLAG_DEVICE, FLAG_OUTPUT, FLAG_FRAMES_CSV, FLAG_HELP,
    FLAG_OP_PARAM, /* FLAG_OP_PARAM + i: the op's i-th flag */
    FLAG_OP_FILE = FLAG_OP_PARAM + OP_MAX_PARAMS, /* FLAG_OP_FILE + i: the op's i-th file */
    FLAG_OP_DATA = FLAG_OP_FILE + OP_MAX_TENSORS  /* FLAG_OP_DATA + i: its i-th data flag */
};

/* Every lesson's flags. */
static const struct option run_options[] = {
    {"size", required_argument, NULL, FLAG_SIZE},
    {"batch", required_argument, NULL, FLAG_BATCH},
    {"cin", required_argument, NULL, FLAG_CIN},
    {"cout", required_argument, NULL, FLAG_COUT},
    {"ksize", required_argument, NULL, FLAG_KSIZE},
    {"preset", required_argument, NULL, FLAG_PRESET},
    {"list-presets", no_argument, NULL, FLAG_LIST_PRESETS},
    {"reps", required_argument, NULL, FLAG_REPS},
    {"warmup", required_argument, NULL, FLAG_WARMUP},
    {"seed", required_argument, NULL, FLAG_SEED},
    {"variant", required_argument, NULL, FLAG_VARIANT},
    {"no-verify", no_argument, NULL, FLAG_NO_VERIFY},
    {"no-cudnn", no_argument, NULL, FLAG_NO_CUDNN},
    {"csv", required_argument, NULL, FLAG_CSV},
    {"device", required_argument, NULL, FLAG_DEVICE},
    {"frames-csv", required_argument, NULL, FLAG_FRAMES_CSV},
    {"help", no_argument, NULL, FLAG_HELP},
};
#define RUN_FLAGS (sizeof run_options / sizeof run_options[0])

/* An op's written result (op.file_sets, op.write). */
static const struct option output_option = {"output", required_argument, NULL, FLAG_OUTPUT};
/* Room for every flag an op can add and the end marker. */
#define MAX_FLAGS (RUN_FLAGS + OP_MAX_PARAMS + OP_MAX_TENSORS + OP_MAX_DATA_FLAGS + 2)

#define USAGE_ERROR_SIZE 1024

/* One line, with the bytes of the user's text escaped (a newline in --size stays
 * on the line). */
static enum cli_status usage_error(const char *format, ...)
{
    char message[USAGE_ERROR_SIZE];
    va_list args;
    va_start(args, format);
    escape_vformat(message, sizeof message, format, args);
    va_end(args);
    print_error("%s (see --help)", message);
    return CLI_EXIT_USAGE;
}

bool parse_int_in(const char *text, long lo, long hi, long *value)
{
    char *end;
    errno = 0;
    long v = strtol(text, &end, 10);
    if (errno || end == text || *end != '\0' || v < lo || v > hi)
        return false;
    *value = v;
    return true;
}

bool parse_size(const char *text, int *h, int *w)
{
    const char *x = strchr(text, 'x');
    if (!x || x == text)
        return false;
    char height[32];
    size_t len = (size_t)(x - text);
    if (len >= sizeof height)
        return false;
    memcpy(height, text, len);
    height[len] = '\0';
    long hv, wv;
    if (!parse_int_in(height, 1, MAX_SIDE, &hv) || !parse_int_in(x + 1, 1, MAX_SIDE, &wv))
        return false;
    *h = (int)hv;
    *w = (int)wv;
    return true;
}

static const struct conv_preset *find_op_preset(const struct op *op, const char *name)
{
    for (int i = 0; i < op->preset_count; i++)
        if (strcmp(op->presets[i].name, name) == 0)
            return &op->presets[i];
    return NULL;
}

static void print_run_help(const struct lesson *lesson)
{
    const struct op *op = lesson->op;
    printf("run:\n");
    printf("  --reps N           timed repetitions, 1..%d (default %d on GPU, %d on CPU)\n", MAX_REPS,
           GPU_DEFAULT_REPS, CPU_DEFAULT_REPS);
    printf("  --warmup N         untimed runs first, 0..%d (default %d on GPU, %d on CPU)\n",
           MAX_REPS, GPU_DEFAULT_WARMUP, CPU_DEFAULT_WARMUP);
    printf("  --seed S           seed of the random inputs, 0..%ld (default %d)\n", LONG_MAX,
           DEFAULT_SEED);
    printf("  --variant NAME     run one variant (default: all):");
    for (int i = 0; i < op->variant_count; i++)
        printf(" %s", op->variants[i].name);
    printf("\n  --no-verify        skip the check against the float64 reference\n");
    if (op->baselines)
        printf("  --no-cudnn         skip the cuDNN baseline row\n");
    printf("  --csv FILE         append one row per variant (header written once)\n");
    if (op->frames)
        printf("  --frames-csv FILE  append one row per variant and frame: its time and error\n");
    printf("  --device ID        CUDA device, 0..%d (default 0)\n\n", MAX_DEVICE_ID);
}

static void print_variants(const struct op *op)
{
    printf("variants:\n");
    for (int i = 0; i < op->variant_count; i++)
        printf("  %-18s %s\n", op->variants[i].name, op->variants[i].what);
    printf("\nexit codes: 0 all passed, 1 a check failed or runtime error, 2 usage or input\n");
    printf("error, a problem too large for host or GPU memory included (one line names the\n");
    printf("memory and the size), 77 no usable GPU.\n");
}

/* The variants that can write a set's files after their run, after `indent` spaces,
 * wrapped before column HELP_COLUMNS. */
#define HELP_COLUMNS 100
static void print_writers(const struct op *op, const struct op_file_set *set, int indent)
{
    char writers[1024];
    op_files_writers(op, set, writers, sizeof writers);
    int column = printf("%*sonly by --variant", indent, "");
    for (const char *word = writers; *word;) {
        const int len = (int)strcspn(word, " ");
        if (column + 1 + len >= HELP_COLUMNS)
            column = printf("\n%*s", indent, "") - 1;
        else
            column += printf(" ");
        column += printf("%.*s", len, word);
        word += len + (word[len] == ' ');
    }
    printf("\n");
}

/* An op's files, as it declares them (op.file_sets), set by set. */
static void print_op_files_help(const struct lesson *lesson)
{
    const struct op *op = lesson->op;
    if (!op->file_set_count)
        return;
    const bool several = op->file_set_count > 1;
    printf("data (NumPy .npy, little-endian float32, C order; all of them or none: the problem\n");
    printf("follows their shapes, and the check their values)");
    if (several)
        printf(",\nin one of %d layouts, told apart by the files' ranks", op->file_set_count);
    printf(":\n");
    const struct conv_shape *shape = &find_op_preset(op, lesson->default_preset)->shape;
    const int indent = several ? 4 : 2, width = 18 - (indent - 2);
    for (int k = 0; k < op->file_set_count; k++) {
        const struct op_file_set *set = &op->file_sets[k];
        if (several)
            printf("  in %s:\n", set->name);
        for (int i = 0; i < set->file_count; i++) {
            char flag[64], dims[256];
            snprintf(flag, sizeof flag, "--%s FILE", set->files[i].flag);
            op_file_dims(op, &set->files[i], dims, sizeof dims);
            printf("%*s%-*s %s: %s\n", indent, "", width, flag, dims, set->files[i].help);
        }
        printf("%*s%-*s --%s after the run of --variant NAME, in its shape\n", indent, "", width,
               "--output FILE", set->files[op_written_file(op, set, shape)].flag);
        if (set->writes)
            print_writers(op, set, indent + width + 1);
    }
    printf("\n");
}

/* The usage line of an op's files. */
static void print_files_usage(const struct lesson *lesson)
{
    const struct op *op = lesson->op;
    if (!op_file_count(op))
        return;
    printf("       %s", lesson->name);
    for (int i = 0; i < op_file_count(op); i++)
        printf(" --%s FILE.npy", op_file_flag(op, i));
    printf("\n%*s[--variant NAME --output FILE.npy]\n", (int)strlen(lesson->name) + 8, "");
}

/* An op's problem flags: the same names, read as its page says (op.shape_help). */
static void print_problem_help(const struct lesson *lesson)
{
    const struct op *op = lesson->op;
    printf("problem (default: --preset %s; %s):\n", lesson->default_preset, op->shape_help);
    printf("  --preset NAME      a named problem (--list-presets); excludes the flags below\n");
    printf("  --size HxW, --batch N, --cin C, --cout K, --ksize R (odd, 1..%d): each from\n",
           MAX_KSIZE);
    printf("                     the default preset unless given\n");
    printf("  --list-presets     print the presets and exit\n");
    op_print_param_help(op);
    printf("\n");
}

static void print_help(const struct lesson *lesson)
{
    const struct op *op = lesson->op;
    printf("%s: %s\n\n", lesson->name, lesson->title);
    printf("usage: %s [problem] [run options]\n", lesson->name);
    if (op->print_usage)
        op->print_usage(op, lesson->name);
    else
        print_files_usage(lesson);
    printf("\n");
    if (op->print_problem_help)
        op->print_problem_help(op, lesson->default_preset);
    else
        print_problem_help(lesson);
    print_run_help(lesson);
    if (op->print_data_help)
        op->print_data_help(op);
    else
        print_op_files_help(lesson);
    print_variants(op);
}

static void print_presets(const struct op *op)
{
    for (int i = 0; i < op->preset_count; i++) {
        const struct conv_preset *p = &op->presets[i];
        printf("%-15s n=%d cin=%d cout=%d %dx%d ksize=%d%s  %s\n", p->name, p->shape.n,
               p->shape.cin, p->shape.cout, p->shape.h, p->shape.w, p->shape.ksize,
               p->shape.bias ? " bias" : "", p->what);
    }
}

static bool has_variant(const struct op *op, const char *name)
{
    for (int i = 0; i < op->variant_count; i++)
        if (strcmp(op->variants[i].name, name) == 0)
            return true;
    return false;
}

static bool read_count(const char *flag, const char *text, long lo, long hi, long *value)
{
    if (parse_int_in(text, lo, hi, value))
        return true;
    usage_error("%s %s: expected a whole number in %ld..%ld", flag, text, lo, hi);
    return false;
}

/* An op's flag: a number in its range, whole when it says so. */
static bool read_param(const struct op_param *p, const char *text, double *value)
{
    char *end;
    errno = 0;
    const double v = strtod(text, &end);
    if (errno || end == text || *end != '\0' || !(v >= p->lo && v <= p->hi) ||
        (p->integer && v != floor(v))) {
        usage_error("--%s %s: expected a%s number in %g..%g", p->flag, text,
                    p->integer ? " whole" : "", p->lo, p->hi);
        return false;
    }
    *value = v;
    return true;
}

/* Two outputs of one run on one file: the later write would replace the earlier (a
 * .npy over the CSV). false after one line naming both flags. */
static bool outputs_apart(const struct file_arg *outputs, size_t count)
{
    for (size_t i = 0; i < count; i++)
        for (size_t j = i + 1; j < count; j++) {
            if (!outputs[i].path || !outputs[j].path ||
                !same_output(outputs[i].path, outputs[j].path))
                continue;
            const bool spelt_alike = strcmp(outputs[i].path, outputs[j].path) == 0;
            print_error("%s %s: is also the %s file%s%s: give each output a file of its own",
                        outputs[i].flag, outputs[i].path, outputs[j].flag, spelt_alike ? "" : " ",
                        spelt_alike ? "" : outputs[j].path);
            return false;
        }
    return true;
}

/* Every output is a new name or a regular file, never one of the inputs (compared
 * by device and inode, not by name), and no two outputs are one file, checked before
 * any work. */
static enum cli_status check_outputs(const struct lesson *lesson, const struct options *o)
{
    const struct op *op = lesson->op;
    /* The written files (--output, the op's written data flags), then the CSVs. */
    struct file_arg inputs[OP_MAX_DATA_FLAGS + OP_MAX_TENSORS], outputs[OP_MAX_DATA_FLAGS + 3];
    size_t count = 0, written = 0;
    char flag[OP_MAX_DATA_FLAGS + OP_MAX_TENSORS][64]; /* "--mu" */
    if (o->output_path)
        outputs[written++] = (struct file_arg){"--output", o->output_path};
    for (int i = 0; i < op->data_flag_count; i++) {
        const struct op_data_flag *f = &op->data_flags[i];
        snprintf(flag[i], sizeof flag[i], "--%s", f->flag);
        const char *value = o->data[i];
        if (f->kind == OP_DATA_WRITTEN)
            outputs[written++] = (struct file_arg){flag[i], value};
        else
            inputs[count++] = (struct file_arg){flag[i], value && (!f->is_file || f->is_file(value))
                                                              ? value : NULL};
    }
    for (int i = 0; i < op_file_count(op); i++) {
        char *name = flag[op->data_flag_count + i];
        snprintf(name, sizeof flag[0], "--%s", op_file_flag(op, i));
        inputs[count++] = (struct file_arg){name, o->op_file_path[i]};
    }
    const size_t files = written;
    outputs[written++] = (struct file_arg){"--csv", o->csv_path};
    outputs[written++] = (struct file_arg){"--frames-csv", o->frames_csv_path};
    char err[USAGE_ERROR_SIZE];
    bool ok = true;
    for (size_t i = files; ok && i < written; i++) /* the CSVs, appended in place */
        ok = !outputs[i].path || append_path_check(outputs[i], inputs, count, err, sizeof err);
    for (size_t i = 0; ok && i < files; i++)
        ok = !outputs[i].path || output_path_check(outputs[i], inputs, count, err, sizeof err);
    if (!ok) {
        print_error("%s", err);
        return CLI_EXIT_USAGE;
    }
    return outputs_apart(outputs, written) ? CLI_RUN : CLI_EXIT_USAGE;
}

/* Flags that describe the problem explicitly (and so conflict with --preset and with
 * data that gives the problem: an op's files, the convolution's --input or --image). */
struct given {
    const char *size, *batch, *cin, *cout, *ksize;
    const char *param[OP_MAX_PARAMS]; /* the op's own flags, as given (NULL: not given) */
};

static const char *first_shape_flag(const struct given *g, bool count_ksize)
{
    if (g->size) return "--size";
    if (g->batch) return "--batch";
    if (g->cin) return "--cin";
    if (g->cout) return "--cout";
    if (count_ksize && g->ksize) return "--ksize";
    return NULL;
}

/* An op's files come all together, set the problem, and --output writes what one
 * variant computed from them. */
static enum cli_status check_op_files(const struct lesson *lesson, const struct options *o,
                                      const char *shape_flag)
{
    const struct op *op = lesson->op;
    int given = -1, missing = -1;
    for (int i = 0; i < op_file_count(op); i++) {
        if (o->op_file_path[i] && given < 0)
            given = i;
        if (!o->op_file_path[i] && missing < 0)
            missing = i;
    }
    char all[USAGE_ERROR_SIZE / 2];
    op_files_list(op, all, sizeof all);
    if (given < 0)
        return o->output_path ? usage_error("--output needs the files %s", all) : CLI_RUN;
    if (missing >= 0)
        return usage_error("--%s needs --%s FILE.npy: %s reads %s together",
                           op_file_flag(op, given), op_file_flag(op, missing), lesson->name, all);
    if (o->preset || shape_flag)
        return usage_error("--%s takes the problem from its files: drop %s",
                           op_file_flag(op, given), o->preset ? "--preset" : shape_flag);
    if (o->output_path && !o->variant)
        return usage_error("--output needs --variant NAME: it writes what one variant computed");
    return CLI_RUN;
}

/* The first of the op's data flags given that it reads (the convolution's --input or
 * --image: what gives the problem once check_data said so), as "--input". */
static const char *data_flag_given(const struct op *op, const struct options *o, char *flag,
                                   size_t size)
{
    snprintf(flag, size, "the data flags");
    for (int i = 0; i < op->data_flag_count; i++)
        if (o->data[i] && op->data_flags[i].kind == OP_DATA_READ) {
            snprintf(flag, size, "--%s", op->data_flags[i].flag);
            break;
        }
    return flag;
}

/* The op's files or its own data flags, and what only some runs record. *data_given:
 * the op's data flags give the problem. */
static enum cli_status check_modes(const struct lesson *lesson, const struct options *o,
                                   const struct given *g, bool *data_given)
{
    const struct op *op = lesson->op;
    const char *shape_flag = first_shape_flag(g, true);
    if (o->preset && shape_flag)
        return usage_error("--preset %s fixes the problem: drop %s or drop --preset", o->preset,
                           shape_flag);
    enum cli_status status = op->file_set_count ? check_op_files(lesson, o, shape_flag) : CLI_RUN;
    if (status != CLI_RUN)
        return status;
    *data_given = false;
    char why[USAGE_ERROR_SIZE / 2];
    const char *problem = op->check_data ? op->check_data(o, shape_flag, first_shape_flag(g, false),
                                                          data_given, why, sizeof why)
                                         : NULL;
    if (problem)
        return usage_error("%s", problem);
    /* The op's data gives the problem: one variant is applied once, untimed, and its
     * result written; there is no timed row for a CSV to record. */
    const char *csv = o->csv_path ? "--csv" : o->frames_csv_path ? "--frames-csv" : NULL;
    char data[64];
    if (*data_given && csv)
        return usage_error("%s with %s: %s applies one variant untimed and records no row: "
                           "drop %s",
                           csv, data_flag_given(op, o, data, sizeof data), data, csv);
    if (!o->verify && (o->csv_path || o->frames_csv_path))
        return usage_error("%s records checked results only: drop --no-verify",
                           o->csv_path ? "--csv" : "--frames-csv");
    if (o->frames_csv_path && !op->frames)
        return usage_error("--frames-csv: %s runs no sequence of frames", lesson->name);
    return CLI_RUN;
}

/* The op's flag given on the command line that alone makes the problem one the op
 * refuses (lesson 11's --tile 12 on a preset it runs): its index, or -1 when the
 * problem is at fault whatever the op's flags (the preset, or the shape flags). */
static int param_at_fault(const struct op *op, const struct conv_shape *s, const double *param,
                          const struct given *g)
{
    for (int i = 0; i < op->param_count; i++) {
        if (!g->param[i])
            continue;
        double fallback[OP_MAX_PARAMS];
        memcpy(fallback, param, sizeof fallback);
        fallback[i] = op->params[i].fallback;
        if (!op->shape_problem(s, fallback))
            return i;
    }
    return -1;
}

/* The problem of a bench run: the preset's, or a custom one, the op's custom_base (else
 * the default preset's) with the flags given changed. */
static enum cli_status bench_shape(const struct lesson *lesson, const struct given *g,
                                   struct options *o)
{
    const struct op *op = lesson->op;
    const char *name = o->preset ? o->preset : lesson->default_preset;
    const struct conv_preset *p = find_op_preset(op, name);
    if (!p)
        return usage_error("--preset %s: unknown preset (see --list-presets)", name);
    bool custom = first_shape_flag(g, true) != NULL;
    o->preset = custom ? "custom" : p->name;
    if (!custom) {
        o->shape = p->shape;
        const char *why = op->shape_problem ? op->shape_problem(&o->shape, o->param) : NULL;
        if (!why)
            return CLI_RUN;
        const int culprit = param_at_fault(op, &o->shape, o->param, g);
        return culprit >= 0
                   ? usage_error("--%s %s: %s", op->params[culprit].flag, g->param[culprit], why)
                   : usage_error("--preset %s: %s", p->name, why);
    }
    struct conv_shape s = op->custom_base ? *op->custom_base : p->shape;
    long v;
    if (g->size && !parse_size(g->size, &s.h, &s.w))
        return usage_error("--size %s: expected HxW with whole numbers 1..%d, e.g. 1000x2000",
                           g->size, MAX_SIDE);
    if (!g->size) {
        s.h = p->shape.h;
        s.w = p->shape.w;
    }
    if (g->batch && !read_count("--batch", g->batch, 1, MAX_BATCH, &v)) return CLI_EXIT_USAGE;
    if (g->batch) s.n = (int)v;
    if (g->cin && !read_count("--cin", g->cin, 1, MAX_CHANNELS, &v)) return CLI_EXIT_USAGE;
    if (g->cin) s.cin = (int)v;
    if (g->cout && !read_count("--cout", g->cout, 1, MAX_CHANNELS, &v)) return CLI_EXIT_USAGE;
    if (g->cout) s.cout = (int)v;
    s.ksize = o->shape.ksize;
    if (op->complete_shape)
        op->complete_shape(&s);
    const char *why = op->shape_problem ? op->shape_problem(&s, o->param) : NULL;
    const int culprit = why ? param_at_fault(op, &s, o->param, g) : -1;
    if (culprit >= 0)
        return usage_error("--%s %s: %s", op->params[culprit].flag, g->param[culprit], why);
    if (why)
        return usage_error("--size %dx%d with --batch %d, --cin %d, --cout %d, --ksize %d: %s",
                           s.h, s.w, s.n, s.cin, s.cout, s.ksize, why);
    o->shape = s;
    return CLI_RUN;
}

/* Every lesson's flags, then the op's own numbers, files and data flags, then the end
 * marker. */
static void flag_table(const struct op *op, struct option *flags)
{
    memcpy(flags, run_options, sizeof run_options);
    size_t n = RUN_FLAGS;
    for (int i = 0; i < op->param_count; i++)
        flags[n++] = (struct option){op->params[i].flag, required_argument, NULL,
                                     FLAG_OP_PARAM + i};
    for (int i = 0; i < op_file_count(op); i++)
        flags[n++] =
            (struct option){op_file_flag(op, i), required_argument, NULL, FLAG_OP_FILE + i};
    for (int i = 0; i < op->data_flag_count; i++)
        flags[n++] = (struct option){op->data_flags[i].flag, required_argument, NULL,
                                     FLAG_OP_DATA + i};
    if (op_file_count(op) || op->write)
        flags[n++] = output_option;
    flags[n] = (struct option){NULL, 0, NULL, 0};
}

enum cli_status parse_options(const struct lesson *lesson, int argc, char **argv,
                              struct options *o)
{
    const struct op *op = lesson->op;
    /* What a run does when no flag says otherwise; everything not named is zero (no
     * --ksize yet, no files, all variants). */
    *o = (struct options){
        .mode = MODE_BENCH,
        .reps = GPU_DEFAULT_REPS,
        .warmup = GPU_DEFAULT_WARMUP,
        .cpu_reps = CPU_DEFAULT_REPS,
        .cpu_warmup = CPU_DEFAULT_WARMUP,
        .seed = DEFAULT_SEED,
        .verify = true,
        .cudnn = true,
    };
    struct given g = {0};
    long v;
    struct option flags[MAX_FLAGS];
    flag_table(op, flags);
    for (int i = 0; i < op->param_count; i++)
        o->param[i] = op->params[i].fallback;
    opterr = 0; /* we print our own one-line errors */
    /* optind 0, not 1: getopt_long also forgets where an earlier parse stopped
     * inside an argument such as "-xy". "+": it stops at the first argument that is
     * not a flag, so (there being no short flags) it always reads argv[at] next.
     * ":": a missing value is reported as ':', an unknown flag as '?'. */
    for (optind = 0;;) {
        const int at = optind > 0 ? optind : 1;
        const int c = getopt_long(argc, argv, "+:", flags, NULL);
        if (c == -1)
            break;
        if (c == '?')
            return usage_error("%s: unknown flag", argv[at]);
        if (c == ':')
            return usage_error("%s needs a value", argv[at]);
        /* A separate value that starts with "--" is the next flag, not a value
         * (--size=--x passes one on purpose). "-3" stays a value. */
        if (optind == at + 2 && strncmp(argv[at + 1], "--", 2) == 0)
            return usage_error("%s needs a value; %s is a flag", argv[at], argv[at + 1]);
        switch (c) {
        case FLAG_SIZE: g.size = optarg; break;
        case FLAG_BATCH: g.batch = optarg; break;
        case FLAG_CIN: g.cin = optarg; break;
        case FLAG_COUT: g.cout = optarg; break;
        case FLAG_KSIZE:
            g.ksize = optarg;
            if (!parse_int_in(optarg, 1, MAX_KSIZE, &v) || v % 2 == 0)
                return usage_error("--ksize %s: expected an odd filter size in 1..%d", optarg,
                                   MAX_KSIZE);
            o->shape.ksize = (int)v;
            o->ksize_given = true;
            break;
        case FLAG_PRESET: o->preset = optarg; break;
        case FLAG_LIST_PRESETS: print_presets(op); return CLI_EXIT_OK;
        case FLAG_REPS:
            if (!read_count("--reps", optarg, 1, MAX_REPS, &v)) return CLI_EXIT_USAGE;
            o->reps = o->cpu_reps = (int)v;
            break;
        case FLAG_WARMUP:
            if (!read_count("--warmup", optarg, 0, MAX_REPS, &v)) return CLI_EXIT_USAGE;
            o->warmup = o->cpu_warmup = (int)v;
            break;
        case FLAG_SEED:
            if (!read_count("--seed", optarg, 0, LONG_MAX, &v)) return CLI_EXIT_USAGE;
            o->seed = (uint64_t)v;
            break;
        case FLAG_VARIANT:
            if (!has_variant(op, optarg))
                return usage_error("--variant %s: %s has no such variant", optarg, lesson->name);
            o->variant = optarg;
            break;
        case FLAG_NO_VERIFY: o->verify = false; break;
        case FLAG_NO_CUDNN: o->cudnn = false; break;
        case FLAG_CSV: o->csv_path = optarg; break;
        case FLAG_DEVICE:
            if (!read_count("--device", optarg, 0, MAX_DEVICE_ID, &v)) return CLI_EXIT_USAGE;
            o->device = (int)v;
            break;
        case FLAG_OUTPUT: o->output_path = optarg; break;
        case FLAG_FRAMES_CSV: o->frames_csv_path = optarg; break;
        case FLAG_HELP: print_help(lesson); return CLI_EXIT_OK;
        default:
            if (c >= FLAG_OP_DATA) {
                o->data[c - FLAG_OP_DATA] = optarg;
                break;
            }
            if (c >= FLAG_OP_FILE) {
                o->op_file_path[c - FLAG_OP_FILE] = optarg;
                break;
            }
            if (!read_param(&op->params[c - FLAG_OP_PARAM], optarg,
                            &o->param[c - FLAG_OP_PARAM]))
                return CLI_EXIT_USAGE;
            g.param[c - FLAG_OP_PARAM] = optarg;
        }
    }
    if (optind < argc)
        return usage_error("%s: unexpected argument", argv[optind]);
    bool data_given;
    enum cli_status status = check_modes(lesson, o, &g, &data_given);
    if (status != CLI_RUN)
        return status;
    if ((status = check_outputs(lesson, o)) != CLI_RUN)
        return status;
    if (data_given || (op_file_count(op) && o->op_file_path[0])) {
        /* The problem comes from the data: the op's prepare, or its files (op_files.h). */
        o->mode = data_given ? MODE_DATA : MODE_FILES;
        o->preset = "custom";
        return CLI_RUN;
    }
    if (!o->shape.ksize) {
        const struct conv_preset *p =
            find_op_preset(op, o->preset ? o->preset : lesson->default_preset);
        o->shape.ksize = p ? p->shape.ksize : 3;
    }
    return bench_shape(lesson, &g, o);
}
