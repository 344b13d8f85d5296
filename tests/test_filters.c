/* Named filters (exact taps, normalisation, separability) and filter text files,
 * including errors that name the file and line. Files are created in the working
 * directory under names carrying the process id. DATA_DIR (set by CMake) is the
 * folder of the sample data. */
#define _POSIX_C_SOURCE 200809L

#include <math.h>
#include <stdio.h>
#include <sys/stat.h>
#include <unistd.h>

#include "bad_files.h"
#include "conv_problem.h"
#include "filters.h"
#include "temp_files.h"
#include "unit.h"

#define NAME_SIZE 256
#define HANG_SECONDS 5 /* alarm() turns a blocking open into a failed test */
#define ERR_SIZE 512
#define MAX_TAPS (MAX_KSIZE * MAX_KSIZE)
#define SUM_TOL 1e-5
#define UNTOUCHED -7.0f /* marks taps a failed call must leave alone */

static void temp_name(char *name, const char *stem)
{
    snprintf(name, NAME_SIZE, "test_filters_%s.%ld.txt", stem, (long)getpid());
}

static double tap_sum(const float *taps, int ksize)
{
    double s = 0.0;
    for (int i = 0; i < ksize * ksize; i++)
        s += taps[i];
    return s;
}

/* filter_from_spec must fail, say `what`, and leave taps and ksize as they were. */
static void check_rejected(const char *spec, int ksize, const char *what)
{
    float taps[MAX_TAPS];
    for (int i = 0; i < MAX_TAPS; i++)
        taps[i] = UNTOUCHED;
    char err[ERR_SIZE] = "";
    int k = ksize;
    CHECK(!filter_from_spec(spec, &k, taps, err, sizeof err));
    CHECK(k == ksize);
    CHECK(taps[0] == UNTOUCHED && taps[MAX_TAPS - 1] == UNTOUCHED);
    check_error_line(err, "", what);
}

static void box_sums_to_one(void)
{
    const int sizes[] = {1, 3, 5, 31};
    float taps[MAX_TAPS];
    char err[ERR_SIZE];
    for (int s = 0; s < 4; s++) {
        int k = sizes[s];
        CHECK(filter_from_spec("box", &k, taps, err, sizeof err));
        CHECK(k == sizes[s]);
        CHECK(fabs(tap_sum(taps, k) - 1.0) < SUM_TOL);
        for (int i = 0; i < k * k; i++)
            CHECK(taps[i] == taps[0]);
    }
}

static void gaussian_normalised_symmetric_rank1(void)
{
    const int sizes[] = {1, 3, 5, 7, 31};
    float taps[MAX_TAPS];
    char err[ERR_SIZE];
    for (int s = 0; s < 5; s++) {
        int k = sizes[s], c = k / 2;
        CHECK(filter_from_spec("gaussian", &k, taps, err, sizeof err));
        CHECK(fabs(tap_sum(taps, k) - 1.0) < SUM_TOL);
        for (int i = 0; i < k; i++) {
            for (int j = 0; j < k; j++) {
                float t = taps[i * k + j];
                CHECK(t > 0.0f && t <= taps[c * k + c]);
                CHECK(t == taps[j * k + i]);           /* transpose */
                CHECK(t == taps[(k - 1 - i) * k + j]); /* mirror */
                /* Rank 1: t[i][j] t[c][c] = t[i][c] t[c][j] for an outer product. */
                double lhs = (double)t * taps[c * k + c];
                double rhs = (double)taps[i * k + c] * taps[c * k + j];
                CHECK(fabs(lhs - rhs) <= SUM_TOL * rhs);
            }
        }
        if (k > 1) /* a blur: the centre holds less than all of the weight */
            CHECK(taps[c * k + c] < 0.9f);
    }
}

static void sobel_x_taps(void)
{
    const float sobel_x[9] = {-1, 0, 1, -2, 0, 2, -1, 0, 1};
    float taps[MAX_TAPS];
    char err[ERR_SIZE];
    int k = 3;
    CHECK(filter_from_spec("sobel-x", &k, taps, err, sizeof err));
    CHECK(k == 3 && memcmp(taps, sobel_x, sizeof sobel_x) == 0);
    CHECK(filter_from_spec("sobel-y", &k, taps, err, sizeof err));
    for (int i = 0; i < 3; i++)
        for (int j = 0; j < 3; j++)
            CHECK(taps[i * 3 + j] == sobel_x[j * 3 + i]);
}

static void laplacian_sums_to_zero(void)
{
    const float laplacian[9] = {0, 1, 0, 1, -4, 1, 0, 1, 0};
    float taps[MAX_TAPS];
    char err[ERR_SIZE];
    int k = 3;
    CHECK(filter_from_spec("laplacian", &k, taps, err, sizeof err));
    CHECK(memcmp(taps, laplacian, sizeof laplacian) == 0);
    CHECK(tap_sum(taps, k) == 0.0);
    CHECK(filter_from_spec("sharpen", &k, taps, err, sizeof err));
    CHECK(tap_sum(taps, k) == 1.0); /* sharpening keeps flat areas as they are */
}

static void every_listed_name_works(void)
{
    const char *names[] = {"box", "gaussian", "sobel-x", "sobel-y", "laplacian", "sharpen"};
    float taps[MAX_TAPS];
    char err[ERR_SIZE];
    for (int i = 0; i < 6; i++) {
        int k = 3;
        CHECK(strstr(filter_names(), names[i]) != NULL);
        CHECK(filter_from_spec(names[i], &k, taps, err, sizeof err));
    }
    CHECK(strstr(filter_names(), "text file") != NULL);
}

static void rejects_even_ksize(void)
{
    check_rejected("box", 4, "--ksize 4: 'box' needs an odd size from 1 to 31");
    check_rejected("gaussian", 0, "--ksize 0");
    check_rejected("gaussian", -3, "--ksize -3");
    check_rejected("box", MAX_KSIZE + 2, "--ksize 33");
}

static void sobel_needs_ksize_3(void)
{
    /* No flag advised: the size may come from a preset, which --ksize cannot change. */
    check_rejected("sobel-x", 5, "'sobel-x' is 3x3 only, but the problem's filter is 5x5");
    check_rejected("laplacian", 1, "'laplacian' is 3x3 only, but the problem's filter is 1x1");
    check_rejected("sharpen", 4, "'sharpen' is 3x3 only");
}

static void unknown_name_is_a_missing_file(void)
{
    check_rejected("gausian", 3, "'gausian' is not a filter name (box, gaussian");
    check_rejected("gausian", 3, "No such file or directory");
}

static void reads_text_file(void)
{
    char name[NAME_SIZE], err[ERR_SIZE];
    temp_name(name, "good");
    write_text(name, "# a hand-made 3x3 filter\n"
                     "\n"
                     "1, 2, 3   # first row\n"
                     "  -4\t5.5 ,6\n"
                     "\n"
                     "7 8 -9e-1\n"
                     "# the end\n");
    const float expected[9] = {1, 2, 3, -4, 5.5f, 6, 7, 8, -0.9f};
    float taps[MAX_TAPS];
    int k = 7; /* a file sets the size, whatever --ksize said */
    CHECK(filter_from_spec(name, &k, taps, err, sizeof err));
    CHECK(k == 3);
    CHECK(memcmp(taps, expected, sizeof expected) == 0);

    write_text(name, "2.5\n");
    CHECK(filter_from_spec(name, &k, taps, err, sizeof err));
    CHECK(k == 1 && taps[0] == 2.5f);
    remove(name);
}

static void reads_emboss_example(void)
{
    const float emboss[9] = {-2, -1, 0, -1, 1, 1, 0, 1, 2};
    float taps[MAX_TAPS];
    char err[ERR_SIZE] = "";
    int k = 5;
    CHECK(filter_from_spec(DATA_DIR "/filters/emboss3.txt", &k, taps, err, sizeof err));
    CHECK(k == 3 && memcmp(taps, emboss, sizeof emboss) == 0);
}

/* Filter files that must be refused, grouped by the case that writes them (the group
 * names the file): the file's text, and what the error says right after the file name
 * (the line number first). */
static const struct bad_filter_file {
    const char *group, *text, *what;
} bad_filter_files[] = {
    {"nonsquare", "1 2 3\n4 5 6\n", ":2: the file ends after 2 rows of 3: a filter is square"},
    {"nonsquare", "1 2 3\n4 5 6\n7 8 9\n1 1 1\n", ":4: row 4 of a filter 3 wide"},
    {"nonsquare", "1 2 3\n# ragged\n4 5\n7 8 9\n", ":3: 2 numbers, but the first row has 3"},
    {"nonsquare", "# only a comment\n\n", ": no numbers"},
    {"even", "1 2\n3 4\n", ":2: the filter is 2x2: its size must be odd, 1 to 31"},
    {"badnum", "1 2 3\n# comment\n4 x5 6\n7 8 9\n", ":3: 'x5' is not a number"},
    {"badnum", "1 2 3\n4 nan 6\n7 8 9\n", ":2: 'nan' is not a finite float"},
    {"badnum", "1 2 3\n4 5 6\n7 8 1e39\n", ":3: '1e39' is not a finite float"},
    {"badnum", "1 2 3.5.1\n", ":1: '3.5.1' is not a number"},
    /* The file's text is shown escaped. */
    {"esc", "1 2 3\n4 \x1b[2J 6\n7 8 9\n", ":2: '\\x1b[2J' is not a number"},
};

/* The row's file must be rejected with the file name followed by its `what`. */
static void check_bad_filter_file(const char *name, size_t row)
{
    char what[NAME_SIZE + ERR_SIZE];
    write_text(name, bad_filter_files[row].text);
    snprintf(what, sizeof what, "%s%s", name, bad_filter_files[row].what);
    check_rejected(name, 3, what);
}

/* Writes the group's bad files in turn to one name; each must be rejected. */
static void check_bad_filter_files(const char *group)
{
    char name[NAME_SIZE];
    temp_name(name, group);
    CHECK_BAD_FILES(name, bad_filter_files, group, check_bad_filter_file);
}

static void file_rejects_non_square(void)
{
    check_bad_filter_files("nonsquare");
}

static void file_rejects_even_size(void)
{
    check_bad_filter_files("even");
}

static void file_bad_number_names_line(void)
{
    check_bad_filter_files("badnum");
}

/* The spec and the file's text are shown escaped: the error stays one line. */
static void errors_are_escaped(void)
{
    check_rejected("no\nsuch\x1b[2J", 3, "'no\\nsuch\\x1b[2J' is not a filter name");
    check_bad_filter_files("esc");
}

/* Only a regular file of at most FILTER_FILE_MAX_BYTES is read: /dev/zero would
 * otherwise be read until memory runs out, a FIFO would block (alarm: a hang
 * fails the test). */
static void file_must_be_regular_and_small(void)
{
    check_rejected("/dev/zero", 3, "/dev/zero: is a device, not a regular file");
    char name[NAME_SIZE];
    temp_name(name, "fifo");
    CHECK(mkfifo(name, 0600) == 0);
    alarm(HANG_SECONDS);
    check_rejected(name, 3, "is a FIFO (named pipe), not a regular file");
    alarm(0);
    remove(name);
    temp_name(name, "huge");
    FILE *f = fopen(name, "w");
    CHECK(f != NULL);
    if (f) {
        fputs("1\n", f);
        for (int i = 0; i < FILTER_FILE_MAX_BYTES; i++)
            fputc(' ', f);
        fclose(f);
    }
    check_rejected(name, 3, "is 1048578 bytes: at most 1048576 are read");
    remove(name);
}

/* Names are filters, anything else is a file (which an output must not overwrite). */
static void names_are_not_files(void)
{
    CHECK(!filter_spec_is_file("box") && !filter_spec_is_file("gaussian"));
    CHECK(!filter_spec_is_file("sobel-x") && !filter_spec_is_file("sharpen"));
    CHECK(filter_spec_is_file("emboss3.txt") && filter_spec_is_file("Box"));
}

static const struct unit_case cases[] = {
    {"box_sums_to_one", box_sums_to_one},
    {"gaussian_normalised_symmetric_rank1", gaussian_normalised_symmetric_rank1},
    {"sobel_x_taps", sobel_x_taps},
    {"laplacian_sums_to_zero", laplacian_sums_to_zero},
    {"every_listed_name_works", every_listed_name_works},
    {"rejects_even_ksize", rejects_even_ksize},
    {"sobel_needs_ksize_3", sobel_needs_ksize_3},
    {"unknown_name_is_a_missing_file", unknown_name_is_a_missing_file},
    {"reads_text_file", reads_text_file},
    {"reads_emboss_example", reads_emboss_example},
    {"file_rejects_non_square", file_rejects_non_square},
    {"file_rejects_even_size", file_rejects_even_size},
    {"file_bad_number_names_line", file_bad_number_names_line},
    {"errors_are_escaped", errors_are_escaped},
    {"file_must_be_regular_and_small", file_must_be_regular_and_small},
    {"names_are_not_files", names_are_not_files},
};

UNIT_MAIN(cases)
