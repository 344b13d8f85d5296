/* path_writable and the atomic temp-file-then-rename write. Files are created in the
 * working directory under names that carry the process id, and removed. */
#define _POSIX_C_SOURCE 200809L

#include <errno.h>
#include <stdio.h>
#include <sys/stat.h>
#include <unistd.h>

#include "fileutil.h"
#include "unit.h"

#define NAME_SIZE 256
#define HANG_SECONDS 5 /* alarm() turns a blocking open into a failed test */

static void temp_name(char *name, const char *stem)
{
    snprintf(name, NAME_SIZE, "test_fileutil_%s.%ld.txt", stem, (long)getpid());
}

static bool exists(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0;
}

static void write_text(const char *path, const char *text)
{
    FILE *f = fopen(path, "w");
    CHECK(f != NULL);
    if (f) {
        fputs(text, f);
        fclose(f);
    }
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

static void atomic_abort_leaves_nothing(void)
{
    char name[NAME_SIZE], tmp[NAME_SIZE + 32];
    temp_name(name, "abort");
    FILE *f = atomic_open(name, tmp, sizeof tmp);
    CHECK(f != NULL);
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
    char name[NAME_SIZE], tmp[NAME_SIZE + 32];
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
    char dir[NAME_SIZE], tmp[NAME_SIZE + 32];
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

static const struct unit_case cases[] = {
    {"temp_path_writable", temp_path_writable},
    {"missing_folder_not_writable", missing_folder_not_writable},
    {"directory_not_writable", directory_not_writable},
    {"atomic_abort_leaves_nothing", atomic_abort_leaves_nothing},
    {"atomic_commit_replaces_old_file", atomic_commit_replaces_old_file},
    {"atomic_commit_failure_removes_temp", atomic_commit_failure_removes_temp},
    {"atomic_open_rejects_long_path", atomic_open_rejects_long_path},
    {"input_must_be_a_regular_file", input_must_be_a_regular_file},
};

UNIT_MAIN(cases)
