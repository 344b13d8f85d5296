/* Bad input files that a reader's tests must see refused: a table of them, grouped by
 * the test case that writes them, run group by group on one file name, and the check
 * that a reader refused a file. */
#ifndef BAD_FILES_H
#define BAD_FILES_H

#include <stdbool.h>
#include <stddef.h>

/* Writes row `row` of the caller's table to path and checks that the reader refuses it. */
typedef void (*bad_file_check)(const char *path, size_t row);

/* Calls check(path, i) for each row i of a table of `rows` rows, row_size bytes apart, whose
 * group (first_group, then row_size bytes on) is `wanted`; then removes path. A group that
 * names no row is a failed check: a misspelt group would check nothing. */
void check_bad_files(const char *path, const char *const *first_group, size_t rows, size_t row_size,
                     const char *wanted, bad_file_check check);

/* check_bad_files on table, an array of rows whose member `group` (const char *) names
 * their group. */
#define CHECK_BAD_FILES(path, table, wanted, check)                                                \
    check_bad_files(path, &(table)[0].group, sizeof(table) / sizeof((table)[0]),                   \
                    sizeof((table)[0]), wanted, check)

/* A reader's refusal of path: ok (what the reader returned) false, err one line that
 * starts with path and says what, and data (what the reader left behind) NULL. */
void check_refused(bool ok, const char *err, const char *path, const char *what, const void *data);

#endif
