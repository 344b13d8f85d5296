/* NumPy .npy files: little-endian float32, C order, version 1.0 to 3.0 headers.
 * Reading is strict: a wrong magic, dtype, order, or a shape that does not match
 * the data length is an error that names the file. */
#ifndef NPY_H
#define NPY_H

#include <stdbool.h>
#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

#define NPY_MAX_DIMS 8

struct npy_array {
    int ndim;
    size_t shape[NPY_MAX_DIMS];
    size_t count; /* product of shape */
    float *data;  /* malloc'ed; NULL when count is 0 */
};

/* Returns false and writes one line (naming the file) into err on failure: a file
 * that is not a regular one, a bad header, a length that does not match the shape,
 * a NaN or infinite element (named by its index). */
bool npy_read(const char *path, struct npy_array *a, char *err, size_t err_size);
/* The shape of a file npy_read would read, from its header alone: every check of
 * npy_read but the values' (NaN, infinity), with the same error line. */
bool npy_read_shape(const char *path, int *ndim, size_t *shape, char *err, size_t err_size);
/* Writes through a temporary file renamed into place: no half-written file. */
bool npy_write(const char *path, const float *data, int ndim, const size_t *shape,
               char *err, size_t err_size);
void npy_free(struct npy_array *a);

/* Room for any shape as text. */
#define NPY_SHAPE_TEXT_SIZE 256
/* A shape as NumPy prints it, for error lines: "(0, 1, 3, 3)", "(5,)", "()". */
void npy_format_shape(char *buf, size_t size, int ndim, const size_t *shape);

#ifdef __cplusplus
}
#endif

#endif
