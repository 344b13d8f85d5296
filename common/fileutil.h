/* Files named on the command line: inputs are read only from regular files; outputs
 * are checked before any work and written whole or not at all. Errors are one
 * escaped line (escape.h). */
#ifndef FILEUTIL_H
#define FILEUTIL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

/* Opens path for reading when it is a regular file of at most max_bytes (0: any
 * size). A FIFO, device or folder is refused without blocking. Returns NULL with
 * "<path>: <why>" in err; errno is then open()'s error (ENOENT: no such file), or
 * EINVAL when the file opened but was refused. */
FILE *open_input_file(const char *path, long long max_bytes, char *err, size_t err_size);

/* True when path could be created or overwritten (its folder exists and is writable). */
bool path_writable(const char *path);
/* Opens "<path>.tmp.<pid>" for writing; commit renames it onto path, abort deletes it. */
FILE *atomic_open(const char *path, char *tmp_path, size_t tmp_size);
bool atomic_commit(FILE *f, const char *tmp_path, const char *path);
void atomic_abort(FILE *f, const char *tmp_path);
/* Writes "<path>: <message>", escaped (escape.h), into err and returns false, for
 * readers' one-line errors. */
bool file_error(char *err, size_t err_size, const char *path, const char *format, ...);

#endif
