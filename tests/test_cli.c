/* Flag parsing: what is accepted, what it sets, and what is rejected (exit 2). */
#define _POSIX_C_SOURCE 200809L /* fork, dup2 */

#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cli.h"
#include "conv_flags.h"
#include "conv_op.h"
#include "flag_lesson.h"
#include "npy.h"
#include "session.h"
#include "output_capture.h"
#include "unit.h"

#define MAX_ARGS 32
#define NAME_SIZE 256

/* parse_in(lesson, &o, "--flag", "value", ..., NULL) */
static enum cli_status parse_in(const struct lesson *lesson, struct options *o, ...)
{
    char *argv[MAX_ARGS] = {"test"};
    int argc = 1;
    va_list args;
    va_start(args, o);
    for (char *arg; argc < MAX_ARGS && (arg = va_arg(args, char *)) != NULL;)
        argv[argc++] = arg;
    va_end(args);
    return parse_options(lesson, argc, argv, o);
}

#define PARSE_IN(lesson, o, ...) parse_in((lesson), (o), __VA_ARGS__, (char *)NULL)
#define PARSE(o, ...) PARSE_IN(flag_lesson(), (o), __VA_ARGS__)

/* The flags are rejected by lesson's parser with one error line that holds `want`. */
#define CHECK_ERROR_IN(lesson, want, ...)                                \
    do {                                                                 \
        struct options o_;                                               \
        struct output_capture c_;                                        \
        output_capture_begin(&c_, stderr);                               \
        enum cli_status status_ = PARSE_IN((lesson), &o_, __VA_ARGS__);  \
        check_error_line(status_, output_capture_end(&c_), want);        \
    } while (0)
#define CHECK_ERROR(want, ...) CHECK_ERROR_IN(flag_lesson(), want, __VA_ARGS__)

static void check_error_line(enum cli_status status, const char *line, const char *want)
{
    const char *newline = strchr(line, '\n');
    bool ok = status == CLI_EXIT_USAGE && strncmp(line, "error: ", 7) == 0 && newline &&
              newline[1] == '\0' && strstr(line, want) != NULL;
    if (!ok)
        fprintf(stderr, "expected one error line with '%s', got: %s\n", want, line);
    CHECK(ok);
}

static void defaults_come_from_the_preset(void)
{
    struct options o;
    char *argv[] = {"test"};
    CHECK(parse_options(flag_lesson(), 1, argv, &o) == CLI_RUN);
    CHECK(strcmp(o.preset, "big3") == 0);
    CHECK(o.shape.h == 8192 && o.shape.w == 8192 && o.shape.ksize == 3);
    CHECK(o.shape.n == 1 && o.shape.cin == 1 && o.shape.cout == 1 && !o.shape.bias);
    CHECK(o.reps == GPU_DEFAULT_REPS && o.warmup == GPU_DEFAULT_WARMUP);
    CHECK(o.verify && o.cudnn && o.variant == NULL && o.mode == MODE_BENCH);
}

static void unet_preset(void)
{
    struct options o;
    CHECK(PARSE(&o, "--preset", "unet-1024x1024") == CLI_RUN);
    CHECK(o.shape.n == 4 && o.shape.cin == 1024 && o.shape.cout == 1024);
    CHECK(o.shape.h == 32 && o.shape.w == 32 && o.shape.ksize == 3 && o.shape.bias);
}

static void custom_problem(void)
{
    struct options o;
    CHECK(PARSE(&o, "--size", "37x41", "--batch", "3", "--cin", "5", "--cout", "7", "--ksize",
                "9", "--reps", "4", "--warmup", "0", "--seed", "42", "--variant", "second") ==
          CLI_RUN);
    CHECK(strcmp(o.preset, "custom") == 0);
    CHECK(o.shape.h == 37 && o.shape.w == 41 && o.shape.n == 3);
    CHECK(o.shape.cin == 5 && o.shape.cout == 7 && o.shape.ksize == 9 && o.shape.bias);
    CHECK(o.reps == 4 && o.warmup == 0 && o.seed == 42 && strcmp(o.variant, "second") == 0);
}

static void single_channel_has_no_bias(void)
{
    struct options o;
    CHECK(PARSE(&o, "--size", "5x7", "--ksize", "3") == CLI_RUN);
    CHECK(!o.shape.bias && o.shape.h == 5 && o.shape.w == 7);
}

static void size_parsing(void)
{
    int h, w;
    CHECK(parse_size("1000x2000", &h, &w) && h == 1000 && w == 2000);
    CHECK(parse_size("1x1", &h, &w) && h == 1 && w == 1);
    CHECK(!parse_size("5x", &h, &w));
    CHECK(!parse_size("x5", &h, &w));
    CHECK(!parse_size("0x5", &h, &w));
    CHECK(!parse_size("-5x5", &h, &w));
    CHECK(!parse_size("5x5x5", &h, &w));
    CHECK(!parse_size("5*5", &h, &w));
    CHECK(!parse_size("99999999999x1", &h, &w));
}

static void int_parsing(void)
{
    long v;
    CHECK(parse_int_in("17", 1, 31, &v) && v == 17);
    CHECK(!parse_int_in("", 1, 31, &v));
    CHECK(!parse_int_in("3.5", 1, 31, &v));
    CHECK(!parse_int_in("32", 1, 31, &v));
    CHECK(!parse_int_in("0", 1, 31, &v));
    CHECK(!parse_int_in("12abc", 0, 100, &v));
}

static void rejects_bad_ksize(void)
{
    struct options o;
    CHECK(PARSE(&o, "--ksize", "4") == CLI_EXIT_USAGE);
    CHECK(PARSE(&o, "--ksize", "0") == CLI_EXIT_USAGE);
    CHECK(PARSE(&o, "--ksize", "-3") == CLI_EXIT_USAGE);
    CHECK(PARSE(&o, "--ksize", "33") == CLI_EXIT_USAGE);
    CHECK(PARSE(&o, "--ksize", "31") == CLI_RUN && o.shape.ksize == 31);
}

static void rejects_overflow(void)
{
    struct options o;
    CHECK(PARSE(&o, "--size", "65536x65536") == CLI_EXIT_USAGE);
    CHECK(PARSE(&o, "--size", "4096x4096", "--cout", "200") == CLI_EXIT_USAGE);
    CHECK(PARSE(&o, "--size", "46340x46340") == CLI_RUN); /* 2147395600 < 2^31 */
}

static void rejects_conflicts(void)
{
    struct options o;
    CHECK(PARSE(&o, "--preset", "big3", "--size", "5x5") == CLI_EXIT_USAGE);
    CHECK(PARSE(&o, "--preset", "big3", "--ksize", "5") == CLI_EXIT_USAGE);
    CHECK(PARSE(&o, "--input", "a.npy") == CLI_EXIT_USAGE);          /* needs --weights */
    CHECK(PARSE(&o, "--weights", "w.npy") == CLI_EXIT_USAGE);        /* needs --input */
    CHECK(PARSE(&o, "--input", "a.npy", "--weights", "w.npy", "--size", "5x5") ==
          CLI_EXIT_USAGE);
    CHECK(PARSE(&o, "--image", "x.pgm") == CLI_EXIT_USAGE);          /* needs --out */
    CHECK(PARSE(&o, "--out", "x.pgm") == CLI_EXIT_USAGE);            /* needs --image */
    CHECK(PARSE(&o, "--image", "x.pgm", "--out", "y.pgm", "--batch", "2") == CLI_EXIT_USAGE);
    CHECK(PARSE(&o, "--no-verify", "--csv", "x.csv") == CLI_EXIT_USAGE);
}

static void rejects_unknowns(void)
{
    struct options o;
    CHECK(PARSE(&o, "--preset", "nope") == CLI_EXIT_USAGE);
    CHECK(PARSE(&o, "--variant", "nope") == CLI_EXIT_USAGE);
    CHECK(PARSE(&o, "--frobnicate") == CLI_EXIT_USAGE);
    CHECK(PARSE(&o, "stray") == CLI_EXIT_USAGE);
    CHECK(PARSE(&o, "--reps") == CLI_EXIT_USAGE); /* missing value */
    CHECK(PARSE(&o, "--reps", "0") == CLI_EXIT_USAGE);
    CHECK(PARSE(&o, "--seed", "x12") == CLI_EXIT_USAGE);
    CHECK(PARSE(&o, "--device", "-1") == CLI_EXIT_USAGE);
}

/* The error names the argument at fault, not a neighbour or the program. */
static void names_the_wrong_flag(void)
{
    CHECK_ERROR("error: -xy: unknown flag", "-xy");
    CHECK_ERROR("error: -qz: unknown flag", "--reps", "2", "-qz");
    CHECK_ERROR("error: --frobnicate: unknown flag", "--size", "5x5", "--frobnicate", "1");
    CHECK_ERROR("error: stray: unexpected argument", "stray", "--reps", "2");
    CHECK_ERROR("error: --reps needs a value", "--size", "5x5", "--reps");
    CHECK_ERROR("error: --size needs a value; --ksize is a flag", "--size", "--ksize", "3");
    CHECK_ERROR("error: --input needs a value; -- is a flag", "--input", "--");
    CHECK_ERROR("error: --ksize -3: expected an odd filter size", "--ksize", "-3");
    struct options o;
    CHECK(PARSE(&o, "--image", "x.pgm", "--out=--y.pgm") == CLI_RUN); /* on purpose */
    CHECK(strcmp(o.data[DATA_OUT], "--y.pgm") == 0);
}

static void rejects_unwritable_outputs(void)
{
    struct options o;
    CHECK(PARSE(&o, "--csv", "/nonexistent-dir/x.csv") == CLI_EXIT_USAGE);
    CHECK(PARSE(&o, "--image", "x.pgm", "--out", "/nonexistent-dir/y.pgm") == CLI_EXIT_USAGE);
}

/* The image gives the problem; its filter and size stay for the op to default. */
static void image_mode_defaults(void)
{
    struct options o;
    CHECK(PARSE(&o, "--image", "x.pgm", "--out", "y.pgm") == CLI_RUN);
    CHECK(o.mode == MODE_DATA && o.shape.ksize == 0 && !o.ksize_given);
    CHECK(strcmp(o.data[DATA_IMAGE], "x.pgm") == 0 && strcmp(o.data[DATA_OUT], "y.pgm") == 0);
    CHECK(o.data[DATA_FILTER] == NULL && strcmp(o.preset, "custom") == 0);
    CHECK(PARSE(&o, "--image", "x.pgm", "--out", "y.pgm", "--filter", "sobel-x", "--ksize",
                "3") == CLI_RUN);
    CHECK(o.shape.ksize == 3 && strcmp(o.data[DATA_FILTER], "sobel-x") == 0);
}

static void help_and_presets_exit_cleanly(void)
{
    struct options o;
    CHECK(PARSE(&o, "--help") == CLI_EXIT_OK);
    CHECK(PARSE(&o, "--list-presets") == CLI_EXIT_OK);
}

/* flag_lesson with a copy of its op, changed by `change`. */
struct changed_lesson {
    struct lesson lesson;
    struct op op;
};

static const struct lesson *lesson_with(struct changed_lesson *c, void (*change)(struct op *))
{
    c->lesson = *flag_lesson();
    c->op = *c->lesson.op;
    change(&c->op);
    c->lesson.op = &c->op;
    return &c->lesson;
}

static int two_frames(const struct conv_shape *s)
{
    (void)s;
    return 2;
}

/* A sequence op: it takes --frames-csv. */
static void make_sequence(struct op *op)
{
    op->frames = two_frames;
}

/* An op of .npy files (lesson 10's kind): --x FILE.npy, and --output with --variant. */
static const char *const x_dims[] = {"N"};
static const struct op_file x_file = {.flag = "x", .help = "a tensor", .rank = 1, .dim = {0}};
static const struct op_file_set x_set = {.name = "the test's layout", .files = &x_file,
                                         .file_count = 1};

static void make_files_op(struct op *op)
{
    op->data_flags = NULL;
    op->data_flag_count = 0;
    op->check_data = NULL;
    op->file_sets = &x_set;
    op->file_set_count = 1;
    op->dim_names = x_dims;
}

/* An op flag that the problem depends on (lesson 11's --tile), and a size it refuses
 * whatever the flag. */
static const struct op_param tile_param = {.flag = "tile",
                                           .help = "a tile side, a multiple of 8",
                                           .fallback = 16,
                                           .lo = 1,
                                           .hi = 4096,
                                           .integer = true};

static const char *tile_problem(const struct conv_shape *s, const double *param)
{
    if (s->h == 7)
        return "no problem is 7 high";
    return (int)param[0] % 8 ? "the tile must be a multiple of 8" : NULL;
}

static void make_tiled(struct op *op)
{
    op->params = &tile_param;
    op->param_count = 1;
    op->shape_problem = tile_problem;
}

/* Two outputs of one run never share a file: the same name, another spelling of it,
 * or a hard link to it; refused before any work, naming both flags. */
static void outputs_share_no_file(void)
{
    struct changed_lesson sequence, files_op;
    const struct lesson *seq = lesson_with(&sequence, make_sequence);
    const struct lesson *files = lesson_with(&files_op, make_files_op);
    struct options o;
    CHECK(PARSE_IN(seq, &o, "--csv", "rows.csv", "--frames-csv", "frames.csv") == CLI_RUN);
    CHECK_ERROR_IN(seq, "error: --csv rows.csv: is also the --frames-csv file", "--csv",
                   "rows.csv", "--frames-csv", "rows.csv");
    CHECK_ERROR_IN(seq, "error: --csv rows.csv: is also the --frames-csv file ./rows.csv",
                   "--csv", "rows.csv", "--frames-csv", "./rows.csv");
    char name[NAME_SIZE], link_name[NAME_SIZE];
    snprintf(name, sizeof name, "test_cli_rows.%ld.csv", (long)getpid());
    snprintf(link_name, sizeof link_name, "test_cli_link.%ld.csv", (long)getpid());
    FILE *f = fopen(name, "w");
    CHECK(f != NULL && fclose(f) == 0);
    CHECK(link(name, link_name) == 0);
    CHECK_ERROR_IN(seq, "is also the --frames-csv file", "--csv", name, "--frames-csv",
                   link_name);
    remove(link_name);
    remove(name);
    /* An op's --output and the CSV (lesson 10's --output X --csv X). */
    CHECK(PARSE_IN(files, &o, "--x", "x.npy", "--variant", "first", "--output", "out.npy",
                   "--csv", "rows.csv") == CLI_RUN);
    CHECK_ERROR_IN(files, "error: --output rows.csv: is also the --csv file", "--x", "x.npy",
                   "--variant", "first", "--output", "rows.csv", "--csv", "rows.csv");
}

/* --input and --image apply one variant, untimed: no row for --csv, which is refused
 * rather than silently ignored (and so never shares a file with --out or --output). */
static void csv_refused_in_data_modes(void)
{
    CHECK_ERROR("error: --csv with --image: ", "--image", "x.pgm", "--out", "y.pgm", "--csv",
                "rows.csv");
    CHECK_ERROR("error: --csv with --image: ", "--image", "x.pgm", "--out", "rows.csv",
                "--csv", "rows.csv");
    CHECK_ERROR("error: --csv with --input: ", "--input", "x.npy", "--weights", "w.npy",
                "--csv", "rows.csv");
    CHECK_ERROR("error: --csv with --input: ", "--input", "x.npy", "--weights", "w.npy",
                "--output", "rows.csv", "--csv", "rows.csv");
    struct options o;
    CHECK(PARSE(&o, "--size", "9x9", "--filter", "box", "--csv", "rows.csv") == CLI_RUN);
}

/* A problem the op refuses because of one of its own flags names that flag, not the
 * preset or the size (lesson 11's --tile 12). */
static void op_flag_at_fault_is_named(void)
{
    struct changed_lesson tiled_op;
    const struct lesson *tiled = lesson_with(&tiled_op, make_tiled);
    struct options o;
    CHECK(PARSE_IN(tiled, &o, "--tile", "24") == CLI_RUN);
    CHECK_ERROR_IN(tiled, "error: --tile 12: the tile must be a multiple of 8", "--tile", "12");
    CHECK_ERROR_IN(tiled, "error: --tile 12: the tile must be a multiple of 8", "--preset",
                   "big3", "--tile", "12");
    CHECK_ERROR_IN(tiled, "error: --tile 12: the tile must be a multiple of 8", "--size", "9x9",
                   "--tile", "12");
    /* The size is at fault whatever the tile. */
    CHECK_ERROR_IN(tiled, "error: --size 7x9 with", "--size", "7x9", "--tile", "12");
}

static void no_run(const struct conv_args *a)
{
    (void)a;
}

/* A variant that writes packed sign bits (lesson 09's bmma_fused) cannot be applied to
 * --input or --image: refused naming --variant and why, before any GPU work and with
 * nothing written (here without a GPU: 77 would mean the check came too late). */
static void sign_bits_variant_refused_with_data(void)
{
    static const struct conv_variant variants[] = {
        {.name = "values", .what = "writes values", .run = no_run},
        {.name = "signs", .what = "writes sign bits", .dtype = DTYPE_BINARY, .run = no_run,
         .output = OUTPUT_SIGN_BITS},
    };
    static const struct conv_spec spec = {.variants = variants, .variant_count = 2,
                                          .image_variant = "values"};
    const struct lesson lesson = {.name = "99_signs", .title = "sign bits",
                                  .default_preset = "big3", .op = conv_op(&spec)};
    char input[NAME_SIZE], weights[NAME_SIZE], out[NAME_SIZE], err[NAME_SIZE];
    snprintf(input, sizeof input, "test_cli_input.%ld.npy", (long)getpid());
    snprintf(weights, sizeof weights, "test_cli_weights.%ld.npy", (long)getpid());
    snprintf(out, sizeof out, "test_cli_out.%ld.npy", (long)getpid());
    const float values[15] = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15};
    const size_t input_shape[2] = {3, 5}, weights_shape[2] = {3, 3};
    CHECK(npy_write(input, values, 2, input_shape, err, sizeof err));
    CHECK(npy_write(weights, values, 2, weights_shape, err, sizeof err));
    char *argv[] = {"test", "--input", input, "--weights", weights, "--variant", "signs",
                    "--output", out};
    struct output_capture c;
    output_capture_begin(&c, stderr);
    const int rc = lesson_main(&lesson, (int)(sizeof argv / sizeof argv[0]), argv);
    const char *line = output_capture_end(&c);
    CHECK(rc == EXIT_USAGE);
    check_error_line(rc == EXIT_USAGE ? CLI_EXIT_USAGE : CLI_RUN, line,
                     "error: --variant signs cannot run this problem: it writes packed sign "
                     "bits, which --input and --image cannot save");
    struct stat st;
    CHECK(stat(out, &st) != 0);
    remove(input);
    remove(weights);
}

/* Runs lesson_main(flag_lesson(), args) in a child with standard output on out_path
 * and standard error in err_path; returns its exit status (-1: it did not exit). */
static int run_with_stdout(const char *out_path, const char *err_path, char **argv, int argc)
{
    fflush(stdout);
    fflush(stderr);
    const pid_t pid = fork();
    if (pid == 0) {
        const int out = open(out_path, O_WRONLY);
        const int err = open(err_path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
        if (out < 0 || err < 0 || dup2(out, STDOUT_FILENO) < 0 || dup2(err, STDERR_FILENO) < 0)
            _exit(99);
        _exit(lesson_main(flag_lesson(), argc, argv));
    }
    int status = 0;
    if (pid < 0 || waitpid(pid, &status, 0) != pid || !WIFEXITED(status))
        return -1;
    return WEXITSTATUS(status);
}

/* Output that could not be written to standard output (a full disk) fails the run:
 * exit 1 with one error line, not exit 0 with the table lost. */
static void stdout_write_error_fails_the_run(void)
{
    struct stat st;
    if (stat("/dev/full", &st) != 0) {
        printf("skipped: no /dev/full on this system\n");
        return;
    }
    char err_path[NAME_SIZE], text[NAME_SIZE] = "";
    snprintf(err_path, sizeof err_path, "test_cli_stderr.%ld.txt", (long)getpid());
    char *help[] = {"test", "--help"}, *presets[] = {"test", "--list-presets"};
    CHECK(run_with_stdout("/dev/null", err_path, help, 2) == EXIT_PASS);
    CHECK(run_with_stdout("/dev/full", err_path, help, 2) == EXIT_FAIL);
    FILE *f = fopen(err_path, "r");
    size_t n = f ? fread(text, 1, sizeof text - 1, f) : 0;
    text[n] = '\0';
    if (f)
        fclose(f);
    check_error_line(CLI_EXIT_USAGE, text, "error: standard output: cannot write: No space left");
    CHECK(run_with_stdout("/dev/full", err_path, presets, 2) == EXIT_FAIL);
    remove(err_path);
}

static const struct unit_case cases[] = {
    {"defaults_come_from_the_preset", defaults_come_from_the_preset},
    {"unet_preset", unet_preset},
    {"custom_problem", custom_problem},
    {"single_channel_has_no_bias", single_channel_has_no_bias},
    {"size_parsing", size_parsing},
    {"int_parsing", int_parsing},
    {"rejects_bad_ksize", rejects_bad_ksize},
    {"rejects_overflow", rejects_overflow},
    {"rejects_conflicts", rejects_conflicts},
    {"rejects_unknowns", rejects_unknowns},
    {"names_the_wrong_flag", names_the_wrong_flag},
    {"rejects_unwritable_outputs", rejects_unwritable_outputs},
    {"image_mode_defaults", image_mode_defaults},
    {"help_and_presets_exit_cleanly", help_and_presets_exit_cleanly},
    {"outputs_share_no_file", outputs_share_no_file},
    {"csv_refused_in_data_modes", csv_refused_in_data_modes},
    {"op_flag_at_fault_is_named", op_flag_at_fault_is_named},
    {"sign_bits_variant_refused_with_data", sign_bits_variant_refused_with_data},
    {"stdout_write_error_fails_the_run", stdout_write_error_fails_the_run},
};

UNIT_MAIN(cases)
