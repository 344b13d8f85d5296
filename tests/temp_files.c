/* atomic_open's temporary names are random, so leftovers are found by listing the
 * folder rather than by guessing a name. */
#define _POSIX_C_SOURCE 200809L

#include "temp_files.h"

#include <dirent.h>
#include <stdio.h>
#include <string.h>

#include "unit.h"

#define PREFIX_SIZE 512

int temp_files_left(const char *path)
{
    char folder[PREFIX_SIZE], prefix[PREFIX_SIZE];
    const char *slash = strrchr(path, '/');
    snprintf(folder, sizeof folder, "%.*s", slash ? (int)(slash - path) + 1 : 1,
             slash ? path : ".");
    snprintf(prefix, sizeof prefix, "%s.tmp.", slash ? slash + 1 : path);
    DIR *dir = opendir(folder);
    if (!dir)
        return 0;
    int count = 0;
    for (struct dirent *e; (e = readdir(dir)) != NULL;)
        if (strncmp(e->d_name, prefix, strlen(prefix)) == 0)
            count++;
    closedir(dir);
    return count;
}

void write_text(const char *path, const char *text)
{
    FILE *f = fopen(path, "w");
    CHECK(f != NULL);
    if (f) {
        fputs(text, f);
        fclose(f);
    }
}

void check_error_line(const char *err, const char *prefix, const char *what)
{
    CHECK(strstr(err, prefix) == err);
    CHECK(strstr(err, what) != NULL);
    CHECK(strchr(err, '\n') == NULL);
    if (strstr(err, prefix) != err || !strstr(err, what))
        fprintf(stderr, "  error was: %s (expected '%s')\n", err, what);
}
