/* An op's .npy files (op_files.h): the set is picked by the ranks in the files' headers,
 * then each file's shape is matched against the op's named dimensions, one name one size
 * across all files, before the op sees the sizes. */
#include "op_files.h"

#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "escape.h"

#define ERROR_SIZE 1024
#define TEXT_SIZE 256

/* Appends to buf at *used, never past size. */
static void append(char *buf, size_t size, size_t *used, const char *format, ...)
{
    if (*used >= size)
        return;
    va_list args;
    va_start(args, format);
    const int n = vsnprintf(buf + *used, size - *used, format, args);
    va_end(args);
    *used += n > 0 ? (size_t)n : 0;
}

int op_file_count(const struct op *op)
{
    return op->file_set_count ? op->file_sets[0].file_count : 0;
}

const char *op_file_flag(const struct op *op, int i)
{
    return op->file_sets[0].files[i].flag;
}

/* Joins n words as "a, b or c" (conjunction "or") or "a, b and c". */
static void append_word(char *buf, size_t size, size_t *used, int i, int n, const char *conjunction,
                        const char *word)
{
    append(buf, size, used, "%s%s", i == 0 ? "" : i + 1 < n ? ", " : conjunction, word);
}

/* "--mu, --gamma, --c and --input", with each path after its flag when path is not NULL. */
static void list_files(const struct op *op, const char *const *path, char *buf, size_t size)
{
    size_t used = 0;
    buf[0] = '\0';
    const int n = op_file_count(op);
    for (int i = 0; i < n; i++) {
        append_word(buf, size, &used, i, n, " and ", "--");
        append(buf, size, &used, "%s", op_file_flag(op, i));
        if (path)
            append(buf, size, &used, " %s", path[i]);
    }
}

void op_files_list(const struct op *op, char *buf, size_t size)
{
    list_files(op, NULL, buf, size);
}

void op_file_dims(const struct op *op, const struct op_file *file, char *buf, size_t size)
{
    size_t used = 0;
    buf[0] = '\0';
    append(buf, size, &used, "(");
    for (int i = 0; i < file->rank; i++)
        append(buf, size, &used, "%s%s", i ? ", " : "", op->dim_names[file->dim[i]]);
    append(buf, size, &used, file->rank == 1 ? ",)" : ")");
}

int op_written_file(const struct op *op, const struct op_file_set *set, const struct conv_shape *s)
{
    struct op_tensor t[OP_MAX_TENSORS];
    op->tensors(s, set->layout, t);
    int w = 0;
    while (w + 1 < set->file_count && !t[w].written)
        w++;
    return w;
}

bool op_files_writes(const struct op_file_set *set, int layout)
{
    return !set->writes || set->writes(layout);
}

void op_files_writers(const struct op *op, const struct op_file_set *set, char *buf, size_t size)
{
    int n = 0;
    for (int i = 0; i < op->variant_count; i++)
        n += op_files_writes(set, op->variants[i].layout);
    size_t used = 0;
    buf[0] = '\0';
    for (int i = 0, k = 0; i < op->variant_count; i++)
        if (op_files_writes(set, op->variants[i].layout))
            append_word(buf, size, &used, k++, n, " or ", op->variants[i].name);
}

/* The names of the sets in `mask` into buf: "the seed's layout or the compact layout". */
static void set_names(const struct op *op, unsigned mask, char *buf, size_t size)
{
    int n = 0;
    for (int k = 0; k < op->file_set_count; k++)
        n += (mask >> k) & 1;
    size_t used = 0;
    buf[0] = '\0';
    for (int k = 0, i = 0; k < op->file_set_count; k++)
        if ((mask >> k) & 1)
            append_word(buf, size, &used, i++, n, " or ", op->file_sets[k].name);
}

/* File i's rank fits no set: the shapes each set expects, once when they agree. */
static void print_rank_error(const struct op *op, int i, const char *path, int ndim,
                             const size_t *shape)
{
    char got[NPY_SHAPE_TEXT_SIZE], want[ERROR_SIZE], first[TEXT_SIZE];
    npy_format_shape(got, sizeof got, ndim, shape);
    op_file_dims(op, &op->file_sets[0].files[i], first, sizeof first);
    bool agree = true;
    for (int k = 1; k < op->file_set_count; k++) {
        char dims[TEXT_SIZE];
        op_file_dims(op, &op->file_sets[k].files[i], dims, sizeof dims);
        agree = agree && strcmp(dims, first) == 0;
    }
    size_t used = 0;
    want[0] = '\0';
    for (int k = 0; k < (agree ? 1 : op->file_set_count); k++) {
        char dims[TEXT_SIZE];
        op_file_dims(op, &op->file_sets[k].files[i], dims, sizeof dims);
        append_word(want, sizeof want, &used, k, op->file_set_count, " or ", dims);
        if (!agree)
            append(want, sizeof want, &used, " in %s", op->file_sets[k].name);
    }
    print_error("--%s %s: shape %s has %d dimensions: expected %s", op_file_flag(op, i), path, got,
                ndim, want);
}

const struct op_file_set *op_files_pick_set(const struct op *op, const char *const *path)
{
    const int n = op_file_count(op);
    /* Bit k: set k fits every file so far (narrowed[j]: after file j); rank[j]: file j's. */
    unsigned fitting = (1u << op->file_set_count) - 1, narrowed[OP_MAX_TENSORS];
    int rank[OP_MAX_TENSORS];
    char err[ERROR_SIZE];
    for (int i = 0; i < n; i++) {
        size_t shape[NPY_MAX_DIMS];
        if (!npy_read_shape(path[i], &rank[i], shape, err, sizeof err)) {
            print_error("--%s %s", op_file_flag(op, i), err);
            return NULL;
        }
        unsigned fits = 0;
        for (int k = 0; k < op->file_set_count; k++)
            fits |= (unsigned)(op->file_sets[k].files[i].rank == rank[i]) << k;
        if (!fits) {
            print_rank_error(op, i, path[i], rank[i], shape);
            return NULL;
        }
        if (!(fitting & fits)) {
            /* The file whose rank ruled out every set this one fits. */
            int j = 0;
            while (narrowed[j] & fits)
                j++;
            char got[NPY_SHAPE_TEXT_SIZE], these[TEXT_SIZE], those[TEXT_SIZE];
            npy_format_shape(got, sizeof got, rank[i], shape);
            set_names(op, fits, these, sizeof these);
            set_names(op, narrowed[j], those, sizeof those);
            print_error("--%s %s: shape %s has %d dimensions, as in %s, but --%s %s has %d, as "
                        "in %s: give every file in one layout",
                        op_file_flag(op, i), path[i], got, rank[i], these, op_file_flag(op, j),
                        path[j], rank[j], those);
            return NULL;
        }
        fitting &= fits;
        narrowed[i] = fitting;
    }
    int k = 0;
    while (!((fitting >> k) & 1))
        k++;
    return &op->file_sets[k];
}

bool op_files_check_output(const struct op *op, const struct op_file_set *set, const char *variant,
                           const char *output_path)
{
    const struct op_variant *v = op->variants;
    while (strcmp(v->name, variant) != 0)
        v++;
    if (op_files_writes(set, v->layout))
        return true;
    char writers[ERROR_SIZE];
    op_files_writers(op, set, writers, sizeof writers);
    print_error("--output %s with --variant %s (layout %s): in %s, %s; --variant %s can write it",
                output_path, variant, op->layout_names[v->layout], set->name, set->writes_why,
                writers);
    return false;
}

/* Where a dimension's size was first seen. */
struct bound {
    size_t size;
    int file, axis; /* file -1: not yet seen */
};

/* Binds file i's dimensions to the op's names; false after one error line. */
static bool bind_dims(const struct op *op, const char *const *path, const struct op_files *f,
                      int i, struct bound *bound)
{
    const struct op_file *d = &f->set->files[i];
    const struct npy_array *a = &f->array[i];
    char want[TEXT_SIZE], got[NPY_SHAPE_TEXT_SIZE];
    op_file_dims(op, d, want, sizeof want);
    npy_format_shape(got, sizeof got, a->ndim, a->shape);
    if (a->ndim != d->rank) {
        print_error("--%s %s: shape %s has %d dimensions, expected %d: %s", d->flag, path[i],
                    got, a->ndim, d->rank, want);
        return false;
    }
    for (int axis = 0; axis < d->rank; axis++) {
        const size_t n = a->shape[axis];
        const char *name = op->dim_names[d->dim[axis]];
        struct bound *b = &bound[d->dim[axis]];
        if (n < 1 || n > INT_MAX) {
            print_error("--%s %s: shape %s: dimension %d (%s) is %zu, not 1..%d", d->flag,
                        path[i], got, axis, name, n, INT_MAX);
            return false;
        }
        if (b->file < 0) {
            *b = (struct bound){n, i, axis};
        } else if (b->size != n && b->file == i) {
            print_error("--%s %s: shape %s is not %s: %s is %zu at dimension %d and %zu at "
                        "dimension %d", d->flag, path[i], got, want, name, b->size, b->axis,
                        n, axis);
            return false;
        } else if (b->size != n) {
            print_error("--%s %s: shape %s is not %s: %s is %zu here but %zu in --%s %s", d->flag,
                        path[i], got, want, name, n, b->size, op_file_flag(op, b->file),
                        path[b->file]);
            return false;
        }
    }
    return true;
}

/* The shape from the bound sizes, asked of the op; false after one error line. */
static bool shape_from(const struct op *op, const struct op_file_set *set, const char *const *path,
                       const double *param, const struct bound *bound, struct conv_shape *shape)
{
    size_t dim[OP_MAX_DIM_NAMES];
    for (int n = 0; n < OP_MAX_DIM_NAMES; n++)
        dim[n] = bound[n].size;
    int culprit = set->file_count - 1;
    char text[ERROR_SIZE];
    if (!set->shape_of_files(dim, shape, &culprit, text, sizeof text)) {
        print_error("--%s %s: %s", op_file_flag(op, culprit), path[culprit], text);
        return false;
    }
    const char *why = op->shape_problem(shape, param);
    if (why) {
        char files[ERROR_SIZE];
        list_files(op, path, files, sizeof files);
        print_error("%s: %s", files, why);
        return false;
    }
    return true;
}

bool op_files_read(const struct op *op, const struct op_file_set *set, const char *const *path,
                   const double *param, struct conv_shape *shape, struct op_files *f)
{
    memset(f, 0, sizeof *f);
    f->set = set;
    f->count = set->file_count;
    struct bound bound[OP_MAX_DIM_NAMES];
    for (int n = 0; n < OP_MAX_DIM_NAMES; n++)
        bound[n] = (struct bound){0, -1, -1};
    char err[ERROR_SIZE];
    for (int i = 0; i < set->file_count; i++) {
        if (!npy_read(path[i], &f->array[i], err, sizeof err)) {
            print_error("--%s %s", op_file_flag(op, i), err);
            return false;
        }
        f->tensor[i] = f->array[i].data;
        if (!bind_dims(op, path, f, i, bound))
            return false;
    }
    if (!shape_from(op, set, path, param, bound, shape))
        return false;
    /* The op's own sizes for this shape must be the files': the op indexes them so. */
    struct op_tensor t[OP_MAX_TENSORS];
    op->tensors(shape, set->layout, t);
    for (int i = 0; i < set->file_count; i++)
        if (t[i].bytes != f->array[i].count * sizeof(float)) {
            print_error("--%s %s: %zu values, but the op's %s holds %zu for this shape",
                        op_file_flag(op, i), path[i], f->array[i].count, t[i].name,
                        t[i].bytes / sizeof(float));
            return false;
        }
    return true;
}

bool op_files_write(const struct op *op, const struct conv_shape *s, int layout,
                    void *const *after, struct op_files *f, const char *path)
{
    f->set->to_files(s, layout, f->tensor, after);
    char err[ERROR_SIZE];
    const struct npy_array *a = &f->array[op_written_file(op, f->set, s)];
    if (npy_write(path, a->data, a->ndim, a->shape, err, sizeof err))
        return true;
    print_error("--output %s", err);
    return false;
}

void op_files_free(struct op_files *f)
{
    for (int i = 0; i < f->count; i++)
        npy_free(&f->array[i]);
    memset(f, 0, sizeof *f);
}
