/* Input and output checks, the atomic temp-file-then-rename write and whole-row
 * appends. Files are created in the working directory under names that carry the
 * process id, and removed. */
#define _POSIX_C_SOURCE 200809L

#include <errno.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "fileutil.h"
#include "temp_files.h"
#include "unit.h"

#define NAME_SIZE 256
#define TMP_SIZE (NAME_SIZE + 32) /* a name and its temporary suffix */
#define ERR_SIZE 1024
#define HANG_SECONDS 5 /* alarm() turns a blocking open into a failed test */
#define NOBODY 65534   /* the user a test run as root drops to, to be refused a write */
#define CHILD_SKIPPED 77

static void temp_name(char *name, const char *stem)
{
    snprintf(name, NAME_SIZE, "test_fileutil_%s.%ld.txt", stem, (long)getpid());
}

static bool exists(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0;
}

static bool file_holds(const char *path, const char *text)
{
    char buf[NAME_SIZE] = {0};
    FILE *f = fopen(path, "r");
    if (!f)
        return false;
    size_t n = fread(buf, 1, sizeof buf - 1, f);
    fclose(f);
    return n == strlen(text) && memcmp(buf, text, n) == 0;
}

static void temp_path_writable(void)
{
    char name[NAME_SIZE];
    temp_name(name, "new");
    CHECK(!exists(name));
    CHECK(path_writable(name)); /* does not exist yet, folder is writable */
    write_text(name, "x");
    CHECK(path_writable(name)); /* exists and is writable */
    remove(name);
}

static void missing_folder_not_writable(void)
{
    CHECK(!path_writable("no-such-folder-for-test_fileutil/out.npy"));
    CHECK(!path_writable(""));
}

static void directory_not_writable(void)
{
    char dir[NAME_SIZE];
    temp_name(dir, "dir");
    CHECK(mkdir(dir, 0700) == 0);
    CHECK(!path_writable(dir));
    CHECK(!path_writable("./"));
    rmdir(dir);
}

/* Starts an atomic write to the file named for stem: fills in name and tmp (of
 * TMP_SIZE bytes). */
static FILE *open_atomic(const char *stem, char *name, char *tmp)
{
    temp_name(name, stem);
    FILE *f = atomic_open(name, tmp, TMP_SIZE);
    CHECK(f != NULL);
    return f;
}

static void atomic_abort_leaves_nothing(void)
{
    char name[NAME_SIZE], tmp[TMP_SIZE];
    FILE *f = open_atomic("abort", name, tmp);
    if (!f)
        return;
    CHECK(strstr(tmp, name) == tmp && strstr(tmp, ".tmp.") != NULL);
    fputs("half", f);
    CHECK(exists(tmp));
    CHECK(!exists(name)); /* nothing at the final path before commit */
    atomic_abort(f, tmp);
    CHECK(!exists(tmp));
    CHECK(!exists(name));
}

static void atomic_commit_replaces_old_file(void)
{
    char name[NAME_SIZE], tmp[TMP_SIZE];
    temp_name(name, "commit");
    write_text(name, "old contents");
    FILE *f = atomic_open(name, tmp, sizeof tmp);
    CHECK(f != NULL);
    if (!f)
        return;
    fputs("new", f);
    CHECK(file_holds(name, "old contents")); /* readers see the old file until commit */
    CHECK(atomic_commit(f, tmp, name));
    CHECK(file_holds(name, "new"));
    CHECK(!exists(tmp));
    remove(name);
}

static void atomic_commit_failure_removes_temp(void)
{
    /* Renaming a file onto a directory fails: commit must say so and clean up. */
    char dir[NAME_SIZE], tmp[TMP_SIZE];
    temp_name(dir, "target_dir");
    CHECK(mkdir(dir, 0700) == 0);
    FILE *f = atomic_open(dir, tmp, sizeof tmp);
    CHECK(f != NULL);
    if (f) {
        fputs("data", f);
        CHECK(!atomic_commit(f, tmp, dir));
        CHECK(!exists(tmp));
    }
    struct stat st;
    CHECK(stat(dir, &st) == 0 && S_ISDIR(st.st_mode));
    rmdir(dir);
}

static void atomic_open_rejects_long_path(void)
{
    char tmp[16];
    CHECK(atomic_open("a-name-longer-than-the-buffer.txt", tmp, sizeof tmp) == NULL);
}

/* Inputs come only from regular files: a FIFO with no writer is refused at once
 * (alarm: a hang fails the test instead of blocking ctest), a folder or device is
 * named as such, and a size cap holds. */
static void input_must_be_a_regular_file(void)
{
    char fifo[NAME_SIZE], dir[NAME_SIZE], name[NAME_SIZE], err[NAME_SIZE * 2];
    temp_name(fifo, "fifo");
    temp_name(dir, "indir");
    temp_name(name, "small");
    CHECK(mkfifo(fifo, 0600) == 0);
    CHECK(mkdir(dir, 0700) == 0);
    write_text(name, "0123456789");
    alarm(HANG_SECONDS);
    CHECK(open_input_file(fifo, 0, err, sizeof err) == NULL);
    alarm(0);
    CHECK(strstr(err, fifo) == err && strstr(err, "is a FIFO (named pipe), not a regular file"));
    CHECK(open_input_file(dir, 0, err, sizeof err) == NULL && errno == EINVAL);
    CHECK(strstr(err, "is a directory, not a regular file") != NULL);
    CHECK(open_input_file("/dev/zero", 0, err, sizeof err) == NULL);
    CHECK(strstr(err, "/dev/zero: is a device, not a regular file") == err);
    CHECK(open_input_file(name, 5, err, sizeof err) == NULL);
    CHECK(strstr(err, "is 10 bytes: at most 5 are read") != NULL);
    CHECK(open_input_file("no-such-file-for-test_fileutil", 0, err, sizeof err) == NULL);
    CHECK(errno == ENOENT && strstr(err, "cannot open: No such file or directory") != NULL);
    FILE *f = open_input_file(name, 10, err, sizeof err);
    CHECK(f != NULL);
    if (f) {
        char text[NAME_SIZE] = "";
        CHECK(fgets(text, sizeof text, f) && strcmp(text, "0123456789") == 0);
        fclose(f);
    }
    remove(fifo);
    rmdir(dir);
    remove(name);
}

/* output_path_check must refuse, naming the flag and path and saying `what`. */
static void check_output_refused(const char *path, const struct file_arg *inputs, size_t count,
                                 const char *what)
{
    char err[ERR_SIZE] = "", who[ERR_SIZE];
    struct file_arg out = {"--output", path};
    CHECK(!output_path_check(out, inputs, count, err, sizeof err));
    snprintf(who, sizeof who, "--output %s: ", path);
    check_error_line(err, who, what);
}

/* What a writer must refuse to replace, named for prefix: a symlink to a regular file
 * (target, holding text), a FIFO and a folder. */
struct special_files {
    char target[NAME_SIZE], link[NAME_SIZE], fifo[NAME_SIZE], dir[NAME_SIZE];
};

static void make_special_files(struct special_files *sp, const char *prefix, const char *text)
{
    char *names[] = {sp->target, sp->link, sp->fifo, sp->dir};
    const char *kinds[] = {"target", "link", "fifo", "dir"};
    for (int i = 0; i < 4; i++) {
        char stem[64];
        snprintf(stem, sizeof stem, "%s_%s", prefix, kinds[i]);
        temp_name(names[i], stem);
    }
    write_text(sp->target, text);
    CHECK(symlink(sp->target, sp->link) == 0);
    CHECK(mkfifo(sp->fifo, 0600) == 0);
    CHECK(mkdir(sp->dir, 0700) == 0);
}

static void remove_special_files(const struct special_files *sp)
{
    remove(sp->link);
    remove(sp->target);
    remove(sp->fifo);
    rmdir(sp->dir);
}

/* rename() would replace these with a regular file: a symlink (even to a regular
 * file), a FIFO, a device, a folder. Nothing is touched. */
static void output_refuses_special_files(void)
{
    struct special_files sp;
    make_special_files(&sp, "out", "keep");
    check_output_refused(sp.link, NULL, 0, "is a symbolic link: outputs go only to regular files");
    check_output_refused(sp.fifo, NULL, 0, "is a FIFO (named pipe)");
    check_output_refused(sp.dir, NULL, 0, "is a directory");
    check_output_refused("/dev/null", NULL, 0, "is a device");
    CHECK(!path_writable(sp.link) && !path_writable(sp.fifo) && !path_writable("/dev/null"));
    struct stat st;
    CHECK(lstat(sp.link, &st) == 0 && S_ISLNK(st.st_mode));
    CHECK(file_holds(sp.target, "keep"));
    remove_special_files(&sp);
}

/* The same file under another spelling, a hard link, or a symlink given as the
 * input is still the input; a missing output or a missing input is not. */
static void output_refuses_an_input(void)
{
    char input[NAME_SIZE], spelt[NAME_SIZE + 2], hard[NAME_SIZE], soft[NAME_SIZE],
        fresh[NAME_SIZE], err[ERR_SIZE];
    temp_name(input, "input");
    snprintf(spelt, sizeof spelt, "./%s", input);
    temp_name(hard, "hardlink");
    temp_name(soft, "softlink");
    temp_name(fresh, "fresh");
    write_text(input, "precious");
    CHECK(link(input, hard) == 0);
    CHECK(symlink(input, soft) == 0);
    struct file_arg inputs[] = {{"--bias", NULL}, {"--weights", "no-such-weights"},
                                {"--input", input}};
    size_t count = sizeof inputs / sizeof inputs[0];
    char what[ERR_SIZE];
    snprintf(what, sizeof what, "is the same file as --input %s: writing would destroy", input);
    check_output_refused(input, inputs, count, what);
    check_output_refused(spelt, inputs, count, what);
    check_output_refused(hard, inputs, count, what);
    inputs[2].path = soft; /* the input named through a symlink */
    check_output_refused(input, inputs, count, "is the same file as --input");
    CHECK(same_file(input, soft) && same_file(spelt, hard) && !same_file(input, fresh));
    struct file_arg out = {"--output", fresh};
    CHECK(output_path_check(out, inputs, count, err, sizeof err));
    CHECK(file_holds(input, "precious"));
    remove(input);
    remove(hard);
    remove(soft);
}

/* What fails only at the end of a run is checked up front: a name too long for the
 * temporary suffix, a missing folder, a folder of the kernel's. */
static void output_checks_name_and_folder(void)
{
    char name[NAME_MAX + 1], err[ERR_SIZE];
    memset(name, 'n', NAME_MAX - 5);
    name[NAME_MAX - 5] = '\0';
    check_output_refused(name, NULL, 0, "the file name is 250 bytes: at most 255 fit, less 11");
    struct file_arg csv = {"--csv", name};
    CHECK(append_path_check(csv, NULL, 0, err, sizeof err)); /* appended in place: fits */
    check_output_refused("no-such-folder-for-test_fileutil/out.npy", NULL, 0,
                         "folder no-such-folder-for-test_fileutil: does not exist");
    check_output_refused("", NULL, 0, "an empty name is not a file name");
    check_output_refused("out/", NULL, 0, "names a folder");
    /* Not writable for a user; for root, refused as the kernel's file system. */
    struct file_arg proc = {"--output", "/proc/out.npy"};
    CHECK(!output_path_check(proc, NULL, 0, err, sizeof err));
    CHECK(strstr(err, "--output /proc/out.npy: folder /proc ") == err);
    CHECK(strstr(err, "not writable") || strstr(err, "the kernel's proc file system"));
    check_output_refused("/proc/self/comm", NULL, 0, "folder /proc/self ");
}

/* The temporary name is random and created exclusively: a symlink planted at the
 * name the old code used (<out>.tmp.<pid>) is neither followed nor replaced. */
static void temp_file_is_exclusive_and_random(void)
{
    char name[NAME_SIZE], victim[NAME_SIZE], planted[TMP_SIZE], tmp_a[TMP_SIZE], tmp_b[TMP_SIZE];
    temp_name(name, "exclusive");
    temp_name(victim, "victim");
    write_text(victim, "victim");
    snprintf(planted, sizeof planted, "%s.tmp.%ld", name, (long)getpid());
    CHECK(symlink(victim, planted) == 0);
    FILE *a = atomic_open(name, tmp_a, sizeof tmp_a);
    FILE *b = atomic_open(name, tmp_b, sizeof tmp_b);
    CHECK(a != NULL && b != NULL);
    CHECK(strcmp(tmp_a, tmp_b) != 0 && strcmp(tmp_a, planted) != 0);
    if (a) {
        fputs("new", a);
        CHECK(atomic_commit(a, tmp_a, name));
    }
    atomic_abort(b, tmp_b);
    CHECK(file_holds(name, "new") && file_holds(victim, "victim"));
    struct stat st;
    CHECK(lstat(planted, &st) == 0 && S_ISLNK(st.st_mode));
    CHECK(temp_files_left(name) == 1); /* the planted link only */
    remove(planted);
    remove(victim);
    remove(name);
}

/* A FIFO that appears at the output during the run is not replaced by the rename. */
static void commit_refuses_a_special_target(void)
{
    char name[NAME_SIZE], tmp[TMP_SIZE];
    FILE *f = open_atomic("late_fifo", name, tmp);
    CHECK(mkfifo(name, 0600) == 0);
    if (f) {
        fputs("data", f);
        CHECK(!atomic_commit(f, tmp, name));
    }
    struct stat st;
    CHECK(lstat(name, &st) == 0 && S_ISFIFO(st.st_mode));
    CHECK(temp_files_left(name) == 0);
    remove(name);
}

/* The output gets a new file's usual permissions, or keeps those of the file it
 * replaces: not the temporary file's private 0600. */
static void output_keeps_usual_permissions(void)
{
    char name[NAME_SIZE], tmp[TMP_SIZE];
    temp_name(name, "mode");
    mode_t old_mask = umask(022);
    struct stat st;
    FILE *f = atomic_open(name, tmp, sizeof tmp);
    CHECK(f != NULL && atomic_commit(f, tmp, name));
    CHECK(stat(name, &st) == 0 && (st.st_mode & 0777) == 0644);
    CHECK(chmod(name, 0640) == 0);
    f = atomic_open(name, tmp, sizeof tmp);
    CHECK(f != NULL && atomic_commit(f, tmp, name));
    CHECK(stat(name, &st) == 0 && (st.st_mode & 0777) == 0640);
    umask(old_mask);
    remove(name);
}

static void append_writes_the_header_once(void)
{
    char name[NAME_SIZE], err[ERR_SIZE];
    temp_name(name, "csv");
    CHECK(append_line(name, "a,b", "1,2", err, sizeof err));
    CHECK(append_line(name, "a,b", "3,4\n", err, sizeof err)); /* its own '\n' is kept */
    CHECK(file_holds(name, "a,b\n1,2\n3,4\n"));
    write_text(name, ""); /* an empty file gets the header too */
    CHECK(append_line(name, "a,b", "5,6", err, sizeof err));
    CHECK(file_holds(name, "a,b\n5,6\n"));
    remove(name);
}

/* A row cut off by a full disk (here the file size limit) is taken back whole:
 * the file ends where it did, and the error is one line. */
static void append_is_a_whole_row_or_nothing(void)
{
    char name[NAME_SIZE], err[ERR_SIZE] = "";
    temp_name(name, "full");
    write_text(name, "a,b\n1,2\n");
    struct rlimit saved, limit;
    CHECK(getrlimit(RLIMIT_FSIZE, &saved) == 0);
    limit = saved;
    limit.rlim_cur = strlen("a,b\n1,2\n") + 3; /* room for part of the row only */
    void (*handler)(int) = signal(SIGXFSZ, SIG_IGN);
    CHECK(setrlimit(RLIMIT_FSIZE, &limit) == 0);
    bool ok = append_line(name, "a,b", "333333,444444", err, sizeof err);
    setrlimit(RLIMIT_FSIZE, &saved);
    signal(SIGXFSZ, handler);
    CHECK(!ok);
    CHECK(file_holds(name, "a,b\n1,2\n"));
    CHECK(strstr(err, name) == err && strstr(err, "cannot append a row: File too large"));
    CHECK(strchr(err, '\n') == NULL);
    remove(name);
}

/* A last row left without its newline (a crash of an older version) is ended
 * first, so the new row stays a row of its own. */
static void append_ends_a_torn_row(void)
{
    char name[NAME_SIZE], err[ERR_SIZE];
    temp_name(name, "torn");
    write_text(name, "a,b\n1,");
    CHECK(append_line(name, "a,b", "3,4", err, sizeof err));
    CHECK(file_holds(name, "a,b\n1,\n3,4\n"));
    remove(name);
}

/* Only a regular file is appended to: a symlink, a FIFO with no reader (at once,
 * not blocking), a folder or a device is refused and left alone. */
static void append_refuses_special_files(void)
{
    char err[ERR_SIZE];
    struct special_files sp;
    make_special_files(&sp, "csv", "keep\n");
    CHECK(!append_line(sp.link, "h", "row", err, sizeof err));
    CHECK(strstr(err, "is a symbolic link, not a regular file") != NULL);
    alarm(HANG_SECONDS);
    CHECK(!append_line(sp.fifo, "h", "row", err, sizeof err));
    alarm(0);
    CHECK(strstr(err, "is a FIFO (named pipe), not a regular file") != NULL);
    CHECK(!append_line(sp.dir, "h", "row", err, sizeof err));
    CHECK(strstr(err, "is a directory, not a regular file") != NULL);
    CHECK(!append_line("/dev/null", "h", "row", err, sizeof err));
    CHECK(strstr(err, "/dev/null: is a device, not a regular file") == err);
    CHECK(file_holds(sp.target, "keep\n"));
    remove_special_files(&sp);
}

/* A new CSV whose first row cannot be written (a full disk; here a file size limit
 * of 0, so write() fails with EFBIG) is removed again: no empty file is left behind.
 * A file that was there before, even empty, stays. */
static void append_leaves_no_new_file_on_failure(void)
{
    char name[NAME_SIZE], old[NAME_SIZE], err[ERR_SIZE] = "";
    temp_name(name, "new_full");
    temp_name(old, "old_empty");
    write_text(old, "");
    struct rlimit saved, limit;
    CHECK(getrlimit(RLIMIT_FSIZE, &saved) == 0);
    limit = saved;
    limit.rlim_cur = 0;
    void (*handler)(int) = signal(SIGXFSZ, SIG_IGN);
    CHECK(setrlimit(RLIMIT_FSIZE, &limit) == 0);
    bool new_ok = append_line(name, "a,b", "1,2", err, sizeof err);
    bool old_ok = append_line(old, "a,b", "1,2", err, sizeof err);
    setrlimit(RLIMIT_FSIZE, &saved);
    signal(SIGXFSZ, handler);
    CHECK(!new_ok && !old_ok);
    CHECK(!exists(name));
    CHECK(exists(old) && file_holds(old, ""));
    CHECK(strstr(err, "cannot append a row: File too large") != NULL);
    remove(name);
    remove(old);
}

/* In a child, as a user whom permissions bind (root drops to nobody): a CSV that
 * exists is appended to in a read-only folder, where a new CSV or a replaced output
 * (its temporary file) are refused. Exits 0, 1 (a check failed) or CHILD_SKIPPED. */
static void read_only_folder_checks(const char *dir, const char *csv, const char *fresh)
{
    if (geteuid() == 0 && (setgid(NOBODY) != 0 || setuid(NOBODY) != 0))
        _exit(CHILD_SKIPPED);
    if (access(dir, X_OK) != 0) /* the build folder is closed to nobody */
        _exit(CHILD_SKIPPED);
    char err[ERR_SIZE] = "";
    struct file_arg existing = {"--csv", csv}, new_csv = {"--csv", fresh},
                    output = {"--output", csv};
    CHECK(append_path_check(existing, NULL, 0, err, sizeof err));
    if (*err)
        fprintf(stderr, "  error was: %s\n", err);
    CHECK(append_line(csv, "a,b", "1,2", err, sizeof err));
    CHECK(!append_path_check(new_csv, NULL, 0, err, sizeof err));
    CHECK(strstr(err, "is not writable") != NULL);
    CHECK(!output_path_check(output, NULL, 0, err, sizeof err));
    CHECK(strstr(err, "is not writable") != NULL);
    _exit(unit_failures ? 1 : 0);
}

static void append_in_a_read_only_folder(void)
{
    char dir[NAME_SIZE], csv[2 * NAME_SIZE], fresh[2 * NAME_SIZE];
    temp_name(dir, "read_only");
    snprintf(csv, sizeof csv, "%s/rows.csv", dir);
    snprintf(fresh, sizeof fresh, "%s/new.csv", dir);
    CHECK(mkdir(dir, 0755) == 0);
    write_text(csv, "");
    CHECK(chmod(csv, 0666) == 0 && chmod(dir, 0555) == 0);
    fflush(stdout);
    fflush(stderr);
    const pid_t pid = fork();
    if (pid == 0)
        read_only_folder_checks(dir, csv, fresh);
    int status = 0;
    CHECK(pid > 0 && waitpid(pid, &status, 0) == pid && WIFEXITED(status));
    if (WIFEXITED(status) && WEXITSTATUS(status) == CHILD_SKIPPED)
        printf("skipped: running as root, and the checks could not run as user %d\n", NOBODY);
    else
        CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0 && file_holds(csv, "a,b\n1,2\n"));
    CHECK(!exists(fresh));
    chmod(dir, 0755);
    remove(csv);
    rmdir(dir);
}

/* A run stopped by a signal while an output is being written (Ctrl-C, kill) leaves no
 * temporary file, and dies of that signal: its status says so, not an exit code. */
static void check_interrupted_write(int sig)
{
    char name[NAME_SIZE];
    temp_name(name, sig == SIGINT ? "sigint" : "sigterm");
    int ready[2];
    CHECK(pipe(ready) == 0);
    fflush(stdout);
    fflush(stderr);
    const pid_t pid = fork();
    if (pid == 0) {
        char tmp[TMP_SIZE];
        alarm(HANG_SECONDS); /* never outlives a parent that failed to signal */
        FILE *f = atomic_open(name, tmp, sizeof tmp);
        if (!f)
            _exit(1);
        fputs("half an output", f);
        fflush(f);
        if (write(ready[1], "r", 1) != 1)
            _exit(1);
        for (;;)
            pause();
    }
    close(ready[1]);
    char byte;
    const bool started = pid > 0 && read(ready[0], &byte, 1) == 1;
    close(ready[0]);
    CHECK(started);
    if (pid <= 0)
        return;
    if (started)
        CHECK(temp_files_left(name) == 1); /* there while the write goes on */
    kill(pid, started ? sig : SIGKILL);
    int status = 0;
    CHECK(waitpid(pid, &status, 0) == pid);
    CHECK(WIFSIGNALED(status) && WTERMSIG(status) == sig);
    CHECK(temp_files_left(name) == 0);
    CHECK(!exists(name));
}

static void interrupted_write_leaves_no_temp_file(void)
{
    check_interrupted_write(SIGTERM);
    check_interrupted_write(SIGINT);
}

/* The handlers are there only while a temporary file is: after commit or abort each
 * signal does what it did before, and one the process ignores stays ignored. */
static void signal_handlers_come_and_go(void)
{
    char name[NAME_SIZE], tmp[TMP_SIZE];
    struct sigaction before, during, after;
    void (*hup)(int) = signal(SIGHUP, SIG_IGN);
    CHECK(sigaction(SIGTERM, NULL, &before) == 0);
    FILE *f = open_atomic("handlers", name, tmp);
    CHECK(sigaction(SIGTERM, NULL, &during) == 0 && during.sa_handler != before.sa_handler);
    CHECK(sigaction(SIGHUP, NULL, &during) == 0 && during.sa_handler == SIG_IGN);
    if (f)
        CHECK(atomic_commit(f, tmp, name));
    CHECK(sigaction(SIGTERM, NULL, &after) == 0 && after.sa_handler == before.sa_handler);
    f = open_atomic("handlers", name, tmp);
    atomic_abort(f, tmp);
    CHECK(sigaction(SIGTERM, NULL, &after) == 0 && after.sa_handler == before.sa_handler);
    signal(SIGHUP, hup);
    CHECK(temp_files_left(name) == 0);
    remove(name);
}

/* Two outputs are one file when they are one name, one existing file, or one new name
 * in one folder spelt two ways. */
static void same_output_by_name_or_file(void)
{
    char name[NAME_SIZE], spelt[NAME_SIZE + 2], hard[NAME_SIZE], other[NAME_SIZE];
    temp_name(name, "same");
    snprintf(spelt, sizeof spelt, "./%s", name);
    temp_name(hard, "same_link");
    temp_name(other, "other");
    CHECK(same_output(name, name) && same_output(name, spelt)); /* neither exists */
    CHECK(!same_output(name, other) && !same_output(name, "no-such-folder/x"));
    write_text(name, "x");
    CHECK(link(name, hard) == 0);
    CHECK(same_output(hard, spelt) && !same_output(name, other));
    remove(hard);
    remove(name);
}

static const struct unit_case cases[] = {
    {"temp_path_writable", temp_path_writable},
    {"missing_folder_not_writable", missing_folder_not_writable},
    {"directory_not_writable", directory_not_writable},
    {"atomic_abort_leaves_nothing", atomic_abort_leaves_nothing},
    {"atomic_commit_replaces_old_file", atomic_commit_replaces_old_file},
    {"atomic_commit_failure_removes_temp", atomic_commit_failure_removes_temp},
    {"atomic_open_rejects_long_path", atomic_open_rejects_long_path},
    {"input_must_be_a_regular_file", input_must_be_a_regular_file},
    {"output_refuses_special_files", output_refuses_special_files},
    {"output_refuses_an_input", output_refuses_an_input},
    {"output_checks_name_and_folder", output_checks_name_and_folder},
    {"temp_file_is_exclusive_and_random", temp_file_is_exclusive_and_random},
    {"commit_refuses_a_special_target", commit_refuses_a_special_target},
    {"output_keeps_usual_permissions", output_keeps_usual_permissions},
    {"append_writes_the_header_once", append_writes_the_header_once},
    {"append_is_a_whole_row_or_nothing", append_is_a_whole_row_or_nothing},
    {"append_ends_a_torn_row", append_ends_a_torn_row},
    {"append_refuses_special_files", append_refuses_special_files},
    {"append_leaves_no_new_file_on_failure", append_leaves_no_new_file_on_failure},
    {"append_in_a_read_only_folder", append_in_a_read_only_folder},
    {"interrupted_write_leaves_no_temp_file", interrupted_write_leaves_no_temp_file},
    {"signal_handlers_come_and_go", signal_handlers_come_and_go},
    {"same_output_by_name_or_file", same_output_by_name_or_file},
};

UNIT_MAIN(cases)
