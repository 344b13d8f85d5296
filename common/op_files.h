/* An op's tensors from NumPy .npy files and its result back to one (op.files): read
 * with npy.c's strict reader, their shapes checked against the op's named dimensions,
 * written through fileutil.c's temporary file. Every error is one line naming the
 * flag and the file. */
#ifndef OP_FILES_H
#define OP_FILES_H

#include <stdbool.h>
#include <stddef.h>

#include "npy.h"
#include "op.h"

/* The files' values as read, in the order of the op's file layout. */
struct op_files {
    int count;
    struct npy_array array[OP_MAX_TENSORS];
    void *tensor[OP_MAX_TENSORS]; /* array[i].data */
};

/* Writes the op's files as flags into buf: "--mu, --gamma, --c and --input". */
void op_files_list(const struct op *op, char *buf, size_t size);
/* A file's shape in the op's names into buf: "(B, Ci, H, W)", "(Co,)". */
void op_file_dims(const struct op *op, const struct op_file *file, char *buf, size_t size);

/* The index of the op's written tensor among its files (op.h: there is one). */
int op_written_file(const struct op *op, const struct conv_shape *s);

/* Reads the files (path[i] for op->files[i]) and the problem's shape from them; false
 * after one error line naming the flag and the file (bad input, exit 2). */
bool op_files_read(const struct op *op, const char *const *path, const double *param,
                   struct conv_shape *shape, struct op_files *f);
/* The op's written tensor after a run in `layout` (its written tensors `after`) to
 * path, in the files' layout and the shape its file had; f's values are updated on
 * the way. false after one error line naming --output (the file is left as it was). */
bool op_files_write(const struct op *op, const struct conv_shape *s, int layout,
                    void *const *after, struct op_files *f, const char *path);
void op_files_free(struct op_files *f);

#endif
