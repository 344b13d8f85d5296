/* Named filters for image mode and for the separable lesson, and filters read from
 * a text file (ksize lines of ksize numbers; '#' starts a comment). */
#ifndef FILTERS_H
#define FILTERS_H

#include <stdbool.h>
#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Largest filter file read: 31 rows of 31 numbers with comments take a few KiB;
 * the cap keeps a wrong file (a picture, a data dump) from being read whole. */
#define FILTER_FILE_MAX_BYTES (1024 * 1024)

/* Fills taps (ksize*ksize, row-major) from a spec: "box", "gaussian", "sobel-x",
 * "sobel-y", "laplacian", "sharpen", or a path to a text file. Named filters take
 * their size from *ksize (sobel, laplacian and sharpen are 3x3 only); a file sets
 * *ksize. taps must hold MAX_KSIZE * MAX_KSIZE floats: a file's size is known only
 * once it is read. Returns false with one line in err; taps and *ksize are then
 * unchanged. */
bool filter_from_spec(const char *spec, int *ksize, float *taps, char *err, size_t err_size);
/* True when spec is read as a file (it is none of the names above): the file an
 * output must not overwrite. */
bool filter_spec_is_file(const char *spec);
/* The names above, comma separated, for --help. */
const char *filter_names(void);

#ifdef __cplusplus
}
#endif

#endif
