#define _POSIX_C_SOURCE 200809L

#include "fuzz_support.h"

#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#define PATH_SIZE 512

static const char *scratch_path(char *path, const char *kind, const char *stem, const char *ext)
{
    const char *dir = getenv("TMPDIR");
    snprintf(path, PATH_SIZE, "%s/fuzz_%s_%s.%ld%s", dir && *dir ? dir : "/tmp", stem, kind,
             (long)getpid(), ext);
    return path;
}

const char *fuzz_input_file(const uint8_t *data, size_t size, const char *stem, const char *ext)
{
    static char path[PATH_SIZE];
    scratch_path(path, "in", stem, ext);
    FILE *f = fopen(path, "wb");
    if (!f || fwrite(data, 1, size, f) != size || fclose(f) != 0) {
        perror(path);
        abort();
    }
    return path;
}

const char *fuzz_output_path(const char *stem, const char *ext)
{
    static char path[PATH_SIZE];
    return scratch_path(path, "out", stem, ext);
}

void fuzz_require(int ok)
{
    if (!ok)
        abort();
}
