/* Binary PGM (P5, grey) and PPM (P6, RGB) images with maxval 255. Reading is strict:
 * a wrong magic, a bad header field or a truncated pixel block is an error naming
 * the file. Pixels are returned as planes of floats in [0, 255]: 1 plane for PGM,
 * 3 (R, G, B) for PPM, so an RGB image is a batch of 3 single-channel planes. */
#ifndef IMAGE_H
#define IMAGE_H

#include <stdbool.h>
#include <stdio.h>
#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

struct image {
    int width, height;
    int planes; /* 1 (PGM) or 3 (PPM) */
    float *data; /* planes x height x width */
};

bool image_read(const char *path, struct image *img, char *err, size_t err_size);
/* Rounds and clamps to [0, 255]; .pgm for 1 plane, .ppm for 3. Writes through a
 * temporary file renamed into place. */
bool image_write(const char *path, const struct image *img, char *err, size_t err_size);
/* The same bytes into an open stream (a caller that writes several files and renames
 * them together); false, with errno, when a write fails. */
bool image_put(FILE *f, const struct image *img);
void image_free(struct image *img);

#ifdef __cplusplus
}
#endif

#endif
