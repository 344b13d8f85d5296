#include "bad_files.h"

#include <stdio.h>
#include <string.h>

#include "temp_files.h"
#include "unit.h"

void check_bad_files(const char *path, const char *const *first_group, size_t rows, size_t row_size,
                     const char *wanted, bad_file_check check)
{
    size_t written = 0;
    for (size_t i = 0; i < rows; i++) {
        const char *group = *(const char *const *)((const char *)first_group + i * row_size);
        if (strcmp(group, wanted) != 0)
            continue;
        check(path, i);
        written++;
    }
    CHECK(written > 0);
    if (written == 0)
        fprintf(stderr, "  no bad file is in the group '%s'\n", wanted);
    remove(path);
}

void check_refused(bool ok, const char *err, const char *path, const char *what, const void *data)
{
    CHECK(!ok);
    if (ok)
        fprintf(stderr, "  %s was read, but must be refused (%s)\n", path, what);
    check_error_line(err, path, what);
    CHECK(data == NULL);
}
