/* What a run prints and records: the console table (one row per variant) and the
 * CSV. Every lesson writes the same columns (CSV_HEADER), so one file can hold the
 * rows of all lessons and plots/plot.py can read any of them. */
#ifndef REPORT_H
#define REPORT_H

#include <stdbool.h>

#include "conv_problem.h"
#include "tensor_format.h"
#include "timing.h"
#include "verify.h"

#ifdef __cplusplus
extern "C" {
#endif

#define CSV_HEADER                                                                           \
    "lesson,variant,preset,device,n,cin,cout,h,w,ksize,dtype,median_ms,min_ms,gbps,gflops," \
    "roofline_pct,cudnn_ms,vs_cudnn,rel_err,max_abs_err,status,commit,date,layout,params"

struct result_row {
    const char *variant;
    const char *device;   /* GPU name, or CPU model and threads */
    enum dtype dtype;
    const char *layout;   /* layout_name(), or the name of an op's own layout */
    const char *skipped;  /* why the variant did not run; NULL when it ran */
    struct timing time;
    double gbps, gflops;
    double roofline_pct;  /* NAN where there is no roofline (CPU rows) */
    const char *roof_unit; /* the unit whose peak the roofline used, or "memory" */
    double cudnn_ms;      /* NAN without a cuDNN row */
    bool verified;        /* false with --no-verify */
    struct check_result check;
    char params[160];     /* key=value;... for the CSV (the cuDNN algorithm and version) */
};

struct run_context {
    const char *lesson;
    const char *preset;
    struct conv_shape shape;
    const char *csv_path; /* NULL: no CSV */
    int longest_name;     /* of the variants the table may show */
};

/* The console table, given the length of the longest variant name it may show: the
 * variant column is that wide (at least 20), so the other columns stay aligned. */
void print_table_header(int longest_name);
void print_row(const struct result_row *row, int longest_name);
/* PASS, FAIL or "unchecked" (--no-verify). */
const char *row_status(const struct result_row *row);
/* Appends one row (and the header when the file is new or empty); false with a
 * message on stderr when the file cannot be written. */
bool csv_append(const struct run_context *ctx, const struct result_row *row);
/* A sequence op's rows per frame (--frames-csv): the variant's row, then the frame's
 * time over the timed passes (none for frame 0, which is not timed) and its check. */
#define FRAME_CSV_HEADER                                                                     \
    "lesson,variant,preset,device,frame,median_ms,min_ms,rel_err,max_abs_err,status,commit,params"

struct frame_row {
    int frame;
    struct timing time; /* NAN for an untimed frame */
    bool verified;
    struct check_result check;
};

/* Appends one line per frame in one write; false with a message on stderr when the
 * file cannot be written. */
bool frame_csv_append(const char *path, const struct run_context *ctx,
                      const struct result_row *row, const struct frame_row *frames, int count);

/* Before a run's result is written to a file: false, with "variant X: FAIL (...):
 * nothing written" printed, when it failed its check. */
bool result_may_be_written(const struct result_row *row);
/* "variant X: PASS, wrote FILE" (unchecked with --no-verify; no file when path is NULL). */
void print_written(const struct result_row *row, const char *path);

/* Prints the row and, when it ran and ctx has a CSV path, appends it; false when the
 * CSV could not be written (the message is printed). */
bool report_row(const struct run_context *ctx, const struct result_row *row);

#ifdef __cplusplus
}
#endif

#endif
