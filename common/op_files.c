/* An op's .npy files (op_files.h): each file's shape is matched against the op's named
 * dimensions, one name one size across all files, before the op sees the sizes. */
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

/* "--mu, --gamma, --c and --input", with each path after its flag when path is not NULL. */
static void list_files(const struct op *op, const char *const *path, char *buf, size_t size)
{
    size_t used = 0;
    buf[0] = '\0';
    for (int i = 0; i < op->file_count; i++) {
        const char *sep = i == 0 ? "" : i + 1 < op->file_count ? ", " : " and ";
        append(buf, size, &used, "%s--%s", sep, op->files[i].flag);
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

/* Where a dimension's size was first seen. */
struct bound {
    size_t size;
    int file, axis; /* file -1: not yet seen */
};

/* Binds file i's dimensions to the op's names; false after one error line. */
static bool bind_dims(const struct op *op, const char *const *path, const struct op_files *f,
                      int i, struct bound *bound)
{
    const struct op_file *d = &op->files[i];
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
                        path[i], got, want, name, n, b->size, op->files[b->file].flag,
                        path[b->file]);
            return false;
        }
    }
    return true;
}

/* The shape from the bound sizes, asked of the op; false after one error line. */
static bool shape_from(const struct op *op, const char *const *path, const double *param,
                       const struct bound *bound, struct conv_shape *shape)
{
    size_t dim[OP_MAX_DIM_NAMES];
    for (int n = 0; n < OP_MAX_DIM_NAMES; n++)
        dim[n] = bound[n].size;
    int culprit = op->file_count - 1;
    char text[ERROR_SIZE];
    if (!op->shape_of_files(dim, shape, &culprit, text, sizeof text)) {
        print_error("--%s %s: %s", op->files[culprit].flag, path[culprit], text);
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

bool op_files_read(const struct op *op, const char *const *path, const double *param,
                   struct conv_shape *shape, struct op_files *f)
{
    memset(f, 0, sizeof *f);
    f->count = op->file_count;
    struct bound bound[OP_MAX_DIM_NAMES];
    for (int n = 0; n < OP_MAX_DIM_NAMES; n++)
        bound[n] = (struct bound){0, -1, -1};
    char err[ERROR_SIZE];
    for (int i = 0; i < op->file_count; i++) {
        if (!npy_read(path[i], &f->array[i], err, sizeof err)) {
            print_error("--%s %s", op->files[i].flag, err);
            return false;
        }
        f->tensor[i] = f->array[i].data;
        if (!bind_dims(op, path, f, i, bound))
            return false;
    }
    if (!shape_from(op, path, param, bound, shape))
        return false;
    /* The op's own sizes for this shape must be the files': the op indexes them so. */
    struct op_tensor t[OP_MAX_TENSORS];
    op->tensors(shape, op->file_layout, t);
    for (int i = 0; i < op->file_count; i++)
        if (t[i].bytes != f->array[i].count * sizeof(float)) {
            print_error("--%s %s: %zu values, but the op's %s holds %zu for this shape",
                        op->files[i].flag, path[i], f->array[i].count, t[i].name,
                        t[i].bytes / sizeof(float));
            return false;
        }
    return true;
}

int op_written_file(const struct op *op, const struct conv_shape *s)
{
    struct op_tensor t[OP_MAX_TENSORS];
    op->tensors(s, op->file_layout, t);
    int w = 0;
    while (w + 1 < op->file_count && !t[w].written)
        w++;
    return w;
}

bool op_files_write(const struct op *op, const struct conv_shape *s, int layout,
                    void *const *after, struct op_files *f, const char *path)
{
    op->to_files(s, layout, f->tensor, after);
    char err[ERROR_SIZE];
    const struct npy_array *a = &f->array[op_written_file(op, s)];
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
