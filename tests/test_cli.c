/* Flag parsing: what is accepted, what it sets, and what is rejected (exit 2). */
#include <stdarg.h>
#include <stdio.h>

#include "cli.h"
#include "conv_flags.h"
#include "flag_lesson.h"
#include "stderr_capture.h"
#include "unit.h"

#define MAX_ARGS 32

/* parse(&o, "--flag", "value", ..., NULL) */
static enum cli_status parse(struct options *o, ...)
{
    char *argv[MAX_ARGS] = {"test"};
    int argc = 1;
    va_list args;
    va_start(args, o);
    for (char *arg; argc < MAX_ARGS && (arg = va_arg(args, char *)) != NULL;)
        argv[argc++] = arg;
    va_end(args);
    return parse_options(flag_lesson(), argc, argv, o);
}

#define PARSE(o, ...) parse((o), __VA_ARGS__, (char *)NULL)

/* The flags are rejected with one error line that holds `want`. */
#define CHECK_ERROR(want, ...)                                  \
    do {                                                        \
        struct options o_;                                      \
        struct stderr_capture c_;                               \
        stderr_capture_begin(&c_);                              \
        enum cli_status status_ = PARSE(&o_, __VA_ARGS__);      \
        check_error_line(status_, stderr_capture_end(&c_), want); \
    } while (0)

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
};

UNIT_MAIN(cases)
