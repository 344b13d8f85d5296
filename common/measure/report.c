#define _POSIX_C_SOURCE 200809L /* open_memstream */
#include "report.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "build_info.h"
#include "escape.h"
#include "fileutil.h"

#define CSV_ERROR_SIZE 512
#define MIN_NAME_WIDTH 20 /* the variant column of a table of short names */

const char *row_status(const struct result_row *row)
{
    if (!row->verified)
        return "unchecked";
    return row->check.pass ? "PASS" : "FAIL";
}

bool result_may_be_written(const struct result_row *row)
{
    if (!row->verified || row->check.pass)
        return true;
    printf("variant %s: FAIL (%zu of %zu outputs off, max abs error %.3e): nothing written\n",
           row->variant, row->check.failures, row->check.checked, row->check.max_abs);
    return false;
}

void print_written(const struct result_row *row, const char *path)
{
    printf("variant %s: %s%s%s\n", row->variant, row_status(row), path ? ", wrote " : "",
           path ? path : "");
}

static int name_column(int longest_name)
{
    return longest_name > MIN_NAME_WIDTH ? longest_name : MIN_NAME_WIDTH;
}

void print_table_header(int longest_name)
{
    printf("%-*s %-11s %10s %10s %8s %9s %9s %-7s %9s %9s %9s  %s\n", name_column(longest_name),
           "variant", "format", "median ms", "min ms", "GB/s", "GFLOP/s", "roofline", "of",
           "vs cuDNN", "rel err", "max abs", "check");
}

static void print_optional(const char *format, double value, const char *suffix)
{
    char text[32];
    if (isnan(value))
        snprintf(text, sizeof text, "-");
    else
        snprintf(text, sizeof text, format, value);
    strncat(text, isnan(value) ? "" : suffix, sizeof text - strlen(text) - 1);
    printf(" %9s", text);
}

void print_row(const struct result_row *row, int longest_name)
{
    const int name_width = name_column(longest_name);
    if (row->skipped) {
        printf("%-*s skipped: %s\n", name_width, row->variant, row->skipped);
        return;
    }
    char format[32];
    snprintf(format, sizeof format, "%s/%s", dtype_name(row->dtype), row->layout);
    printf("%-*s %-11s %10.4f %10.4f %8.1f %9.1f", name_width, row->variant, format,
           row->time.median_ms, row->time.min_ms, row->gbps, row->gflops);
    print_optional("%.1f", row->roofline_pct, "%");
    printf(" %-7s", row->roof_unit ? row->roof_unit : "-");
    print_optional("%.2f", row->cudnn_ms / row->time.median_ms, "x");
    if (row->verified)
        printf(" %9.2e %9.2e  %s\n", row->check.rel_l2, row->check.max_abs, row_status(row));
    else
        printf(" %9s %9s  %s\n", "-", "-", row_status(row));
}

/* Empty CSV fields for missing numbers. */
static void csv_number(FILE *f, const char *format, double value)
{
    fputc(',', f);
    if (!isnan(value))
        fprintf(f, format, value);
}

/* Device names may hold commas (CPU model strings): quote them. */
static void csv_text(FILE *f, const char *text)
{
    fputc(',', f);
    if (strpbrk(text, ",\"")) {
        fputc('"', f);
        for (const char *p = text; *p; p++) {
            if (*p == '"')
                fputc('"', f);
            fputc(*p, f);
        }
        fputc('"', f);
    } else {
        fputs(text, f);
    }
}

/* Rows are built in memory (rows_open), then appended in one write (rows_append): the
 * file gains them whole or not at all. Errors are one line naming the flag. */
static FILE *rows_open(char **text, size_t *size, const char *flag, const char *path)
{
    *text = NULL;
    FILE *f = open_memstream(text, size);
    if (!f)
        print_error("%s %s: out of host memory for its rows", flag, path);
    return f;
}

static bool rows_append(FILE *f, char **text, const char *flag, const char *path,
                        const char *header)
{
    bool ok = !ferror(f);
    ok = fclose(f) == 0 && ok;
    char err[CSV_ERROR_SIZE];
    if (!ok)
        print_error("%s %s: out of host memory for its rows", flag, path);
    else if (!(ok = append_line(path, header, *text, err, sizeof err)))
        print_error("%s %s", flag, err);
    free(*text);
    return ok;
}

bool csv_append(const struct run_context *ctx, const struct result_row *row)
{
    char *line;
    size_t line_size;
    FILE *f = rows_open(&line, &line_size, "--csv", ctx->csv_path);
    if (!f)
        return false;
    char date[32];
    time_t now = time(NULL);
    strftime(date, sizeof date, "%Y-%m-%dT%H:%M:%SZ", gmtime(&now));
    const struct conv_shape *s = &ctx->shape;
    fprintf(f, "%s", ctx->lesson);
    csv_text(f, row->variant);
    csv_text(f, ctx->preset);
    csv_text(f, row->device);
    fprintf(f, ",%d,%d,%d,%d,%d,%d,%s", s->n, s->cin, s->cout, s->h, s->w, s->ksize,
            dtype_name(row->dtype));
    csv_number(f, "%.6f", row->time.median_ms);
    csv_number(f, "%.6f", row->time.min_ms);
    csv_number(f, "%.2f", row->gbps);
    csv_number(f, "%.2f", row->gflops);
    csv_number(f, "%.2f", row->roofline_pct);
    csv_number(f, "%.6f", row->cudnn_ms);
    csv_number(f, "%.4f", row->cudnn_ms / row->time.median_ms);
    csv_number(f, "%.3e", row->verified ? row->check.rel_l2 : NAN);
    csv_number(f, "%.3e", row->verified ? row->check.max_abs : NAN);
    fprintf(f, ",%s,%s,%s,%s", row_status(row), build_commit, date, row->layout);
    csv_text(f, row->params);
    return rows_append(f, &line, "--csv", ctx->csv_path, CSV_HEADER);
}

bool frame_csv_append(const char *path, const struct run_context *ctx,
                      const struct result_row *row, const struct frame_row *frames, int count)
{
    char *text;
    size_t text_size;
    FILE *f = rows_open(&text, &text_size, "--frames-csv", path);
    if (!f)
        return false;
    for (int i = 0; i < count; i++) {
        const struct frame_row *fr = &frames[i];
        if (i > 0)
            fputc('\n', f);
        fprintf(f, "%s", ctx->lesson);
        csv_text(f, row->variant);
        csv_text(f, ctx->preset);
        csv_text(f, row->device);
        fprintf(f, ",%d", fr->frame);
        csv_number(f, "%.6f", fr->time.median_ms);
        csv_number(f, "%.6f", fr->time.min_ms);
        csv_number(f, "%.3e", fr->verified ? fr->check.rel_l2 : NAN);
        csv_number(f, "%.3e", fr->verified ? fr->check.max_abs : NAN);
        fprintf(f, ",%s,%s", !fr->verified ? "unchecked" : fr->check.pass ? "PASS" : "FAIL",
                build_commit);
        csv_text(f, row->params);
    }
    return rows_append(f, &text, "--frames-csv", path, FRAME_CSV_HEADER);
}

bool report_row(const struct run_context *ctx, const struct result_row *row)
{
    print_row(row, ctx->longest_name);
    return row->skipped || !ctx->csv_path || csv_append(ctx, row);
}
