/* Files named on the command line. Inputs are opened only when they are regular
 * files. Outputs are checked before any work, then written to a temporary file in
 * the same folder and renamed into place, so a reader never sees half a file.
 * rename() within one folder is atomic on POSIX file systems. */
#define _POSIX_C_SOURCE 200809L

#include "fileutil.h"

#include "escape.h"

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* Longest folder name path_writable examines; longer paths are reported unwritable. */
#define MAX_FOLDER_PATH 4096
#define MESSAGE_SIZE 512

/* What a file that is not a regular one is, in the user's words; NULL for a
 * regular file. */
static const char *special_kind(mode_t mode)
{
    if (S_ISREG(mode))
        return NULL;
    if (S_ISDIR(mode))
        return "a directory";
    if (S_ISLNK(mode))
        return "a symbolic link";
    if (S_ISFIFO(mode))
        return "a FIFO (named pipe)";
    if (S_ISCHR(mode) || S_ISBLK(mode))
        return "a device";
    if (S_ISSOCK(mode))
        return "a socket";
    return "a special file";
}

FILE *open_input_file(const char *path, long long max_bytes, char *err, size_t err_size)
{
    /* O_NONBLOCK: opening a FIFO that has no writer returns at once instead of
     * waiting forever; the fstat below then refuses it. Regular files ignore it. */
    int fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
    if (fd < 0) {
        int saved = errno;
        file_error(err, err_size, path, "cannot open: %s", strerror(saved));
        errno = saved;
        return NULL;
    }
    struct stat st;
    const char *kind = NULL;
    if (fstat(fd, &st) != 0)
        file_error(err, err_size, path, "cannot read: %s", strerror(errno));
    else if ((kind = special_kind(st.st_mode)) != NULL)
        file_error(err, err_size, path, "is %s, not a regular file", kind);
    else if (max_bytes > 0 && st.st_size > max_bytes)
        file_error(err, err_size, path, "is %lld bytes: at most %lld are read",
                   (long long)st.st_size, max_bytes);
    else {
        FILE *f = fdopen(fd, "rb");
        if (f)
            return f;
        file_error(err, err_size, path, "cannot read: %s", strerror(errno));
    }
    close(fd);
    errno = EINVAL;
    return NULL;
}

static bool folder_writable(const char *path)
{
    char folder[MAX_FOLDER_PATH];
    const char *slash = strrchr(path, '/');
    if (!slash) {
        strcpy(folder, ".");
    } else if (slash == path) {
        strcpy(folder, "/");
    } else {
        size_t len = (size_t)(slash - path);
        if (len >= sizeof folder)
            return false;
        memcpy(folder, path, len);
        folder[len] = '\0';
    }
    struct stat st;
    /* Search (X) permission is needed as well to create a file inside it. */
    return stat(folder, &st) == 0 && S_ISDIR(st.st_mode) && access(folder, W_OK | X_OK) == 0;
}

bool path_writable(const char *path)
{
    size_t len = strlen(path);
    if (len == 0 || path[len - 1] == '/')
        return false;
    struct stat st;
    if (stat(path, &st) == 0) {
        if (S_ISDIR(st.st_mode) || access(path, W_OK) != 0)
            return false;
    } else if (errno != ENOENT) {
        return false;
    }
    /* The temporary file of atomic_open is created in the folder, so the folder
     * must be writable even when the file itself already exists. */
    return folder_writable(path);
}

FILE *atomic_open(const char *path, char *tmp_path, size_t tmp_size)
{
    int len = snprintf(tmp_path, tmp_size, "%s.tmp.%ld", path, (long)getpid());
    if (len < 0 || (size_t)len >= tmp_size) {
        errno = ENAMETOOLONG;
        return NULL;
    }
    return fopen(tmp_path, "wb");
}

bool atomic_commit(FILE *f, const char *tmp_path, const char *path)
{
    /* fclose flushes, so a full disk may show up only here. */
    bool ok = !ferror(f);
    if (fclose(f) != 0)
        ok = false;
    if (ok && rename(tmp_path, path) != 0)
        ok = false;
    if (!ok) {
        int saved = errno; /* the caller reports why the write failed, not the cleanup */
        remove(tmp_path);
        errno = saved;
    }
    return ok;
}

void atomic_abort(FILE *f, const char *tmp_path)
{
    if (f)
        fclose(f);
    remove(tmp_path);
}

bool file_error(char *err, size_t err_size, const char *path, const char *format, ...)
{
    char message[MESSAGE_SIZE], line[MAX_FOLDER_PATH + MESSAGE_SIZE];
    va_list args;
    va_start(args, format);
    vsnprintf(message, sizeof message, format, args);
    va_end(args);
    /* Both the path and the message may carry bytes from the user or the file. */
    snprintf(line, sizeof line, "%s: %s", path, message);
    escape_text(err, err_size, line);
    return false;
}
