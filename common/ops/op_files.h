/* An op's tensors from NumPy .npy files and its result back to one (op.file_sets): the
 * set picked by the files' ranks, read with npy.c's strict reader, their shapes checked
 * against the op's named dimensions, written through fileutil.c's temporary file. Every
 * error is one line naming the flag and the file. */
#ifndef OP_FILES_H
#define OP_FILES_H

#include <stdbool.h>
#include <stddef.h>

#include "npy.h"
#include "op.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The files' values as read, in the order of their set's layout. */
struct op_files {
    const struct op_file_set *set;
    int count;
    struct npy_array array[OP_MAX_TENSORS];
    void *tensor[OP_MAX_TENSORS]; /* array[i].data */
};

/* How many files the op reads (0: none) and the i-th one's flag: every set names the
 * same flags in the same order. */
int op_file_count(const struct op *op);
const char *op_file_flag(const struct op *op, int i);
/* Writes the op's files as flags into buf: "--mu, --gamma, --c and --input". */
void op_files_list(const struct op *op, char *buf, size_t size);
/* A file's shape in the op's names into buf: "(B, Ci, H, W)", "(Co,)". */
void op_file_dims(const struct op *op, const struct op_file *file, char *buf, size_t size);

/* The index of the set's written tensor among its files (op.h: there is one). */
int op_written_file(const struct op *op, const struct op_file_set *set, const struct conv_shape *s);
/* Whether --output can write the set's written file after a run in `layout`. */
bool op_files_writes(const struct op_file_set *set, int layout);
/* The variants whose runs the set can write back into buf: "a, b or c". */
void op_files_writers(const struct op *op, const struct op_file_set *set, char *buf, size_t size);

/* The set the files are (path[i] for the op's i-th flag), from the ranks their headers
 * give, before any data is read; NULL after one error line naming the flag and the file
 * (a rank no set has for it, or ranks of different sets). */
const struct op_file_set *op_files_pick_set(const struct op *op, const char *const *path);
/* --output with --variant: true when the set can take that variant's result, else false
 * after one error line naming both and the variants that can. */
bool op_files_check_output(const struct op *op, const struct op_file_set *set, const char *variant,
                           const char *output_path);
/* Reads the set's files and the problem's shape from them; false after one error line
 * naming the flag and the file (bad input, exit 2). */
bool op_files_read(const struct op *op, const struct op_file_set *set, const char *const *path,
                   const double *param, struct conv_shape *shape, struct op_files *f);
/* The op's written tensor after a run in `layout` (its written tensors `after`) to
 * path, in the files' layout and the shape its file had; f's values are updated on
 * the way. false after one error line naming --output (the file is left as it was). */
bool op_files_write(const struct op *op, const struct conv_shape *s, int layout,
                    void *const *after, struct op_files *f, const char *path);
void op_files_free(struct op_files *f);

#ifdef __cplusplus
}
#endif

#endif
