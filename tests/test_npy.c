/* The .npy reader and writer: round trips, NumPy's 64-byte data alignment, and a
 * clear error naming the file for every way a header can lie or a file be wrong.
 * Files are created in the working directory under names carrying the process id. */
#define _POSIX_C_SOURCE 200809L

#include <math.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include "bad_files.h"
#include "npy.h"
#include "temp_files.h"
#include "unit.h"

#define NAME_SIZE 256
#define HANG_SECONDS 5 /* alarm() turns a blocking open into a failed test */
#define ERR_SIZE 512
#define ALIGN 64
#define FSIZE_LIMIT 4096 /* bytes a process may write to one file in the full-disk test */

static void temp_name(char *name, const char *stem)
{
    snprintf(name, NAME_SIZE, "test_npy_%s.%ld.npy", stem, (long)getpid());
}

static bool exists(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0;
}

/* Writes a .npy file by hand: any version, any header dict (dict_len bytes, NULs
 * included), any data bytes. */
static void write_raw_dict(const char *path, int major, const char *dict, size_t dict_len,
                           const void *data, size_t data_bytes)
{
    size_t prefix = major == 1 ? 10 : 12;
    size_t unpadded = prefix + dict_len + 1;
    size_t header_len = dict_len + (ALIGN - unpadded % ALIGN) % ALIGN + 1;
    FILE *f = fopen(path, "wb");
    CHECK(f != NULL);
    if (!f)
        return;
    fwrite("\x93NUMPY", 1, 6, f);
    fputc(major, f);
    fputc(0, f);
    for (size_t i = 0; i < prefix - 8; i++)
        fputc((int)(header_len >> (8 * i) & 0xff), f);
    fwrite(dict, 1, dict_len, f);
    for (size_t i = dict_len + 1; i < header_len; i++)
        fputc(' ', f);
    fputc('\n', f);
    fwrite(data, 1, data_bytes, f);
    fclose(f);
}

static void write_raw(const char *path, int major, const char *dict, const void *data,
                      size_t data_bytes)
{
    write_raw_dict(path, major, dict, strlen(dict), data, data_bytes);
}

/* npy_read must fail, name the file, say `what`, and leave no data behind. */
static void check_rejected(const char *path, const char *what)
{
    struct npy_array a;
    char err[ERR_SIZE] = "";
    const bool ok = npy_read(path, &a, err, sizeof err);
    check_refused(ok, err, path, what, a.data);
    /* The header alone: the same line, unless what is wrong is a value. */
    int ndim;
    size_t shape[NPY_MAX_DIMS];
    char shape_err[ERR_SIZE] = "";
    if (npy_read_shape(path, &ndim, shape, shape_err, sizeof shape_err))
        CHECK(strstr(err, "inputs must be finite numbers") != NULL);
    else
        CHECK(strcmp(shape_err, err) == 0);
}

static void check_round_trip(const char *stem, int ndim, const size_t *shape)
{
    char name[NAME_SIZE], err[ERR_SIZE];
    temp_name(name, stem);
    size_t count = 1;
    for (int i = 0; i < ndim; i++)
        count *= shape[i];
    float *data = malloc(count * sizeof(float));
    for (size_t i = 0; i < count; i++)
        data[i] = (float)i * 0.37f - 5.0f;
    if (count > 1) {
        data[0] = -0.0f;
        data[1] = 3.4e38f;
    }
    CHECK(npy_write(name, data, ndim, shape, err, sizeof err));

    struct npy_array a;
    CHECK(npy_read(name, &a, err, sizeof err));
    CHECK(a.ndim == ndim);
    CHECK(a.count == count);
    for (int i = 0; i < ndim; i++)
        CHECK(a.shape[i] == shape[i]);
    CHECK(a.data != NULL && memcmp(a.data, data, count * sizeof(float)) == 0);
    npy_free(&a);
    CHECK(a.data == NULL && a.count == 0);
    int header_ndim = -1;
    size_t header_shape[NPY_MAX_DIMS];
    CHECK(npy_read_shape(name, &header_ndim, header_shape, err, sizeof err));
    CHECK(header_ndim == ndim);
    for (int i = 0; i < ndim && header_ndim == ndim; i++)
        CHECK(header_shape[i] == shape[i]);
    free(data);
    remove(name);
}

static void round_trip_1d(void)
{
    size_t shape[] = {5};
    check_round_trip("1d", 1, shape);
}

static void round_trip_2d(void)
{
    size_t shape[] = {3, 4};
    check_round_trip("2d", 2, shape);
}

static void round_trip_4d(void)
{
    size_t shape[] = {2, 3, 5, 7};
    check_round_trip("4d", 4, shape);
}

static void round_trip_scalar_and_empty(void)
{
    check_round_trip("0d", 0, NULL);
    char name[NAME_SIZE], err[ERR_SIZE];
    temp_name(name, "empty");
    size_t shape[] = {0, 3};
    CHECK(npy_write(name, NULL, 2, shape, err, sizeof err));
    struct npy_array a;
    CHECK(npy_read(name, &a, err, sizeof err));
    CHECK(a.ndim == 2 && a.shape[0] == 0 && a.shape[1] == 3 && a.count == 0 && a.data == NULL);
    npy_free(&a);
    remove(name);
}

static void data_offset_aligned(void)
{
    size_t shapes[][NPY_MAX_DIMS] = {{7}, {3, 4}, {123456, 7, 8}, {1, 2, 3, 4, 5, 6, 7, 8}};
    int ndims[] = {1, 2, 3, 8};
    char name[NAME_SIZE], err[ERR_SIZE];
    temp_name(name, "align");
    float *zeros = calloc(123456 * 7 * 8, sizeof(float));
    for (int s = 0; s < 4; s++) {
        CHECK(npy_write(name, zeros, ndims[s], shapes[s], err, sizeof err));
        unsigned char head[ALIGN * 2];
        FILE *f = fopen(name, "rb");
        CHECK(f != NULL);
        if (!f)
            break;
        size_t got = fread(head, 1, sizeof head, f);
        fseek(f, 0, SEEK_END);
        long size = ftell(f);
        fclose(f);
        CHECK(got >= 10 && memcmp(head, "\x93NUMPY\x01\x00", 8) == 0);
        size_t header_len = head[8] | (size_t)head[9] << 8;
        size_t data_start = 10 + header_len;
        CHECK(data_start % ALIGN == 0);
        CHECK(data_start <= got && head[data_start - 1] == '\n');
        const char *dict_start = "{'descr': '<f4', 'fortran_order': False, 'shape': (";
        CHECK(memcmp(head + 10, dict_start, strlen(dict_start)) == 0);
        size_t count = 1;
        for (int i = 0; i < ndims[s]; i++)
            count *= shapes[s][i];
        CHECK((size_t)size == data_start + count * sizeof(float));
    }
    free(zeros);
    remove(name);
}

static void reads_v2_header(void)
{
    char name[NAME_SIZE], err[ERR_SIZE];
    temp_name(name, "v2");
    float data[6] = {1, 2, 3, 4, 5, 6};
    /* Keys in another order, double quotes, no trailing comma: still a valid dict. */
    write_raw(name, 2, "{'shape': (2, 3), \"fortran_order\": False, 'descr': '<f4'}", data,
              sizeof data);
    struct npy_array a;
    CHECK(npy_read(name, &a, err, sizeof err));
    CHECK(a.ndim == 2 && a.shape[0] == 2 && a.shape[1] == 3 && a.count == 6);
    CHECK(a.data && memcmp(a.data, data, sizeof data) == 0);
    npy_free(&a);
    write_raw(name, 3, "{'descr': '<f4', 'fortran_order': False, 'shape': (6,), }", data,
              sizeof data);
    CHECK(npy_read(name, &a, err, sizeof err));
    CHECK(a.ndim == 1 && a.shape[0] == 6 && a.data && a.data[5] == 6.0f);
    npy_free(&a);
    remove(name);
}

static void rejects_bad_magic(void)
{
    char name[NAME_SIZE];
    temp_name(name, "magic");
    write_text(name, "PK\x03\x04 this is a zip file, not an npy");
    check_rejected(name, "bad magic");
    remove(name);
}

/* Headers the reader must refuse, grouped by the case that writes them (the group
 * names the file): the format version, the header dict's three values, how many zero
 * bytes of data follow, and a part of the error line. */
static const struct bad_npy {
    const char *group;
    int major;
    const char *descr, *fortran_order, *shape;
    size_t data_bytes;
    const char *what;
} bad_npys[] = {
    {"version", 4, "<f4", "False", "(2,)", 2 * sizeof(float), "version 4.0"},
    {"f8", 1, "<f8", "False", "(4,)", 4 * sizeof(double),
     "dtype is '<f8', expected '<f4' (float32)"},
    {"f8", 1, "<i4", "False", "(4,)", 4 * sizeof(int32_t), "dtype is '<i4'"},
    {"be", 1, ">f4", "False", "(2, 2)", 4 * sizeof(float), "dtype is '>f4'"},
    {"fortran", 1, "<f4", "True", "(2, 2)", 4 * sizeof(float), "fortran_order is True"},
    {"short", 1, "<f4", "False", "(3, 4)", 11 * sizeof(float),
     "data is 44 bytes but shape (3, 4) needs 48 (file truncated)"},
    /* A header claiming a huge array must fail on length, not try to allocate it. */
    {"short", 1, "<f4", "False", "(100000, 100000, 100)", 12 * sizeof(float), "file truncated"},
    {"long", 1, "<f4", "False", "(3, 4)", 13 * sizeof(float), "header does not match data"},
    {"shape", 1, "<f4", "False", "(1, 1, 1, 1, 1, 1, 1, 1, 1)", sizeof(float),
     "more than 8 dimensions"},
    {"shape", 1, "<f4", "False", "(4294967296, 4294967296)", sizeof(float), "too many elements"},
    {"shape", 1, "<f4", "False", "(99999999999999999999999,)", sizeof(float), "too large"},
};

static void check_bad_npy(const char *name, size_t row)
{
    static const float zeros[16];
    const struct bad_npy *b = &bad_npys[row];
    char dict[ERR_SIZE];
    snprintf(dict, sizeof dict, "{'descr': '%s', 'fortran_order': %s, 'shape': %s, }", b->descr,
             b->fortran_order, b->shape);
    CHECK(b->data_bytes <= sizeof zeros);
    write_raw(name, b->major, dict, zeros, b->data_bytes);
    check_rejected(name, b->what);
}

/* Writes the group's bad files in turn to one name; each must be rejected. */
static void check_bad_npys(const char *group)
{
    char name[NAME_SIZE];
    temp_name(name, group);
    CHECK_BAD_FILES(name, bad_npys, group, check_bad_npy);
}

static void rejects_unsupported_version(void)
{
    check_bad_npys("version");
}

static void rejects_f8_dtype(void)
{
    check_bad_npys("f8");
}

static void rejects_big_endian(void)
{
    check_bad_npys("be");
}

static void rejects_fortran_order(void)
{
    check_bad_npys("fortran");
}

static void rejects_truncated_data(void)
{
    check_bad_npys("short");
}

static void rejects_extra_data(void)
{
    check_bad_npys("long");
}

static void rejects_malformed_header(void)
{
    static const char *const dicts[] = {
        "{'descr': '<f4', 'fortran_order': False}",                        /* no shape */
        "{'descr': '<f4', 'fortran_order': False, 'shape': (4,), 'x': 1}", /* unknown key */
        "{'descr': '<f4', 'descr': '<f4', 'fortran_order': False, 'shape': (4,)}",
        "{'descr': '<f4', 'fortran_order': False, 'shape': (4)}", /* an int, not a tuple */
        "{'descr': '<f4', 'fortran_order': False, 'shape': (-4,)}",
        "{'descr': '<f4', 'fortran_order': 0, 'shape': (4,)}",
        "{'descr': '<f4, 'fortran_order': False, 'shape': (4,)}",
        "{'descr': '<f4' 'fortran_order': False, 'shape': (4,)}",
        "{'descr': '<f4', 'fortran_order': False, 'shape': (4,)} trailing",
        "'descr': '<f4', 'fortran_order': False, 'shape': (4,)",
        "{'descr': '<f4', 'fortran_order': False, 'shape': (4,,)}",
    };
    char name[NAME_SIZE];
    temp_name(name, "malformed");
    float data[4] = {0};
    for (size_t i = 0; i < sizeof dicts / sizeof dicts[0]; i++) {
        write_raw(name, 1, dicts[i], data, sizeof data);
        check_rejected(name, "malformed header");
    }
    remove(name);
}

static void rejects_bad_shape(void)
{
    check_bad_npys("shape");
}

static void rejects_missing_file(void)
{
    check_rejected("no-such-file-for-test_npy.npy", "cannot open");
}

static void failed_write_leaves_no_file(void)
{
    char err[ERR_SIZE] = "";
    float data[4] = {1, 2, 3, 4};
    size_t shape[] = {4};
    const char *missing = "no-such-folder-for-test_npy/out.npy";
    CHECK(!npy_write(missing, data, 1, shape, err, sizeof err));
    CHECK(strstr(err, missing) == err);
    CHECK(!exists(missing));

    /* The rename onto a directory fails after the data is written: no temp file
     * may be left behind. */
    char dir[NAME_SIZE];
    temp_name(dir, "dir");
    CHECK(mkdir(dir, 0700) == 0);
    CHECK(!npy_write(dir, data, 1, shape, err, sizeof err));
    CHECK(temp_files_left(dir) == 0);
    rmdir(dir);

    char name[NAME_SIZE];
    temp_name(name, "ndim");
    size_t big[NPY_MAX_DIMS + 1] = {1, 1, 1, 1, 1, 1, 1, 1, 1};
    CHECK(!npy_write(name, data, NPY_MAX_DIMS + 1, big, err, sizeof err));
    CHECK(!exists(name));
}

/* A control byte in the path or the header is shown escaped: the error stays one
 * line and cannot drive the terminal. */
static void errors_are_escaped(void)
{
    char name[NAME_SIZE], err[ERR_SIZE] = "";
    snprintf(name, sizeof name, "test_npy_esc\n\x1b[2J.%ld.npy", (long)getpid());
    float data[4] = {0};
    write_raw(name, 1, "{'descr': '<f4\x1b]0;pwned\x07', 'fortran_order': False, 'shape': (4,), }",
              data, sizeof data);
    struct npy_array a;
    CHECK(!npy_read(name, &a, err, sizeof err));
    CHECK(strstr(err, "test_npy_esc\\n\\x1b[2J.") == err);
    CHECK(strstr(err, "dtype is '<f4\\x1b]0;pwned\\x07'") != NULL);
    CHECK(strchr(err, '\n') == NULL && strchr(err, '\x1b') == NULL && strchr(err, '\a') == NULL);
    remove(name);
}

/* A FIFO is refused at once, not read forever (alarm: a hang fails the test); a
 * folder is named as a folder. */
static void rejects_fifo_and_folder(void)
{
    char name[NAME_SIZE];
    temp_name(name, "fifo");
    CHECK(mkfifo(name, 0600) == 0);
    alarm(HANG_SECONDS);
    check_rejected(name, "is a FIFO (named pipe), not a regular file");
    alarm(0);
    remove(name);
    temp_name(name, "folder");
    CHECK(mkdir(name, 0700) == 0);
    check_rejected(name, "is a directory, not a regular file");
    rmdir(name);
}

/* A symlink planted where the old code put its temporary file (<out>.tmp.<pid>)
 * must not redirect the write to the file it points at. */
static void planted_symlink_is_not_followed(void)
{
    char name[NAME_SIZE], victim[NAME_SIZE], planted[NAME_SIZE + 32], err[ERR_SIZE];
    temp_name(name, "out");
    temp_name(victim, "victim");
    float keep[2] = {7, 7}, data[4] = {1, 2, 3, 4};
    size_t keep_shape[] = {2}, shape[] = {4};
    CHECK(npy_write(victim, keep, 1, keep_shape, err, sizeof err));
    snprintf(planted, sizeof planted, "%s.tmp.%ld", name, (long)getpid());
    CHECK(symlink(victim, planted) == 0);
    CHECK(npy_write(name, data, 1, shape, err, sizeof err));
    struct npy_array a;
    CHECK(npy_read(victim, &a, err, sizeof err) && a.count == 2 && a.data[0] == 7);
    npy_free(&a);
    CHECK(npy_read(name, &a, err, sizeof err) && a.count == 4 && a.data[3] == 4);
    npy_free(&a);
    remove(planted);
    remove(victim);
    remove(name);
}

/* A write that fails part-way (here the file size limit, as a full disk would)
 * leaves the old file as it was and no temporary file. */
static void failed_write_keeps_the_old_file(void)
{
    char name[NAME_SIZE], err[ERR_SIZE] = "";
    temp_name(name, "keep");
    float old[2] = {5, 6};
    size_t old_shape[] = {2}, shape[] = {FSIZE_LIMIT};
    CHECK(npy_write(name, old, 1, old_shape, err, sizeof err));
    float *big = calloc(FSIZE_LIMIT, sizeof(float));
    struct rlimit saved, limit;
    CHECK(getrlimit(RLIMIT_FSIZE, &saved) == 0);
    limit = saved;
    limit.rlim_cur = FSIZE_LIMIT;
    void (*handler)(int) = signal(SIGXFSZ, SIG_IGN);
    CHECK(setrlimit(RLIMIT_FSIZE, &limit) == 0);
    CHECK(!npy_write(name, big, 1, shape, err, sizeof err));
    setrlimit(RLIMIT_FSIZE, &saved);
    signal(SIGXFSZ, handler);
    CHECK(strstr(err, name) == err && strstr(err, "cannot write: File too large") != NULL);
    struct npy_array a;
    CHECK(npy_read(name, &a, err, sizeof err) && a.count == 2 && a.data[1] == 6);
    npy_free(&a);
    CHECK(temp_files_left(name) == 0);
    free(big);
    remove(name);
}

/* '<f4\0>f8' must not be read as '<f4': NumPy refuses a NUL in the header. */
static void rejects_nul_in_header(void)
{
    char name[NAME_SIZE];
    temp_name(name, "nul");
    static const char dict[] = "{'descr': '<f4\0>f8', 'fortran_order': False, 'shape': (2,), }";
    float data[2] = {0};
    write_raw_dict(name, 1, dict, sizeof dict - 1, data, sizeof data);
    check_rejected(name, "header holds a NUL byte at offset 24");
    remove(name);
}

/* NaN or infinity in an input is bad input: the error names the first such element
 * by its index tuple and flat index. */
static void rejects_nan_and_inf(void)
{
    char name[NAME_SIZE], err[ERR_SIZE];
    temp_name(name, "nan");
    float data[24] = {0};
    size_t shape[] = {2, 3, 4};
    data[5] = NAN;
    data[7] = INFINITY;
    CHECK(npy_write(name, data, 3, shape, err, sizeof err));
    check_rejected(name, "element (0, 1, 1) (flat index 5) is NaN: inputs must be finite numbers");
    data[5] = 0;
    data[23] = -INFINITY;
    CHECK(npy_write(name, data, 3, shape, err, sizeof err));
    check_rejected(name, "element (0, 1, 3) (flat index 7) is infinite");
    data[7] = 0;
    CHECK(npy_write(name, data, 3, shape, err, sizeof err));
    check_rejected(name, "element (1, 2, 3) (flat index 23) is infinite");
    size_t flat[] = {24};
    CHECK(npy_write(name, data, 1, flat, err, sizeof err));
    check_rejected(name, "element (23,) (flat index 23)");
    remove(name);
}

static const struct unit_case cases[] = {
    {"round_trip_1d", round_trip_1d},
    {"round_trip_2d", round_trip_2d},
    {"round_trip_4d", round_trip_4d},
    {"round_trip_scalar_and_empty", round_trip_scalar_and_empty},
    {"data_offset_aligned", data_offset_aligned},
    {"reads_v2_header", reads_v2_header},
    {"rejects_bad_magic", rejects_bad_magic},
    {"rejects_unsupported_version", rejects_unsupported_version},
    {"rejects_f8_dtype", rejects_f8_dtype},
    {"rejects_big_endian", rejects_big_endian},
    {"rejects_fortran_order", rejects_fortran_order},
    {"rejects_truncated_data", rejects_truncated_data},
    {"rejects_extra_data", rejects_extra_data},
    {"rejects_malformed_header", rejects_malformed_header},
    {"rejects_bad_shape", rejects_bad_shape},
    {"rejects_missing_file", rejects_missing_file},
    {"failed_write_leaves_no_file", failed_write_leaves_no_file},
    {"errors_are_escaped", errors_are_escaped},
    {"rejects_fifo_and_folder", rejects_fifo_and_folder},
    {"planted_symlink_is_not_followed", planted_symlink_is_not_followed},
    {"failed_write_keeps_the_old_file", failed_write_keeps_the_old_file},
    {"rejects_nul_in_header", rejects_nul_in_header},
    {"rejects_nan_and_inf", rejects_nan_and_inf},
};

UNIT_MAIN(cases)
