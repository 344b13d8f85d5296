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
#include "filters.h"
#include "op_files.h"

enum flag {
    FLAG_SIZE = 256, FLAG_BATCH, FLAG_CIN, FLAG_COUT, FLAG_KSIZE, FLAG_PRESET, FLAG_LIST_PRESETS,
    FLAG_REPS, FLAG_WARMUP, FLAG_SEED, FLAG_VARIANT, FLAG_NO_VERIFY, FLAG_NO_CUDNN, FLAG_CSV,
    FLAG_DEVICE, FLAG_INPUT, FLAG_WEIGHTS, FLAG_BIAS, FLAG_OUTPUT, FLAG_IMAGE, FLAG_FILTER,
    FLAG_OUT, FLAG_FRAMES_CSV, FLAG_HELP,
    FLAG_OP_PARAM, /* FLAG_OP_PARAM + i: the op's i-th flag */
    FLAG_OP_FILE = FLAG_OP_PARAM + OP_MAX_PARAMS /* FLAG_OP_FILE + i: the op's i-th file */
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

/* The convolution's data flags; an op reads its own files (op.file_sets), written with
 * --output. */
static const struct option conv_data_options[] = {
    {"input", required_argument, NULL, FLAG_INPUT},
    {"weights", required_argument, NULL, FLAG_WEIGHTS},
    {"bias", required_argument, NULL, FLAG_BIAS},
    {"output", required_argument, NULL, FLAG_OUTPUT},
    {"image", required_argument, NULL, FLAG_IMAGE},
    {"filter", required_argument, NULL, FLAG_FILTER},
    {"out", required_argument, NULL, FLAG_OUT},
};
#define CONV_DATA_FLAGS (sizeof conv_data_options / sizeof conv_data_options[0])
static const struct option op_output_option = {"output", required_argument, NULL, FLAG_OUTPUT};
/* Room for either lesson's table and its end marker. */
#define MAX_FLAGS (RUN_FLAGS + CONV_DATA_FLAGS + OP_MAX_PARAMS + OP_MAX_TENSORS + 2)

#define USAGE_ERROR_SIZE 1024

/* Largest image side and channel count the flags accept; the 32-bit element
 * check catches combinations that are too large together. */
#define MAX_SIDE 1000000
#define MAX_CHANNELS 65536
#define MAX_BATCH 65535
#define MAX_DEVICE_ID 1023

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

/* What a lesson offers: the convolution's presets and variants, or its op's. */
static int variant_count(const struct lesson *l)
{
    return l->op ? l->op->variant_count : l->variant_count;
}

static const char *variant_name(const struct lesson *l, int i)
{
    return l->op ? l->op->variants[i].name : l->variants[i].name;
}

static const char *variant_what(const struct lesson *l, int i)
{
    return l->op ? l->op->variants[i].what : l->variants[i].what;
}

static const struct conv_preset *lesson_preset_at(const struct lesson *l, int i)
{
    if (!l->op)
        return preset_at(i);
    return i < l->op->preset_count ? &l->op->presets[i] : NULL;
}

static const struct conv_preset *lesson_find_preset(const struct lesson *l, const char *name)
{
    const struct conv_preset *p;
    for (int i = 0; (p = lesson_preset_at(l, i)) != NULL; i++)
        if (strcmp(p->name, name) == 0)
            return p;
    return NULL;
}

static void print_run_help(const struct lesson *lesson, bool cudnn)
{
    printf("run:\n");
    printf("  --reps N           timed repetitions, 1..%d (default %d on GPU, %d on CPU)\n", MAX_REPS,
           GPU_DEFAULT_REPS, CPU_DEFAULT_REPS);
    printf("  --warmup N         untimed runs first, 0..%d (default %d on GPU, %d on CPU)\n",
           MAX_REPS, GPU_DEFAULT_WARMUP, CPU_DEFAULT_WARMUP);
    printf("  --seed S           seed of the random inputs, 0..%ld (default %d)\n", LONG_MAX,
           DEFAULT_SEED);
    printf("  --variant NAME     run one variant (default: all):");
    for (int i = 0; i < variant_count(lesson); i++)
        printf(" %s", variant_name(lesson, i));
    printf("\n  --no-verify        skip the check against the float64 reference\n");
    if (cudnn)
        printf("  --no-cudnn         skip the cuDNN baseline row\n");
    printf("  --csv FILE         append one row per variant (header written once)\n");
    if (lesson->op && lesson->op->frames)
        printf("  --frames-csv FILE  append one row per variant and frame: its time and error\n");
    printf("  --device ID        CUDA device, 0..%d (default 0)\n\n", MAX_DEVICE_ID);
}

static void print_variants(const struct lesson *lesson)
{
    printf("variants:\n");
    for (int i = 0; i < variant_count(lesson); i++)
        printf("  %-18s %s\n", variant_name(lesson, i), variant_what(lesson, i));
    printf("\nexit codes: 0 all passed, 1 a check failed or runtime error, 2 usage or input\n");
    printf("error, a problem too large for host or GPU memory included (one line names the\n");
    printf("memory and the size), 77 no usable GPU.\n");
}

/* The variants that can write a set's files after their run, after `indent` spaces,
 * wrapped before column HELP_COLUMNS. */
#define HELP_COLUMNS 100
static void print_writers(const struct lesson *lesson, const struct op_file_set *set, int indent)
{
    char writers[1024];
    op_files_writers(lesson->op, set, writers, sizeof writers);
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
    const struct conv_shape *shape = &lesson_find_preset(lesson, lesson->default_preset)->shape;
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
            print_writers(lesson, set, indent + width + 1);
    }
    printf("\n");
}

/* An op's problem flags: the same names, read as its page says (op.shape_help). */
static void print_op_help(const struct lesson *lesson)
{
    const struct op *op = lesson->op;
    if (op_file_count(op)) {
        printf("       %s", lesson->name);
        for (int i = 0; i < op_file_count(op); i++)
            printf(" --%s FILE.npy", op_file_flag(op, i));
        printf("\n%*s[--variant NAME --output FILE.npy]\n", (int)strlen(lesson->name) + 8, "");
    }
    printf("\nproblem (default: --preset %s; %s):\n", lesson->default_preset,
           lesson->op->shape_help);
    printf("  --preset NAME      a named problem (--list-presets); excludes the flags below\n");
    printf("  --size HxW, --batch N, --cin C, --cout K, --ksize R (odd, 1..%d): each from\n",
           MAX_KSIZE);
    printf("                     the default preset unless given\n");
    printf("  --list-presets     print the presets and exit\n");
    for (int i = 0; i < lesson->op->param_count; i++) {
        const struct op_param *p = &lesson->op->params[i];
        char flag[64];
        snprintf(flag, sizeof flag, "--%s X", p->flag);
        printf("  %-18s %s, %g..%g (default %g)\n", flag, p->help, p->lo, p->hi, p->fallback);
    }
    printf("\n");
    print_run_help(lesson, false);
    print_op_files_help(lesson);
    print_variants(lesson);
}

static void print_help(const struct lesson *lesson)
{
    printf("%s: %s\n\n", lesson->name, lesson->title);
    printf("usage: %s [problem] [run options]\n", lesson->name);
    if (lesson->op) {
        print_op_help(lesson);
        return;
    }
    printf("       %s --image FILE.pgm|ppm [--filter NAME|FILE] [--ksize R] --out FILE\n",
           lesson->name);
    printf("       %s --input IN.npy --weights W.npy [--bias B.npy] [--output OUT.npy]\n\n",
           lesson->name);
    printf("problem (default: --preset %s):\n", lesson->default_preset);
    printf("  --preset NAME      a named problem (--list-presets); excludes the flags below\n");
    printf("  --size HxW         image height x width, 1..%d each (default from the preset)\n",
           MAX_SIDE);
    printf("  --batch N          images per batch, 1..%d (default 1)\n", MAX_BATCH);
    printf("  --cin C            input channels, 1..%d (default 1)\n", MAX_CHANNELS);
    printf("  --cout K           output channels, 1..%d (default 1)\n", MAX_CHANNELS);
    printf("  --ksize R          odd filter size, 1..%d (default 3; image mode %d)\n", MAX_KSIZE,
           IMAGE_DEFAULT_KSIZE);
    printf("  --filter NAME|FILE weights from a named filter or a text file instead of random\n");
    printf("                     values (%s)\n", filter_names());
    printf("  --list-presets     print the presets and exit\n");
    printf("  A custom problem with cin or cout > 1 is a network layer with a bias per output\n");
    printf("  channel; a single-channel problem is an image filter without bias.\n\n");
    print_run_help(lesson, true);
    printf("data (NumPy .npy, little-endian float32, C order):\n");
    printf("  --input FILE       NCHW, CHW or HW input; the problem follows its shape\n");
    printf("  --weights FILE     KCRS or RS weights (required with --input)\n");
    printf("  --bias FILE        K biases (optional)\n");
    printf("  --output FILE      where the result goes (optional)\n\n");
    if (lesson->image_variant) {
        printf("image mode (runs variant '%s' on each plane of a PGM/PPM):\n",
               lesson->image_variant);
        printf("  --image FILE       binary PGM (P5) or PPM (P6), maxval 255\n");
        printf("  --out FILE         the filtered image (absolute values, clamped to 0..255)\n\n");
    }
    print_variants(lesson);
}

static void print_presets(const struct lesson *lesson)
{
    const struct conv_preset *p;
    for (int i = 0; (p = lesson_preset_at(lesson, i)) != NULL; i++)
        printf("%-15s n=%d cin=%d cout=%d %dx%d ksize=%d%s  %s\n", p->name, p->shape.n,
               p->shape.cin, p->shape.cout, p->shape.h, p->shape.w, p->shape.ksize,
               p->shape.bias ? " bias" : "", p->what);
}

static bool has_variant(const struct lesson *lesson, const char *name)
{
    for (int i = 0; i < variant_count(lesson); i++)
        if (strcmp(variant_name(lesson, i), name) == 0)
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

/* Every output is a new name or a regular file, never one of the inputs (compared
 * by device and inode, not by name), checked before any work. */
static enum cli_status check_outputs(const struct lesson *lesson, const struct options *o)
{
    const char *filter_file =
        o->filter_spec && filter_spec_is_file(o->filter_spec) ? o->filter_spec : NULL;
    const struct file_arg conv_inputs[] = {
        {"--input", o->input_path}, {"--weights", o->weights_path}, {"--bias", o->bias_path},
        {"--image", o->image_path}, {"--filter", filter_file},
    };
    struct file_arg inputs[sizeof conv_inputs / sizeof conv_inputs[0] + OP_MAX_TENSORS];
    memcpy(inputs, conv_inputs, sizeof conv_inputs);
    size_t count = sizeof conv_inputs / sizeof conv_inputs[0];
    char op_flag[OP_MAX_TENSORS][64]; /* "--mu" */
    for (int i = 0; lesson->op && i < op_file_count(lesson->op); i++) {
        snprintf(op_flag[i], sizeof op_flag[i], "--%s", op_file_flag(lesson->op, i));
        inputs[count++] = (struct file_arg){op_flag[i], o->op_file_path[i]};
    }
    char err[USAGE_ERROR_SIZE];
    bool ok = (!o->csv_path || append_path_check((struct file_arg){"--csv", o->csv_path},
                                                 inputs, count, err, sizeof err)) &&
              (!o->frames_csv_path ||
               append_path_check((struct file_arg){"--frames-csv", o->frames_csv_path}, inputs,
                                 count, err, sizeof err)) &&
              (!o->output_path || output_path_check((struct file_arg){"--output", o->output_path},
                                                    inputs, count, err, sizeof err)) &&
              (!o->image_out_path ||
               output_path_check((struct file_arg){"--out", o->image_out_path}, inputs, count,
                                 err, sizeof err));
    if (ok)
        return CLI_RUN;
    print_error("%s", err);
    return CLI_EXIT_USAGE;
}

/* Flags that describe the problem explicitly (and so conflict with --preset,
 * --input and --image). */
struct given {
    const char *size, *batch, *cin, *cout, *ksize;
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

/* The convolution's data: .npy files or an image. */
static enum cli_status check_conv_files(const struct options *o, const struct given *g,
                                        const char *shape_flag)
{
    if (o->input_path) {
        if (o->preset || shape_flag || o->image_path || o->filter_spec)
            return usage_error("--input takes the problem from its files: drop %s",
                               o->preset ? "--preset" : shape_flag ? shape_flag
                                                      : o->image_path ? "--image" : "--filter");
        if (!o->weights_path)
            return usage_error("--input needs --weights FILE.npy");
    } else if (o->weights_path || o->bias_path || o->output_path) {
        return usage_error("%s needs --input FILE.npy",
                           o->weights_path ? "--weights" : o->bias_path ? "--bias" : "--output");
    }
    if (o->image_path) {
        shape_flag = first_shape_flag(g, false);
        if (o->preset || shape_flag)
            return usage_error("--image takes the problem from the image: drop %s",
                               o->preset ? "--preset" : shape_flag);
        if (!o->image_out_path)
            return usage_error("--image needs --out FILE.pgm|ppm");
    } else if (o->image_out_path) {
        return usage_error("--out needs --image FILE");
    }
    return CLI_RUN;
}

static enum cli_status check_modes(const struct lesson *lesson, const struct options *o,
                                   const struct given *g)
{
    const char *shape_flag = first_shape_flag(g, true);
    if (o->preset && shape_flag)
        return usage_error("--preset %s fixes the problem: drop %s or drop --preset", o->preset,
                           shape_flag);
    const enum cli_status status = lesson->op ? check_op_files(lesson, o, shape_flag)
                                              : check_conv_files(o, g, shape_flag);
    if (status != CLI_RUN)
        return status;
    if (!o->verify && (o->csv_path || o->frames_csv_path))
        return usage_error("%s records checked results only: drop --no-verify",
                           o->csv_path ? "--csv" : "--frames-csv");
    if (o->frames_csv_path && !(lesson->op && lesson->op->frames))
        return usage_error("--frames-csv: %s runs no sequence of frames", lesson->name);
    return CLI_RUN;
}

/* The problem of a bench run: the preset's, or the defaults overridden by flags. */
static enum cli_status bench_shape(const struct lesson *lesson, const struct given *g,
                                   struct options *o)
{
    const char *name = o->preset ? o->preset : lesson->default_preset;
    const struct conv_preset *p = lesson_find_preset(lesson, name);
    if (!p)
        return usage_error("--preset %s: unknown preset (see --list-presets)", name);
    bool custom = first_shape_flag(g, true) != NULL;
    o->preset = custom ? "custom" : p->name;
    if (!custom) {
        o->shape = p->shape;
        const char *why = lesson->op ? lesson->op->shape_problem(&o->shape, o->param) : NULL;
        return why ? usage_error("--preset %s: %s", p->name, why) : CLI_RUN;
    }
    /* A custom convolution is one image and channel unless told; an op's problem is its
     * default preset's with the flags given changed. */
    struct conv_shape s = lesson->op ? p->shape : (struct conv_shape){1, 1, 1, 0, 0, 3, false};
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
    if (lesson->op) {
        const char *why = lesson->op->shape_problem(&s, o->param);
        if (why)
            return usage_error("--size %dx%d with --batch %d, --cin %d, --cout %d, --ksize %d: %s",
                               s.h, s.w, s.n, s.cin, s.cout, s.ksize, why);
        o->shape = s;
        return CLI_RUN;
    }
    s.bias = s.cin > 1 || s.cout > 1;
    if (shape_overflows_int32(&s))
        return usage_error("--size %dx%d with --batch %d, --cin %d, --cout %d: a tensor would "
                           "have more than 2^31-1 elements (32-bit indexing)",
                           s.h, s.w, s.n, s.cin, s.cout);
    o->shape = s;
    return CLI_RUN;
}

/* Every lesson's flags, then the convolution's data flags or the op's own flags and
 * files, then the end marker. */
static void flag_table(const struct lesson *lesson, struct option *flags)
{
    const struct op *op = lesson->op;
    memcpy(flags, run_options, sizeof run_options);
    size_t n = RUN_FLAGS;
    if (!op) {
        memcpy(flags + n, conv_data_options, sizeof conv_data_options);
        n += CONV_DATA_FLAGS;
    }
    for (int i = 0; op && i < op->param_count; i++)
        flags[n++] = (struct option){op->params[i].flag, required_argument, NULL,
                                     FLAG_OP_PARAM + i};
    for (int i = 0; op && i < op_file_count(op); i++)
        flags[n++] =
            (struct option){op_file_flag(op, i), required_argument, NULL, FLAG_OP_FILE + i};
    if (op && op_file_count(op))
        flags[n++] = op_output_option;
    flags[n] = (struct option){NULL, 0, NULL, 0};
}

enum cli_status parse_options(const struct lesson *lesson, int argc, char **argv,
                              struct options *o)
{
    memset(o, 0, sizeof *o);
    o->mode = MODE_BENCH;
    bool gpu = lesson->target == TARGET_GPU;
    o->reps = gpu ? GPU_DEFAULT_REPS : CPU_DEFAULT_REPS;
    o->warmup = gpu ? GPU_DEFAULT_WARMUP : CPU_DEFAULT_WARMUP;
    o->gpu_reps = GPU_DEFAULT_REPS;
    o->gpu_warmup = GPU_DEFAULT_WARMUP;
    o->cpu_reps = CPU_DEFAULT_REPS;
    o->cpu_warmup = CPU_DEFAULT_WARMUP;
    o->seed = DEFAULT_SEED;
    o->verify = true;
    o->cudnn = true;
    o->shape.ksize = 0;
    struct given g = {0};
    long v;
    struct option flags[MAX_FLAGS];
    flag_table(lesson, flags);
    for (int i = 0; lesson->op && i < lesson->op->param_count; i++)
        o->param[i] = lesson->op->params[i].fallback;
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
        case FLAG_LIST_PRESETS: print_presets(lesson); return CLI_EXIT_OK;
        case FLAG_REPS:
            if (!read_count("--reps", optarg, 1, MAX_REPS, &v)) return CLI_EXIT_USAGE;
            o->reps = o->gpu_reps = o->cpu_reps = (int)v;
            break;
        case FLAG_WARMUP:
            if (!read_count("--warmup", optarg, 0, MAX_REPS, &v)) return CLI_EXIT_USAGE;
            o->warmup = o->gpu_warmup = o->cpu_warmup = (int)v;
            break;
        case FLAG_SEED:
            if (!read_count("--seed", optarg, 0, LONG_MAX, &v)) return CLI_EXIT_USAGE;
            o->seed = (uint64_t)v;
            break;
        case FLAG_VARIANT:
            if (!has_variant(lesson, optarg))
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
        case FLAG_INPUT: o->input_path = optarg; break;
        case FLAG_WEIGHTS: o->weights_path = optarg; break;
        case FLAG_BIAS: o->bias_path = optarg; break;
        case FLAG_OUTPUT: o->output_path = optarg; break;
        case FLAG_IMAGE: o->image_path = optarg; break;
        case FLAG_FILTER: o->filter_spec = optarg; break;
        case FLAG_OUT: o->image_out_path = optarg; break;
        case FLAG_FRAMES_CSV: o->frames_csv_path = optarg; break;
        case FLAG_HELP: print_help(lesson); return CLI_EXIT_OK;
        default:
            if (c >= FLAG_OP_FILE) {
                o->op_file_path[c - FLAG_OP_FILE] = optarg;
                break;
            }
            if (!read_param(&lesson->op->params[c - FLAG_OP_PARAM], optarg,
                            &o->param[c - FLAG_OP_PARAM]))
                return CLI_EXIT_USAGE;
        }
    }
    if (optind < argc)
        return usage_error("%s: unexpected argument", argv[optind]);
    enum cli_status status = check_modes(lesson, o, &g);
    if (status != CLI_RUN)
        return status;
    if ((status = check_outputs(lesson, o)) != CLI_RUN)
        return status;
    if (o->input_path) {
        o->mode = MODE_NPY;
        o->preset = "custom";
        return CLI_RUN;
    }
    if (lesson->op && op_file_count(lesson->op) && o->op_file_path[0]) {
        o->mode = MODE_NPY; /* the shape comes from the files (op_files.h) */
        o->preset = "custom";
        return CLI_RUN;
    }
    if (o->image_path) {
        o->mode = MODE_IMAGE;
        o->preset = "custom";
        if (!o->filter_spec)
            o->filter_spec = IMAGE_DEFAULT_FILTER;
        if (!o->shape.ksize)
            o->shape.ksize = IMAGE_DEFAULT_KSIZE;
        return CLI_RUN;
    }
    if (!o->shape.ksize) {
        const struct conv_preset *p =
            lesson_find_preset(lesson, o->preset ? o->preset : lesson->default_preset);
        o->shape.ksize = p ? p->shape.ksize : 3;
    }
    return bench_shape(lesson, &g, o);
}
