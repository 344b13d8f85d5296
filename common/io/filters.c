/* Filters for image mode: a few classic named ones and any square filter read from
 * a text file. Taps are applied as cross-correlation (conv_problem.h), so they are
 * listed as they land on the image: sobel-x is positive where brightness rises to
 * the right. */
#define _POSIX_C_SOURCE 200809L /* getline */

#include "filters.h"

#include <errno.h>
#include <float.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "conv_problem.h"
#include "escape.h"
#include "fileutil.h"

#define NAMED_FILTERS "box, gaussian, sobel-x, sobel-y, laplacian, sharpen"
#define FIXED_KSIZE 3
#define FIXED_TAPS (FIXED_KSIZE * FIXED_KSIZE)
/* sigma = ksize / 6 puts the filter's edge at 3 sigma (the cut-off tails hold
 * under 0.3% of the weight); the floor keeps a 3x3 or smaller gaussian a blur
 * instead of nearly the identity. */
#define GAUSSIAN_SIGMAS_PER_KSIZE 6.0
#define GAUSSIAN_MIN_SIGMA 0.5
#define FILE_SEPARATORS " \t,\r\n"

struct fixed_filter {
    const char *name;
    float taps[FIXED_TAPS];
};

static const struct fixed_filter FIXED_FILTERS[] = {
    {"sobel-x", {-1, 0, 1, -2, 0, 2, -1, 0, 1}},  /* [1 2 1]^T smoothing x [-1 0 1] gradient */
    {"sobel-y", {-1, -2, -1, 0, 0, 0, 1, 2, 1}},  /* the transpose: rising downwards */
    {"laplacian", {0, 1, 0, 1, -4, 1, 0, 1, 0}},  /* 4-neighbour; sums to 0: flat areas go black */
    {"sharpen", {0, -1, 0, -1, 5, -1, 0, -1, 0}}, /* identity minus laplacian; sums to 1 */
};

const char *filter_names(void)
{
    return NAMED_FILTERS ", or a text file";
}

/* Errors quote the spec and the file's text: escaped, so they stay one line. */
static bool fail(char *err, size_t err_size, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    escape_vformat(err, err_size, fmt, ap);
    va_end(ap);
    return false;
}

static bool ksize_valid(int ksize)
{
    return ksize >= 1 && ksize <= MAX_KSIZE && ksize % 2 == 1;
}

static void box_taps(int ksize, float *taps)
{
    for (int i = 0; i < ksize * ksize; i++)
        taps[i] = 1.0f / (float)(ksize * ksize);
}

/* The outer product of one normalised 1-D gaussian with itself: separable (rank 1)
 * by construction and summing to 1. */
static void gaussian_taps(int ksize, float *taps)
{
    double sigma = fmax(ksize / GAUSSIAN_SIGMAS_PER_KSIZE, GAUSSIAN_MIN_SIGMA);
    double g[MAX_KSIZE], sum = 0.0;
    int r = ksize / 2;
    for (int i = 0; i < ksize; i++) {
        double x = i - r;
        g[i] = exp(-x * x / (2.0 * sigma * sigma));
        sum += g[i];
    }
    for (int i = 0; i < ksize; i++)
        for (int j = 0; j < ksize; j++)
            taps[i * ksize + j] = (float)(g[i] / sum * (g[j] / sum));
}

/* Splits one line into numbers; a '#' ends the line. Returns the count, or -1 with
 * err set. */
static int parse_row(char *line, const char *path, int line_no, float *row, char *err,
                     size_t err_size)
{
    char *hash = strchr(line, '#');
    if (hash)
        *hash = '\0';
    int n = 0;
    char *p = line + strspn(line, FILE_SEPARATORS);
    while (*p) {
        size_t len = strcspn(p, FILE_SEPARATORS);
        char *end;
        errno = 0;
        double v = strtod(p, &end);
        if (end != p + len || len == 0) {
            fail(err, err_size, "%s:%d: '%.*s' is not a number", path, line_no, (int)len, p);
            return -1;
        }
        if (errno == ERANGE || !isfinite(v) || fabs(v) > FLT_MAX) {
            fail(err, err_size, "%s:%d: '%.*s' is not a finite float", path, line_no, (int)len, p);
            return -1;
        }
        if (n == MAX_KSIZE) {
            fail(err, err_size, "%s:%d: more than %d numbers in a row (largest filter: %dx%d)",
                 path, line_no, MAX_KSIZE, MAX_KSIZE, MAX_KSIZE);
            return -1;
        }
        row[n++] = (float)v;
        p += len;
        p += strspn(p, FILE_SEPARATORS);
    }
    return n;
}

/* ksize lines of ksize numbers; blank lines and '#' comments are skipped. */
static bool read_filter_file(const char *path, int *ksize, float *taps, char *err,
                             size_t err_size)
{
    FILE *f = open_input_file(path, FILTER_FILE_MAX_BYTES, err, err_size);
    if (!f && errno == ENOENT)
        return fail(err, err_size,
                    "'%s' is not a filter name (" NAMED_FILTERS ") nor a readable file: %s", path,
                    strerror(ENOENT));
    if (!f)
        return false;
    float file_taps[MAX_KSIZE * MAX_KSIZE];
    float row[MAX_KSIZE];
    int rows = 0, cols = 0, line_no = 0;
    char *line = NULL;
    size_t cap = 0, total = 0;
    ssize_t len;
    bool ok = true;
    while (ok && (len = getline(&line, &cap, f)) != -1) {
        line_no++;
        total += (size_t)len;
        if (total > FILTER_FILE_MAX_BYTES) { /* /proc files report size 0, or it grew */
            ok = fail(err, err_size, "%s: more than %d bytes: not a filter file", path,
                      FILTER_FILE_MAX_BYTES);
            break;
        }
        int n = parse_row(line, path, line_no, row, err, err_size);
        if (n < 0) {
            ok = false;
        } else if (n == 0) {
            continue;
        } else if (rows > 0 && n != cols) {
            ok = fail(err, err_size, "%s:%d: %d numbers, but the first row has %d", path, line_no,
                      n, cols);
        } else if (rows > 0 && rows == cols) {
            ok = fail(err, err_size, "%s:%d: row %d of a filter %d wide: a filter is square", path,
                      line_no, rows + 1, cols);
        } else {
            cols = n;
            memcpy(file_taps + rows * cols, row, sizeof row[0] * (size_t)n);
            rows++;
        }
    }
    if (ok && ferror(f))
        ok = fail(err, err_size, "%s: cannot read: %s", path, strerror(errno));
    free(line);
    fclose(f);
    if (!ok)
        return false;
    if (rows == 0)
        return fail(err, err_size, "%s: no numbers: expected ksize lines of ksize numbers", path);
    if (rows != cols)
        return fail(err, err_size, "%s:%d: the file ends after %d rows of %d: a filter is square",
                    path, line_no, rows, cols);
    if (!ksize_valid(cols))
        return fail(err, err_size, "%s:%d: the filter is %dx%d: its size must be odd, 1 to %d",
                    path, line_no, rows, cols, MAX_KSIZE);
    memcpy(taps, file_taps, sizeof file_taps[0] * (size_t)(rows * cols));
    *ksize = cols;
    return true;
}

static const struct fixed_filter *find_fixed_filter(const char *spec)
{
    for (size_t i = 0; i < sizeof FIXED_FILTERS / sizeof FIXED_FILTERS[0]; i++)
        if (strcmp(spec, FIXED_FILTERS[i].name) == 0)
            return &FIXED_FILTERS[i];
    return NULL;
}

static bool is_sized_filter(const char *spec)
{
    return strcmp(spec, "box") == 0 || strcmp(spec, "gaussian") == 0;
}

bool filter_spec_is_file(const char *spec)
{
    return !find_fixed_filter(spec) && !is_sized_filter(spec);
}

bool filter_from_spec(const char *spec, int *ksize, float *taps, char *err, size_t err_size)
{
    const struct fixed_filter *fixed = find_fixed_filter(spec);
    if (fixed) {
        /* The size comes from --ksize or from a preset: say what clashes, and leave
         * which flag to change to the caller, who knows. */
        if (*ksize != FIXED_KSIZE)
            return fail(err, err_size, "'%s' is %dx%d only, but the problem's filter is %dx%d",
                        spec, FIXED_KSIZE, FIXED_KSIZE, *ksize, *ksize);
        memcpy(taps, fixed->taps, sizeof fixed->taps);
        return true;
    }
    if (is_sized_filter(spec)) {
        if (!ksize_valid(*ksize))
            return fail(err, err_size, "--ksize %d: '%s' needs an odd size from 1 to %d", *ksize,
                        spec, MAX_KSIZE);
        if (strcmp(spec, "box") == 0)
            box_taps(*ksize, taps);
        else
            gaussian_taps(*ksize, taps);
        return true;
    }
    return read_filter_file(spec, ksize, taps, err, err_size);
}
