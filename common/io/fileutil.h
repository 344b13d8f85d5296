/* Files named on the command line: inputs are read only from regular files; outputs
 * are checked before any work and written whole or not at all. Errors are one
 * escaped line (escape.h). */
#ifndef FILEUTIL_H
#define FILEUTIL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#ifdef __cplusplus
extern "C" {
#endif

/* A file named by a flag, e.g. {"--input", "x.npy"}; path NULL when not given. */
struct file_arg {
    const char *flag;
    const char *path;
};

/* Opens path for reading when it is a regular file of at most max_bytes (0: any
 * size). A FIFO, device or folder is refused without blocking. Returns NULL with
 * "<path>: <why>" in err; errno is then open()'s error (ENOENT: no such file), or
 * EINVAL when the file opened but was refused. */
FILE *open_input_file(const char *path, long long max_bytes, char *err, size_t err_size);

/* True when both paths exist and are one file (same device and inode), however
 * they are spelt: hard links and symlinks to it count. */
bool same_file(const char *a, const char *b);

/* True when two outputs would be one file: the same name, one existing file
 * (same_file), or one name in one folder however the folder is spelt (x.csv and
 * ./x.csv before either exists). */
bool same_output(const char *a, const char *b);

/* Checks, before any work, that out.path can be written by atomic_open and
 * atomic_commit: a regular file (not a symlink, FIFO, device or folder) or a new
 * name; not the same file as any of inputs (entries with a NULL path are skipped);
 * a name that fits the folder with the temporary suffix; a folder that exists, is
 * writable, and holds data (not /proc, /sys and the like). Returns false with one
 * line "<flag> <path>: <why>" in err. */
bool output_path_check(struct file_arg out, const struct file_arg *inputs, size_t input_count,
                       char *err, size_t err_size);
/* The same for a file that append_line extends in place (no temporary name): a file
 * that exists needs no writable folder, only its own write permission. */
bool append_path_check(struct file_arg out, const struct file_arg *inputs, size_t input_count,
                       char *err, size_t err_size);
/* output_path_check with no inputs and no message. */
bool path_writable(const char *path);

/* Creates "<path>.tmp.XXXXXX" exclusively (O_EXCL, random suffix) in path's folder;
 * commit syncs it to disk and renames it onto path, abort deletes it. Commit
 * refuses, and deletes it, when path has become anything but a regular file. While
 * it exists, SIGINT, SIGTERM and SIGHUP (unless ignored) delete it first, then take
 * their old course (by default the process ends, its status naming the signal). */
FILE *atomic_open(const char *path, char *tmp_path, size_t tmp_size);
bool atomic_commit(FILE *f, const char *tmp_path, const char *path);
void atomic_abort(FILE *f, const char *tmp_path);
/* Flushes and syncs a file atomic_open made, leaving it open and uncommitted: a
 * program writing several outputs syncs every one before it renames the first, so a
 * full disk or a quota leaves none of them. false with errno on failure (EIO when a
 * write before failed); atomic_commit or atomic_abort follow either way. */
bool atomic_sync(FILE *f);

/* Appends line and a '\n' (unless it ends in one) to the regular file path,
 * preceded by header and a '\n' when the file is new or empty, in one write that is
 * synced to disk; a partial write is cut off again, so the file gains the whole row
 * or nothing, and a file this call created is removed again when its first row
 * fails. A last row left without its '\n' (by a crash) is ended first. Returns
 * false with "<path>: <why>" in err. */
bool append_line(const char *path, const char *header, const char *line, char *err,
                 size_t err_size);

/* Writes "<path>: <message>", escaped (escape.h), into err and returns false, for
 * readers' one-line errors. */
bool file_error(char *err, size_t err_size, const char *path, const char *format, ...);

#ifdef __cplusplus
}
#endif

#endif
