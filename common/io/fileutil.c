/* Files named on the command line. Inputs are opened only when they are regular
 * files. Outputs are checked before any work, then written to a temporary file in
 * the same folder and renamed into place, so a reader never sees half a file:
 * rename() within one folder is atomic on POSIX file systems. A CSV grows by whole
 * rows. */
#define _POSIX_C_SOURCE 200809L

#include "fileutil.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#ifdef __linux__
#include <linux/magic.h>
#include <sys/vfs.h>
#endif

#include "escape.h"

/* Longest folder name the output checks examine. */
#define MAX_FOLDER_PATH 4096
#define MESSAGE_SIZE 512
/* What atomic_open adds to the output's name for its temporary file. */
#define TEMP_SUFFIX ".tmp.XXXXXX"
#define TEMP_SUFFIX_LEN (sizeof TEMP_SUFFIX - 1)
/* A new file's permissions before the umask, as fopen() creates it. */
#define NEW_FILE_MODE 0666

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
    FILE *f = NULL;
    if (fstat(fd, &st) != 0)
        file_error(err, err_size, path, "cannot read: %s", strerror(errno));
    else if ((kind = special_kind(st.st_mode)) != NULL)
        file_error(err, err_size, path, "is %s, not a regular file", kind);
    else if (max_bytes > 0 && st.st_size > max_bytes)
        file_error(err, err_size, path, "is %lld bytes: at most %lld are read",
                   (long long)st.st_size, max_bytes);
    else if ((f = fdopen(fd, "rb")) == NULL)
        file_error(err, err_size, path, "cannot read: %s", strerror(errno));
    if (f)
        return f;
    close(fd);
    errno = EINVAL;
    return NULL;
}

bool same_file(const char *a, const char *b)
{
    struct stat sa, sb;
    return stat(a, &sa) == 0 && stat(b, &sb) == 0 && sa.st_dev == sb.st_dev &&
           sa.st_ino == sb.st_ino;
}

/* One "<flag> <path>: <why>" line, escaped, into err; returns false. */
static bool arg_error(char *err, size_t err_size, struct file_arg arg, const char *format, ...)
{
    char message[MESSAGE_SIZE], who[MAX_FOLDER_PATH + MESSAGE_SIZE];
    va_list args;
    va_start(args, format);
    vsnprintf(message, sizeof message, format, args);
    va_end(args);
    snprintf(who, sizeof who, "%s %s", arg.flag, arg.path);
    return file_error(err, err_size, who, "%s", message);
}

#ifdef __linux__
/* File systems whose files are the kernel's interface, not data: writing an
 * output there fails late or does something else entirely. */
static const struct {
    uint32_t magic;
    const char *name;
} KERNEL_FILE_SYSTEMS[] = {
    {PROC_SUPER_MAGIC, "proc"},
    {SYSFS_MAGIC, "sysfs"},
    {DEBUGFS_MAGIC, "debugfs"},
    {TRACEFS_MAGIC, "tracefs"},
    {SECURITYFS_MAGIC, "securityfs"},
    {CGROUP_SUPER_MAGIC, "cgroup"},
    {CGROUP2_SUPER_MAGIC, "cgroup2"},
    {DEVPTS_SUPER_MAGIC, "devpts"},
    {BPF_FS_MAGIC, "bpf"},
    {PSTOREFS_MAGIC, "pstore"},
    {EFIVARFS_MAGIC, "efivarfs"},
    {BINFMTFS_MAGIC, "binfmt_misc"},
    {SELINUX_MAGIC, "selinuxfs"},
    {SMACK_MAGIC, "smackfs"},
};

/* The name of folder's file system when it is one of the kernel's; NULL otherwise. */
static const char *kernel_file_system(const char *folder)
{
    struct statfs fs;
    if (statfs(folder, &fs) != 0)
        return NULL;
    for (size_t i = 0; i < sizeof KERNEL_FILE_SYSTEMS / sizeof KERNEL_FILE_SYSTEMS[0]; i++)
        if ((uint32_t)fs.f_type == KERNEL_FILE_SYSTEMS[i].magic)
            return KERNEL_FILE_SYSTEMS[i].name;
    return NULL;
}
#else
static const char *kernel_file_system(const char *folder)
{
    (void)folder;
    return NULL;
}
#endif

/* The folder part of path ("." for a bare name); false when it does not fit. */
static bool folder_of(const char *path, char *folder, size_t size)
{
    const char *slash = strrchr(path, '/');
    if (!slash) {
        path = ".";
        slash = path + 1;
    } else if (slash == path) { /* "/name": the root folder */
        slash++;
    }
    size_t len = (size_t)(slash - path);
    if (len >= size)
        return false;
    memcpy(folder, path, len);
    folder[len] = '\0';
    return true;
}

bool same_output(const char *a, const char *b)
{
    if (strcmp(a, b) == 0 || same_file(a, b))
        return true;
    /* Not there yet: the same name in the same folder, however the folder is spelt. */
    const char *slash_a = strrchr(a, '/'), *slash_b = strrchr(b, '/');
    const char *name_a = slash_a ? slash_a + 1 : a, *name_b = slash_b ? slash_b + 1 : b;
    char folder_a[MAX_FOLDER_PATH], folder_b[MAX_FOLDER_PATH];
    return *name_a && strcmp(name_a, name_b) == 0 && folder_of(a, folder_a, sizeof folder_a) &&
           folder_of(b, folder_b, sizeof folder_b) && same_file(folder_a, folder_b);
}

/* The checks of output_path_check; temp_len is what atomic_open adds to the name
 * (0 for a file appended in place). */
static bool check_output(struct file_arg out, const struct file_arg *inputs, size_t input_count,
                         size_t temp_len, char *err, size_t err_size)
{
    const char *path = out.path;
    size_t len = strlen(path);
    if (len == 0)
        return arg_error(err, err_size, out, "an empty name is not a file name");
    if (path[len - 1] == '/')
        return arg_error(err, err_size, out, "names a folder: give a file name");
    if (len + temp_len >= FILENAME_MAX)
        return arg_error(err, err_size, out, "the path is %zu bytes: at most %zu fit", len,
                         (size_t)FILENAME_MAX - 1 - temp_len);
    struct stat st;
    bool exists = false;
    if (lstat(path, &st) == 0) {
        exists = true;
        /* rename() would replace a symlink, FIFO or device node with a regular file. */
        const char *kind = special_kind(st.st_mode);
        if (kind)
            return arg_error(err, err_size, out,
                             "is %s: outputs go only to regular files or new paths", kind);
        for (size_t i = 0; i < input_count; i++)
            if (inputs[i].path && same_file(path, inputs[i].path))
                return arg_error(err, err_size, out,
                                 "is the same file as %s %s: writing would destroy that input",
                                 inputs[i].flag, inputs[i].path);
        if (access(path, W_OK) != 0)
            return arg_error(err, err_size, out, "cannot be replaced: %s", strerror(errno));
    } else if (errno != ENOENT) {
        return arg_error(err, err_size, out, "cannot be used: %s", strerror(errno));
    }

    char folder[MAX_FOLDER_PATH];
    if (!folder_of(path, folder, sizeof folder))
        return arg_error(err, err_size, out, "the folder name is too long");
    if (access(folder, F_OK) != 0)
        return arg_error(err, err_size, out, "folder %s: %s", folder,
                         errno == ENOENT ? "does not exist" : strerror(errno));
    /* Search (X) permission is needed as well to create a file inside it; the
     * temporary file is created there even when the output exists. A file appended
     * in place (temp_len 0) that exists needs no more than its own write permission. */
    if ((temp_len > 0 || !exists) && access(folder, W_OK | X_OK) != 0)
        return arg_error(err, err_size, out, "folder %s is not writable: %s", folder,
                         strerror(errno));
    const char *kernel_fs = kernel_file_system(folder);
    if (kernel_fs)
        return arg_error(err, err_size, out,
                         "folder %s is on the kernel's %s file system, not one for data", folder,
                         kernel_fs);
    long name_max = pathconf(folder, _PC_NAME_MAX);
    if (name_max < 0) /* no limit reported */
        name_max = NAME_MAX;
    const char *slash = strrchr(path, '/');
    size_t name_len = strlen(slash ? slash + 1 : path);
    /* A name too long by itself failed lstat() above (ENAMETOOLONG). */
    if (name_len + temp_len > (size_t)name_max)
        return arg_error(err, err_size, out,
                         "the file name is %zu bytes: at most %ld fit, less %zu for the "
                         "temporary name",
                         name_len, name_max, temp_len);
    return true;
}

bool output_path_check(struct file_arg out, const struct file_arg *inputs, size_t input_count,
                       char *err, size_t err_size)
{
    return check_output(out, inputs, input_count, TEMP_SUFFIX_LEN, err, err_size);
}

bool append_path_check(struct file_arg out, const struct file_arg *inputs, size_t input_count,
                       char *err, size_t err_size)
{
    return check_output(out, inputs, input_count, 0, err, err_size);
}

bool path_writable(const char *path)
{
    char err[MESSAGE_SIZE];
    struct file_arg out = {"output", path};
    return output_path_check(out, NULL, 0, err, sizeof err);
}

/* The permissions the output gets: those of the file it replaces, or what fopen()
 * would give a new file (0666 less the umask), not mkstemp's private 0600. */
static mode_t output_mode(const char *path)
{
    struct stat st;
    if (stat(path, &st) == 0 && S_ISREG(st.st_mode))
        return st.st_mode & (S_IRWXU | S_IRWXG | S_IRWXO);
    mode_t mask = umask(0); /* the only way to read it; set back at once */
    umask(mask);
    return NEW_FILE_MODE & ~mask;
}

/* Temporary files that exist now: a signal that ends the run (Ctrl-C, kill) removes
 * them before the process dies, so an interrupted write leaves no <name>.tmp.XXXXXX
 * behind. The table is changed only with those signals blocked, and the handler does
 * only what is async-signal-safe: unlink(), sigaction(), raise(). */
#define MAX_PENDING 8
static const int CLEANUP_SIGNALS[] = {SIGINT, SIGTERM, SIGHUP};
#define CLEANUP_SIGNAL_COUNT (sizeof CLEANUP_SIGNALS / sizeof CLEANUP_SIGNALS[0])
static char pending_path[MAX_PENDING][FILENAME_MAX];
static volatile sig_atomic_t pending_used[MAX_PENDING];
static int pending_count; /* of used slots; the handlers are in place while it is > 0 */
static struct sigaction saved_action[CLEANUP_SIGNAL_COUNT];
static bool hooked[CLEANUP_SIGNAL_COUNT]; /* false where the signal was ignored */

/* Removes the temporary files, then lets the signal do what it did before (by
 * default: end the process, whose exit status then names the signal). */
static void remove_pending_files(int sig)
{
    for (int i = 0; i < MAX_PENDING; i++)
        if (pending_used[i])
            unlink(pending_path[i]);
    for (size_t i = 0; i < CLEANUP_SIGNAL_COUNT; i++)
        if (CLEANUP_SIGNALS[i] == sig)
            sigaction(sig, &saved_action[i], NULL);
    /* Blocked while this handler runs: delivered, with the old action, on return. */
    raise(sig);
}

static void block_cleanup_signals(sigset_t *saved)
{
    sigset_t set;
    sigemptyset(&set);
    for (size_t i = 0; i < CLEANUP_SIGNAL_COUNT; i++)
        sigaddset(&set, CLEANUP_SIGNALS[i]);
    sigprocmask(SIG_BLOCK, &set, saved);
}

/* Installs the handlers with the first temporary file; a signal the process ignores
 * (nohup) stays ignored. Called with the signals blocked. */
static void hook_signals(void)
{
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = remove_pending_files;
    sigemptyset(&sa.sa_mask);
    for (size_t i = 0; i < CLEANUP_SIGNAL_COUNT; i++)
        sigaddset(&sa.sa_mask, CLEANUP_SIGNALS[i]);
    sa.sa_flags = SA_RESTART;
    for (size_t i = 0; i < CLEANUP_SIGNAL_COUNT; i++) {
        hooked[i] = sigaction(CLEANUP_SIGNALS[i], NULL, &saved_action[i]) == 0 &&
                    saved_action[i].sa_handler != SIG_IGN;
        if (hooked[i])
            hooked[i] = sigaction(CLEANUP_SIGNALS[i], &sa, NULL) == 0;
    }
}

/* Puts back what the signals did before, with the last temporary file gone. */
static void unhook_signals(void)
{
    for (size_t i = 0; i < CLEANUP_SIGNAL_COUNT; i++)
        if (hooked[i])
            sigaction(CLEANUP_SIGNALS[i], &saved_action[i], NULL);
}

/* Creates the temporary file from template tmp_path (mkstemp) and records it for the
 * handlers, with the signals blocked in between; returns the descriptor or -1. */
static int create_pending(char *tmp_path)
{
    sigset_t saved;
    block_cleanup_signals(&saved);
    int fd = mkstemp(tmp_path);
    int saved_errno = errno;
    if (fd >= 0 && strlen(tmp_path) < FILENAME_MAX) {
        for (int i = 0; i < MAX_PENDING; i++) {
            if (pending_used[i])
                continue;
            memcpy(pending_path[i], tmp_path, strlen(tmp_path) + 1);
            pending_used[i] = 1;
            if (pending_count++ == 0)
                hook_signals();
            break;
        }
    }
    sigprocmask(SIG_SETMASK, &saved, NULL);
    errno = saved_errno;
    return fd;
}

/* tmp_path is gone (renamed or deleted): no handler needs to remove it any more. */
static void forget_pending(const char *tmp_path)
{
    sigset_t saved;
    block_cleanup_signals(&saved);
    for (int i = 0; i < MAX_PENDING; i++) {
        if (!pending_used[i] || strcmp(pending_path[i], tmp_path) != 0)
            continue;
        pending_used[i] = 0;
        if (--pending_count == 0)
            unhook_signals();
        break;
    }
    sigprocmask(SIG_SETMASK, &saved, NULL);
}

/* Deletes the temporary file, keeping errno. */
static void remove_temp(const char *tmp_path)
{
    int saved = errno;
    unlink(tmp_path);
    forget_pending(tmp_path);
    errno = saved;
}

FILE *atomic_open(const char *path, char *tmp_path, size_t tmp_size)
{
    int len = snprintf(tmp_path, tmp_size, "%s" TEMP_SUFFIX, path);
    if (len < 0 || (size_t)len >= tmp_size) {
        errno = ENAMETOOLONG;
        return NULL;
    }
    /* mkstemp picks an unpredictable name and creates it with O_CREAT | O_EXCL,
     * which never follows a symlink planted there nor opens an existing file. */
    int fd = create_pending(tmp_path);
    if (fd < 0)
        return NULL;
    FILE *f = NULL;
    if (fchmod(fd, output_mode(path)) == 0)
        f = fdopen(fd, "wb");
    if (!f) {
        int saved = errno;
        close(fd);
        remove_temp(tmp_path);
        errno = saved;
    }
    return f;
}

/* rename() replaces whatever is at path; only a regular file or nothing may be
 * there. output_path_check said so before the run; the folder may have changed. */
static bool still_replaceable(const char *path)
{
    struct stat st;
    if (lstat(path, &st) != 0)
        return errno == ENOENT;
    if (S_ISREG(st.st_mode))
        return true;
    errno = S_ISDIR(st.st_mode) ? EISDIR : EEXIST;
    return false;
}

bool atomic_commit(FILE *f, const char *tmp_path, const char *path)
{
    /* A full disk may show up only when the buffer is flushed; fsync puts the data
     * on disk before the rename makes it the file, so a crash leaves old or new. */
    bool ok = fflush(f) == 0 && !ferror(f) && fsync(fileno(f)) == 0;
    int saved = errno;
    if (fclose(f) != 0 && ok) {
        ok = false;
        saved = errno;
    }
    if (ok && (!still_replaceable(path) || rename(tmp_path, path) != 0)) {
        ok = false;
        saved = errno;
    }
    if (ok)
        forget_pending(tmp_path);
    else
        remove_temp(tmp_path);
    errno = saved; /* the caller reports why the write failed, not the cleanup */
    return ok;
}

void atomic_abort(FILE *f, const char *tmp_path)
{
    if (f)
        fclose(f);
    remove_temp(tmp_path);
}

bool atomic_sync(FILE *f)
{
    if (fflush(f) != 0)
        return false;
    if (ferror(f)) { /* a write before failed; its errno may be gone */
        errno = EIO;
        return false;
    }
    return fsync(fileno(f)) == 0;
}

/* True when a non-empty file does not end in '\n': a row torn by an earlier crash,
 * which the next row must not be glued onto. */
static bool ends_torn(int fd, off_t size)
{
    char last;
    return size > 0 && pread(fd, &last, 1, size - 1) == 1 && last != '\n';
}

/* How a CSV is opened for appending. O_NOFOLLOW and the fstat of append_line: append
 * only to a regular file. O_NONBLOCK: a FIFO fails or returns at once instead of
 * blocking. O_RDWR: ends_torn reads. */
#define APPEND_FLAGS (O_RDWR | O_APPEND | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC)
/* Opens tried when another run creates or removes the file at the same moment. */
#define APPEND_ATTEMPTS 3

/* Opens path for appending, creating it when it does not exist (*created: this call
 * made it, so a failed first row may remove it again); -1 with errno on failure. */
static int open_for_append(const char *path, bool *created)
{
    *created = false;
    for (int attempt = 0; attempt < APPEND_ATTEMPTS; attempt++) {
        int fd = open(path, APPEND_FLAGS);
        if (fd >= 0 || errno != ENOENT)
            return fd;
        fd = open(path, APPEND_FLAGS | O_CREAT | O_EXCL, NEW_FILE_MODE);
        if (fd >= 0 || errno != EEXIST) {
            *created = fd >= 0;
            return fd;
        }
        /* Another run created it between the two opens: append to that one. */
    }
    return -1;
}

/* Takes back a row that failed: the file is cut back to its old length, or removed
 * when this call created it and it was still empty (a new CSV on a full disk leaves
 * nothing behind). The lock is held, so no other run wrote in between. */
static bool take_back(int fd, const char *path, const struct stat *before, bool created)
{
    struct stat now;
    if (created && before->st_size == 0 && lstat(path, &now) == 0 && now.st_dev == before->st_dev &&
        now.st_ino == before->st_ino)
        return unlink(path) == 0;
    return ftruncate(fd, before->st_size) == 0;
}

bool append_line(const char *path, const char *header, const char *line, char *err, size_t err_size)
{
    int fd = -1;
    bool created = false;
    struct stat st;
    const char *kind = NULL;
    for (int attempt = 0;; attempt++) {
        fd = open_for_append(path, &created);
        if (fd < 0) {
            int saved = errno;
            if (lstat(path, &st) == 0 && (kind = special_kind(st.st_mode)) != NULL)
                return file_error(err, err_size, path, "is %s, not a regular file", kind);
            return file_error(err, err_size, path, "cannot open for appending: %s",
                              strerror(saved));
        }
        /* Another run appending to the same file waits here, so each reads the size it
         * appends to, and writes the header only into an empty file. Where locks are not
         * supported (some network file systems) the row is appended unlocked. */
        struct flock lock = {.l_type = F_WRLCK, .l_whence = SEEK_SET};
        fcntl(fd, F_SETLKW, &lock);
        if (fstat(fd, &st) != 0 || (kind = special_kind(st.st_mode)) != NULL) {
            if (kind)
                file_error(err, err_size, path, "is %s, not a regular file", kind);
            else
                file_error(err, err_size, path, "cannot append: %s", strerror(errno));
            close(fd);
            return false;
        }
        /* Linked: still the file at path. Else the run that created it removed it
         * again (its first row failed) while this one waited for the lock. */
        if (st.st_nlink > 0)
            break;
        close(fd);
        if (attempt + 1 == APPEND_ATTEMPTS)
            return file_error(err, err_size, path,
                              "cannot append: the file was removed while waiting for it");
    }

    bool with_header = header && st.st_size == 0;
    bool torn = ends_torn(fd, st.st_size);
    size_t line_len = strlen(line);
    bool ended = line_len > 0 && line[line_len - 1] == '\n';
    size_t len =
        (torn ? 1 : 0) + (with_header ? strlen(header) + 1 : 0) + line_len + (ended ? 0 : 1);
    char *text = malloc(len + 1);
    if (!text) {
        if (created)
            take_back(fd, path, &st, created);
        close(fd);
        return file_error(err, err_size, path, "out of memory for a row");
    }
    snprintf(text, len + 1, "%s%s%s%s%s", torn ? "\n" : "", with_header ? header : "",
             with_header ? "\n" : "", line, ended ? "" : "\n");
    /* The text goes out in one write; a short one (cut by a signal, or the disk is
     * full) is continued, so a failure reports the real errno. fsync: a full disk
     * may show up only there. On failure the file is cut back to where it ended, or
     * removed when this call created it. */
    size_t done = 0;
    ssize_t n = 0;
    while (done < len && (n = write(fd, text + done, len - done)) > 0)
        done += (size_t)n;
    bool ok = done == len && fsync(fd) == 0;
    int saved = n == 0 ? EIO : errno;
    free(text);
    if (!ok) {
        bool restored = take_back(fd, path, &st, created);
        file_error(err, err_size, path, "cannot append a row: %s%s", strerror(saved),
                   restored ? "" : " (and the partial row could not be removed)");
    }
    if (close(fd) != 0 && ok) {
        ok = false;
        file_error(err, err_size, path, "cannot append a row: %s", strerror(errno));
    }
    return ok;
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
