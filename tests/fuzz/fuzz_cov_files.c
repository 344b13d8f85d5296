/* libFuzzer target for lesson 10's files taken together (--mu, --gamma, --c, --input):
 * the set their ranks pick (op_files_pick_set), each read strictly and bound to the op's
 * named dimensions, the shape that follows (cov_op_shape_of_files, cov_shape_problem)
 * and the sizes the op indexes (op_files_read). The input is the four files, in that
 * order, split at SEPARATOR. Any four files must give a problem or exactly one error
 * line, never a crash, leak or undefined behaviour; a problem's files must convert into
 * every layout's tensors (inside their bounds, which AddressSanitizer watches), and the
 * decision the symmetric variants take before any work (cov_gamma_file_asymmetry) must
 * be the one the files' values give. */
#define _POSIX_C_SOURCE 200809L /* fmemopen */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz_support.h"
#include "op_files.h"
#include "problem.h"

#define SEPARATOR "@next@"
#define PATH_SIZE 512
/* Room for one error line; a longer one fails the target as it would split a line. */
#define PRINTED_SIZE 8192

static const char *shape_problem(const struct conv_shape *s, const double *param)
{
    (void)param;
    return cov_shape_problem(s);
}

/* Lesson 10's op as far as reading its files goes (lessons/10_covariance/main.c): the
 * shape check, the tensors, the file sets and the names of their dimensions. */
static const struct op covariance = {
    .shape_problem = shape_problem,
    .tensors = cov_op_tensors,
    .file_sets = cov_file_sets,
    .file_set_count = COV_FILE_SET_COUNT,
    .dim_names = cov_dim_names,
};

/* Part i of the input (the bytes before the i-th separator, the rest for the last). */
static void part(const uint8_t *data, size_t size, int i, const uint8_t **start, size_t *len)
{
    const size_t sep = strlen(SEPARATOR);
    size_t at = 0;
    for (int k = 0;; k++) {
        size_t end = at;
        while (end < size && !(end + sep <= size && memcmp(data + end, SEPARATOR, sep) == 0))
            end++;
        if (k == i || end >= size) {
            *start = data + at;
            *len = k == i ? end - at : 0;
            return;
        }
        at = end + sep;
    }
}

static bool same_pair(const struct cov_asymmetry *a, const struct cov_asymmetry *b)
{
    if (a->found != b->found)
        return false;
    return !a->found || (a->b == b->b && a->ci == b->ci && a->i == b->i && a->j == b->j &&
                         a->i2 == b->i2 && a->j2 == b->j2 && a->value == b->value &&
                         a->mirror == b->mirror);
}

/* The files' tensors in every layout, as a buffer set holds them. */
static void convert_every_layout(const struct conv_shape *s, const struct op_files *f)
{
    for (int layout = 0; layout < COV_LAYOUT_COUNT; layout++) {
        struct op_tensor t[OP_MAX_TENSORS];
        void *tensor[OP_MAX_TENSORS];
        const int n = cov_op_tensors(s, layout, t);
        for (int i = 0; i < n; i++) {
            tensor[i] = malloc(t[i].bytes ? t[i].bytes : 1);
            fuzz_require(tensor[i] != NULL);
        }
        f->set->from_files(s, layout, f->tensor, tensor);
        for (int i = 0; i < n; i++)
            free(tensor[i]);
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static const char *const stem[COV_TENSOR_COUNT] = {"cov_mu", "cov_gamma", "cov_c",
                                                       "cov_input"};
    static char path[COV_TENSOR_COUNT][PATH_SIZE];
    const char *paths[COV_TENSOR_COUNT];
    for (int i = 0; i < COV_TENSOR_COUNT; i++) {
        const uint8_t *start;
        size_t len;
        part(data, size, i, &start, &len);
        snprintf(path[i], sizeof path[i], "%s", fuzz_input_file(start, len, stem[i], ".npy"));
        paths[i] = path[i];
    }

    /* What the reader prints, caught in memory. */
    static char errors[PRINTED_SIZE];
    memset(errors, 0, sizeof errors);
    FILE *err = stderr;
    stderr = fmemopen(errors, sizeof errors, "w");
    fuzz_require(stderr != NULL);
    struct op_files f;
    memset(&f, 0, sizeof f);
    struct conv_shape s;
    const struct op_file_set *set = op_files_pick_set(&covariance, paths);
    const bool read = set && op_files_read(&covariance, set, paths, NULL, &s, &f);
    fclose(stderr);
    stderr = err;

    const char *newline = strchr(errors, '\n');
    if (!read) {
        fuzz_require(strncmp(errors, "error: ", 7) == 0 && newline && newline[1] == '\0');
        op_files_free(&f);
        return 0;
    }
    fuzz_require(errors[0] == '\0');
    fuzz_require(cov_shape_problem(&s) == NULL);
    struct op_tensor t[OP_MAX_TENSORS];
    fuzz_require(cov_op_tensors(&s, set->layout, t) == f.count);
    for (int i = 0; i < f.count; i++)
        fuzz_require(t[i].bytes == f.array[i].count * sizeof(float));
    convert_every_layout(&s, &f);

    /* The symmetric variants' decision from the gamma file alone, against its values. */
    const bool seed = set == &cov_file_sets[COV_FILES_SEED];
    struct cov_asymmetry scanned;
    fuzz_require(cov_gamma_file_asymmetry(paths[COV_GAMMA], &scanned));
    fuzz_require(scanned.rank == (seed ? 7 : 6));
    float *blocks = f.tensor[COV_GAMMA];
    if (seed) {
        blocks = malloc(cov_gamma_diag_count(&s) * sizeof *blocks);
        fuzz_require(blocks != NULL);
        cov_gather_gamma(&s, f.tensor[COV_GAMMA], blocks);
    }
    struct cov_asymmetry whole = cov_find_asymmetry(&s, blocks);
    whole.rank = scanned.rank;
    fuzz_require(same_pair(&scanned, &whole));
    if (seed)
        free(blocks);
    op_files_free(&f);
    return 0;
}
