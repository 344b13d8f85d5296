#define _POSIX_C_SOURCE 200809L /* fmemopen */
#include "fuzz_command_line.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz_support.h"

#define MAX_ARGS 64
/* Room for --help and --list-presets; an error line is far shorter. */
#define PRINTED_SIZE 16384

static int split_arguments(const char *name, char *text, size_t size, char **argv)
{
    int argc = 0;
    argv[argc++] = (char *)name;
    for (size_t i = 0; i < size && argc < MAX_ARGS; i += strlen(text + i) + 1)
        argv[argc++] = text + i;
    return argc;
}

void fuzz_command_line(const struct lesson *lesson, const uint8_t *data, size_t size,
                       void (*check)(const struct options *o))
{
    char *text = malloc(size + 1);
    fuzz_require(text != NULL);
    memcpy(text, data, size);
    text[size] = '\0';
    char *argv[MAX_ARGS + 1] = {NULL};
    int argc = split_arguments(lesson->name, text, size, argv);

    /* What the parser prints, caught in memory (the sanitizers' reports go to file
     * descriptor 2 and are not caught). */
    static char printed[PRINTED_SIZE], errors[PRINTED_SIZE];
    memset(errors, 0, sizeof errors);
    FILE *out = stdout, *err = stderr;
    stdout = fmemopen(printed, sizeof printed, "w");
    stderr = fmemopen(errors, sizeof errors, "w");
    fuzz_require(stdout && stderr);
    struct options o;
    enum cli_status status = parse_options(lesson, argc, argv, &o);
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
        check(&o);
        /* fall through */
    case CLI_EXIT_OK:
        fuzz_require(errors[0] == '\0');
        break;
    default:
        fuzz_require(0);
    }
    free(text);
}
