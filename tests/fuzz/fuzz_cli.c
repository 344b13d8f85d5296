/* libFuzzer target for the flag parser: any command line must give a problem
 * within the ranges --help states, --help or --list-presets, or exactly one error
 * line; never a crash, leak or undefined behaviour. The input is the arguments,
 * each ended by a NUL byte, as the kernel hands them to main(). */
#define _POSIX_C_SOURCE 200809L /* fmemopen */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "conv_flags.h"
#include "flag_lesson.h"
#include "fuzz_support.h"

#define MAX_ARGS 64
/* Room for --help and --list-presets; an error line is far shorter. */
#define PRINTED_SIZE 8192

/* Splits the input at its NUL bytes into argv[1..]; a last argument without one
 * counts too. Returns argc. */
static int split_arguments(char *text, size_t size, char **argv)
{
    int argc = 0;
    argv[argc++] = "99_test";
    for (size_t i = 0; i < size && argc < MAX_ARGS; i += strlen(text + i) + 1)
        argv[argc++] = text + i;
    return argc;
}

static void check_options(const struct options *o)
{
    fuzz_require(o->reps >= 1 && o->reps <= MAX_REPS);
    fuzz_require(o->warmup >= 0 && o->warmup <= MAX_REPS);
    fuzz_require(o->preset != NULL);
    bool known = o->variant == NULL;
    const struct op *op = flag_lesson()->op;
    for (int i = 0; i < op->variant_count; i++)
        known = known || strcmp(o->variant, op->variants[i].name) == 0;
    fuzz_require(known);
    const struct conv_shape *s = &o->shape;
    const char *const *d = o->data;
    switch (o->mode) {
    case MODE_FILES: /* the flag lesson has no file sets */
        fuzz_require(false);
        return;
    case MODE_DATA: /* the files or the image set the problem later */
        if (d[DATA_INPUT]) {
            fuzz_require(d[DATA_WEIGHTS] && !d[DATA_IMAGE] && s->ksize == 0);
            return;
        }
        fuzz_require(d[DATA_IMAGE] && d[DATA_OUT]);
        if (s->ksize == 0) /* the op's default */
            return;
        break;
    case MODE_BENCH:
        fuzz_require(s->n >= 1 && s->cin >= 1 && s->cout >= 1 && s->h >= 1 && s->w >= 1);
        fuzz_require(!shape_overflows_int32(s));
        break;
    }
    fuzz_require(s->ksize >= 1 && s->ksize <= MAX_KSIZE && s->ksize % 2 == 1);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *text = malloc(size + 1);
    fuzz_require(text != NULL);
    memcpy(text, data, size);
    text[size] = '\0';
    char *argv[MAX_ARGS + 1] = {NULL};
    int argc = split_arguments(text, size, argv);

    /* What the parser prints, caught in memory (the sanitizers' reports go to file
     * descriptor 2 and are not caught). */
    static char printed[PRINTED_SIZE], errors[PRINTED_SIZE];
    memset(errors, 0, sizeof errors);
    FILE *out = stdout, *err = stderr;
    stdout = fmemopen(printed, sizeof printed, "w");
    stderr = fmemopen(errors, sizeof errors, "w");
    fuzz_require(stdout && stderr);
    struct options o;
    enum cli_status status = parse_options(flag_lesson(), argc, argv, &o);
    fclose(stdout);
    fclose(stderr);
    stdout = out;
    stderr = err;

    const char *newline = strchr(errors, '\n');
    switch (status) {
    case CLI_EXIT_USAGE:
        fuzz_require(strncmp(errors, "error: ", 7) == 0 && newline && newline[1] == '\0');
        break;
    case CLI_RUN:
        check_options(&o);
        /* fall through */
    case CLI_EXIT_OK:
        fuzz_require(errors[0] == '\0');
        break;
    default:
        fuzz_require(0);
    }
    free(text);
    return 0;
}
