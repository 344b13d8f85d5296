/* Binary Netpbm images (netpbm.sourceforge.net/doc/pgm.html, ppm.html): "P5" or "P6",
 * width, height and maxval as decimal text separated by whitespace, '#' comments up
 * to the end of a line between them, exactly one whitespace byte after maxval (or
 * a comment right after its digits, whose end of line is that byte), then
 * width x height pixels of 1 (grey) or 3 (R, G, B) bytes, row by row. */
#include "image.h"

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fileutil.h"

#define PIXEL_MAX 255
#define GREY_PLANES 1
#define RGB_PLANES 3

static bool is_space(int c)
{
    return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\v' || c == '\f';
}

/* Reads the rest of a '#' comment; returns the byte that ends it ('\n', '\r' or EOF). */
static int skip_comment(FILE *f)
{
    int c;
    do
        c = getc(f);
    while (c != '\n' && c != '\r' && c != EOF);
    return c;
}

/* Skips whitespace and comments, then reads one decimal header field. The field
 * must be followed by whitespace or a comment, which is left unread. Values above
 * INT32_MAX are reported as too large rather than wrapped. */
static bool read_field(FILE *f, const char *path, const char *name, long long *value, char *err,
                       size_t err_size)
{
    int c = getc(f);
    while (c == '#' || is_space(c)) {
        if (c == '#')
            skip_comment(f);
        c = getc(f);
    }
    if (c == EOF)
        return file_error(err, err_size, path, "header ends before the %s", name);
    if (c == '-')
        return file_error(err, err_size, path, "%s must be a positive number", name);
    if (c < '0' || c > '9')
        return file_error(err, err_size, path, "%s is not a number", name);
    long long v = 0;
    bool too_large = false;
    for (; c >= '0' && c <= '9'; c = getc(f)) {
        v = v * 10 + (c - '0');
        if (v > INT32_MAX) {
            too_large = true;
            v = INT32_MAX;
        }
    }
    if (c != EOF && c != '#' && !is_space(c))
        return file_error(err, err_size, path, "%s is not a number", name);
    if (too_large)
        return file_error(err, err_size, path, "%s is too large (at most %ld)", name, (long)INT32_MAX);
    ungetc(c, f);
    *value = v;
    return true;
}

static bool read_header(FILE *f, const char *path, struct image *img, char *err, size_t err_size)
{
    char magic[2];
    if (fread(magic, 1, 2, f) != 2 || magic[0] != 'P')
        return file_error(err, err_size, path, "not a binary PGM (P5) or PPM (P6) file (bad magic)");
    if (magic[1] == '2' || magic[1] == '3')
        return file_error(err, err_size, path,
                    "ASCII PGM/PPM not supported (P%c): save it as binary P5/P6", magic[1]);
    if (magic[1] != '5' && magic[1] != '6')
        return file_error(err, err_size, path, "not a binary PGM (P5) or PPM (P6) file (bad magic)");
    long long width, height, maxval;
    if (!read_field(f, path, "width", &width, err, err_size) ||
        !read_field(f, path, "height", &height, err, err_size) ||
        !read_field(f, path, "maxval", &maxval, err, err_size))
        return false;
    if (width == 0 || height == 0)
        return file_error(err, err_size, path, "image is %lldx%lld: width and height must be positive",
                    width, height);
    if (width * height > INT32_MAX)
        return file_error(err, err_size, path, "image is %lldx%lld: more than %ld pixels", width, height,
                    (long)INT32_MAX);
    if (maxval != PIXEL_MAX)
        return file_error(err, err_size, path, "maxval is %lld: only 8-bit images (maxval %d) are read",
                    maxval, PIXEL_MAX);
    /* Exactly one whitespace byte: the pixel bytes that follow may look like spaces.
     * A comment may come first, right after the digits ("255#c\n"); as in libnetpbm,
     * the end of its line is that byte. read_field left one of the two unread. */
    int c = getc(f);
    if (c == '#')
        c = skip_comment(f);
    if (c == EOF)
        return file_error(err, err_size, path, "file ends after the header: no pixel data");
    img->width = (int)width;
    img->height = (int)height;
    img->planes = magic[1] == '5' ? GREY_PLANES : RGB_PLANES;
    return true;
}

/* Checks the pixel block is exactly as long as the header says before allocating. */
static bool check_length(FILE *f, const char *path, size_t need, char *err, size_t err_size)
{
    long start = ftell(f);
    long end = -1;
    if (start >= 0 && fseek(f, 0, SEEK_END) == 0)
        end = ftell(f);
    if (end < 0 || fseek(f, start, SEEK_SET) != 0)
        return file_error(err, err_size, path, "cannot seek: %s", strerror(errno));
    size_t have = (size_t)(end - start);
    if (have < need)
        return file_error(err, err_size, path,
                    "pixel data is %zu bytes, the header needs %zu (truncated)", have, need);
    if (have > need)
        return file_error(err, err_size, path,
                    "%zu bytes after the pixel data (only one image per file is read)",
                    have - need);
    return true;
}

bool image_read(const char *path, struct image *img, char *err, size_t err_size)
{
    memset(img, 0, sizeof *img);
    FILE *f = open_input_file(path, 0, err, err_size);
    if (!f)
        return false;
    struct image head;
    if (!read_header(f, path, &head, err, err_size)) {
        fclose(f);
        return false;
    }
    size_t pixels = (size_t)head.width * (size_t)head.height;
    size_t need = pixels * (size_t)head.planes;
    if (!check_length(f, path, need, err, err_size)) {
        fclose(f);
        return false;
    }
    unsigned char *bytes = malloc(need);
    float *data = malloc(need * sizeof(float));
    if (!bytes || !data) {
        free(bytes);
        free(data);
        fclose(f);
        return file_error(err, err_size, path, "out of host memory for a %dx%d image", head.width,
                    head.height);
    }
    bool ok = fread(bytes, 1, need, f) == need;
    fclose(f);
    if (!ok) {
        free(bytes);
        free(data);
        return file_error(err, err_size, path, "cannot read the pixel data");
    }
    /* Interleaved RGBRGB... becomes one plane per colour. */
    for (size_t i = 0; i < pixels; i++)
        for (int p = 0; p < head.planes; p++)
            data[(size_t)p * pixels + i] = bytes[i * (size_t)head.planes + (size_t)p];
    free(bytes);
    head.data = data;
    *img = head;
    return true;
}

static unsigned char to_byte(float v)
{
    if (!(v > 0.0f)) /* also NaN */
        return 0;
    if (v >= (float)PIXEL_MAX)
        return PIXEL_MAX;
    return (unsigned char)(v + 0.5f);
}

static bool has_extension(const char *path, const char *ext)
{
    const char *dot = strrchr(path, '.');
    const char *slash = strrchr(path, '/');
    if (!dot || (slash && dot < slash))
        return false;
    for (; *dot && *ext; dot++, ext++) {
        char c = *dot >= 'A' && *dot <= 'Z' ? (char)(*dot - 'A' + 'a') : *dot;
        if (c != *ext)
            return false;
    }
    return *dot == '\0' && *ext == '\0';
}

bool image_write(const char *path, const struct image *img, char *err, size_t err_size)
{
    if (img->planes == GREY_PLANES && !has_extension(path, ".pgm"))
        return file_error(err, err_size, path, "a grey (1-plane) image is written as .pgm");
    if (img->planes == RGB_PLANES && !has_extension(path, ".ppm"))
        return file_error(err, err_size, path, "an RGB (3-plane) image is written as .ppm");
    if (img->planes != GREY_PLANES && img->planes != RGB_PLANES)
        return file_error(err, err_size, path, "cannot write %d planes (1 for .pgm, 3 for .ppm)",
                    img->planes);
    if (img->width <= 0 || img->height <= 0 ||
        (long long)img->width * img->height > INT32_MAX)
        return file_error(err, err_size, path, "cannot write a %dx%d image", img->width, img->height);

    char tmp_path[FILENAME_MAX];
    FILE *f = atomic_open(path, tmp_path, sizeof tmp_path);
    if (!f)
        return file_error(err, err_size, path, "cannot create: %s", strerror(errno));
    /* Write errors stick in the stream's error flag, which atomic_commit checks. */
    if (!image_put(f, img)) {
        const int saved = errno;
        atomic_abort(f, tmp_path);
        return file_error(err, err_size, path, "cannot write: %s", strerror(saved));
    }
    if (!atomic_commit(f, tmp_path, path))
        return file_error(err, err_size, path, "cannot write: %s", strerror(errno));
    return true;
}

bool image_put(FILE *f, const struct image *img)
{
    size_t pixels = (size_t)img->width * (size_t)img->height;
    size_t row_bytes = (size_t)img->width * (size_t)img->planes;
    unsigned char *row = malloc(row_bytes);
    if (!row) {
        errno = ENOMEM;
        return false;
    }
    bool ok = fprintf(f, "P%c\n%d %d\n%d\n", img->planes == GREY_PLANES ? '5' : '6',
                      img->width, img->height, PIXEL_MAX) >= 0;
    for (int y = 0; ok && y < img->height; y++) {
        size_t base = (size_t)y * (size_t)img->width;
        for (int x = 0; x < img->width; x++)
            for (int p = 0; p < img->planes; p++)
                row[(size_t)x * (size_t)img->planes + (size_t)p] =
                    to_byte(img->data[(size_t)p * pixels + base + (size_t)x]);
        ok = fwrite(row, 1, row_bytes, f) == row_bytes;
    }
    const int saved = errno;
    free(row);
    errno = saved;
    return ok;
}

void image_free(struct image *img)
{
    free(img->data);
    memset(img, 0, sizeof *img);
}
