/* NumPy .npy files (format spec: numpy/lib/format.py). A file is the magic
 * "\x93NUMPY", a version, a header length, a Python dict literal such as
 * {'descr': '<f4', 'fortran_order': False, 'shape': (3, 4), } padded with spaces
 * and a '\n', then the raw data. Only little-endian float32 in C order is accepted,
 * the data length must be exactly what the shape says, and every value finite. */
#include "npy.h"

#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fileutil.h"

/* The data is copied byte for byte, so the host must be little-endian like '<f4'
 * (x86-64 and aarch64 Linux are). */
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ != __ORDER_LITTLE_ENDIAN__
#error "npy.c reads and writes '<f4' data as is: a little-endian host is required"
#endif

static const char NPY_MAGIC[] = "\x93NUMPY";
#define NPY_MAGIC_LEN 6
#define NPY_V1_PREFIX 10 /* magic, 2 version bytes, 2-byte header length */
#define NPY_V2_PREFIX 12 /* magic, 2 version bytes, 4-byte header length */
/* NumPy pads the header so the data starts on a 64-byte boundary (aligned loads). */
#define NPY_ALIGN 64
/* A float32 header is under 300 bytes; anything far larger is not one of ours
 * (NumPy itself refuses headers over 10000 bytes by default). */
#define NPY_MAX_HEADER 65536
#define NPY_DTYPE "<f4"
/* Room for the largest header npy_write builds: 8 dims of 20 digits each. */
#define NPY_DICT_SIZE 512
#define WHY_SIZE 160

struct npy_header {
    char descr[16];
    bool fortran_order;
    int ndim;
    size_t shape[NPY_MAX_DIMS];
};

/* A strict reader of the one dict literal NumPy writes: three known keys in any
 * order, string, bool and tuple-of-int values, an optional trailing comma. */
struct cursor {
    const char *p, *end;
    char *why; /* what is wrong, on failure */
    size_t why_size;
};

static bool bad(struct cursor *c, const char *what)
{
    snprintf(c->why, c->why_size, "malformed header: %s", what);
    return false;
}

static void skip_space(struct cursor *c)
{
    while (c->p < c->end && (*c->p == ' ' || *c->p == '\t' || *c->p == '\n' || *c->p == '\r'))
        c->p++;
}

static bool expect(struct cursor *c, char ch, const char *what)
{
    skip_space(c);
    if (c->p >= c->end || *c->p != ch)
        return bad(c, what);
    c->p++;
    return true;
}

static bool peek(struct cursor *c, char ch)
{
    skip_space(c);
    return c->p < c->end && *c->p == ch;
}

static bool parse_string(struct cursor *c, char *out, size_t out_size)
{
    skip_space(c);
    if (c->p >= c->end || (*c->p != '\'' && *c->p != '"'))
        return bad(c, "expected a quoted string");
    char quote = *c->p++;
    size_t n = 0;
    while (c->p < c->end && *c->p != quote) {
        if (*c->p == '\\' || n + 1 >= out_size)
            return bad(c, "unexpected string");
        out[n++] = *c->p++;
    }
    if (c->p >= c->end)
        return bad(c, "unterminated string");
    c->p++;
    out[n] = '\0';
    return true;
}

static bool parse_bool(struct cursor *c, bool *value)
{
    skip_space(c);
    size_t left = (size_t)(c->end - c->p);
    if (left >= 4 && memcmp(c->p, "True", 4) == 0) {
        *value = true;
        c->p += 4;
    } else if (left >= 5 && memcmp(c->p, "False", 5) == 0) {
        *value = false;
        c->p += 5;
    } else {
        return bad(c, "fortran_order must be True or False");
    }
    return true;
}

static bool parse_dim(struct cursor *c, size_t *value)
{
    skip_space(c);
    if (c->p >= c->end || *c->p < '0' || *c->p > '9')
        return bad(c, "shape entries must be non-negative integers");
    size_t v = 0;
    while (c->p < c->end && *c->p >= '0' && *c->p <= '9') {
        size_t digit = (size_t)(*c->p - '0');
        if (v > (SIZE_MAX - digit) / 10)
            return bad(c, "a shape entry is too large");
        v = v * 10 + digit;
        c->p++;
    }
    *value = v;
    return true;
}

/* "()", "(5,)", "(3, 4)", "(3, 4,)"; "(5)" is an int in Python, not a tuple. */
static bool parse_shape(struct cursor *c, struct npy_header *h)
{
    if (!expect(c, '(', "shape must be a tuple"))
        return false;
    h->ndim = 0;
    bool trailing_comma = false;
    while (!peek(c, ')')) {
        if (h->ndim == NPY_MAX_DIMS) {
            snprintf(c->why, c->why_size, "shape has more than %d dimensions", NPY_MAX_DIMS);
            return false;
        }
        if (!parse_dim(c, &h->shape[h->ndim]))
            return false;
        h->ndim++;
        trailing_comma = peek(c, ',');
        if (trailing_comma)
            c->p++;
        else if (!peek(c, ')'))
            return bad(c, "expected ',' or ')' in shape");
    }
    c->p++;
    if (h->ndim == 1 && !trailing_comma)
        return bad(c, "a 1-d shape is written (n,)");
    return true;
}

static bool parse_header(const char *text, size_t len, struct npy_header *h, char *why,
                         size_t why_size)
{
    struct cursor c = {text, text + len, why, why_size};
    bool seen_descr = false, seen_order = false, seen_shape = false;
    if (!expect(&c, '{', "expected '{'"))
        return false;
    while (!peek(&c, '}')) {
        char key[32];
        if (!parse_string(&c, key, sizeof key) || !expect(&c, ':', "expected ':' after a key"))
            return false;
        bool *seen;
        bool ok;
        if (strcmp(key, "descr") == 0) {
            seen = &seen_descr;
            ok = parse_string(&c, h->descr, sizeof h->descr);
        } else if (strcmp(key, "fortran_order") == 0) {
            seen = &seen_order;
            ok = parse_bool(&c, &h->fortran_order);
        } else if (strcmp(key, "shape") == 0) {
            seen = &seen_shape;
            ok = parse_shape(&c, h);
        } else {
            snprintf(why, why_size, "malformed header: unexpected key '%s'", key);
            return false;
        }
        if (!ok)
            return false;
        if (*seen) {
            snprintf(why, why_size, "malformed header: key '%s' appears twice", key);
            return false;
        }
        *seen = true;
        if (peek(&c, ','))
            c.p++;
        else if (!peek(&c, '}'))
            return bad(&c, "expected ',' or '}' after a value");
    }
    c.p++;
    skip_space(&c);
    if (c.p != c.end)
        return bad(&c, "text after the closing '}'");
    if (!seen_descr || !seen_order || !seen_shape)
        return bad(&c, "needs the keys 'descr', 'fortran_order' and 'shape'");
    return true;
}

void npy_format_shape(char *buf, size_t size, int ndim, const size_t *shape)
{
    size_t n = (size_t)snprintf(buf, size, "(");
    for (int i = 0; i < ndim && n < size; i++)
        n += (size_t)snprintf(buf + n, size - n, i ? ", %zu" : "%zu", shape[i]);
    if (n < size)
        snprintf(buf + n, size - n, ndim == 1 ? ",)" : ")");
}

/* The first element that is NaN or infinite, as a flat index; count when none. */
static size_t first_non_finite(const float *data, size_t count)
{
    size_t i = 0;
    while (i < count && isfinite(data[i]))
        i++;
    return i;
}

/* A flat index as NumPy's index tuple, e.g. "(0, 2, 3)", for the error line. */
static void format_index(char *buf, size_t size, int ndim, const size_t *shape, size_t flat)
{
    size_t index[NPY_MAX_DIMS];
    for (int i = ndim; i-- > 0;) {
        index[i] = flat % shape[i];
        flat /= shape[i];
    }
    npy_format_shape(buf, size, ndim, index);
}

/* Product of the shape, false when it or its size in bytes overflows size_t. */
static bool shape_count(int ndim, const size_t *shape, size_t *count)
{
    size_t n = 1;
    for (int i = 0; i < ndim; i++) {
        if (shape[i] != 0 && n > SIZE_MAX / sizeof(float) / shape[i])
            return false;
        n *= shape[i];
    }
    *count = n;
    return true;
}

static bool read_header(FILE *f, const char *path, struct npy_header *h, long *data_start,
                        char *err, size_t err_size)
{
    unsigned char pre[NPY_V2_PREFIX];
    size_t got = fread(pre, 1, NPY_MAGIC_LEN + 2, f);
    if (ferror(f))
        return file_error(err, err_size, path, "cannot read: %s", strerror(errno));
    if (got != NPY_MAGIC_LEN + 2 || memcmp(pre, NPY_MAGIC, NPY_MAGIC_LEN) != 0)
        return file_error(err, err_size, path, "not a .npy file (bad magic)");
    int major = pre[NPY_MAGIC_LEN], minor = pre[NPY_MAGIC_LEN + 1];
    if (major < 1 || major > 3 || minor != 0)
        return file_error(err, err_size, path,
                    "unsupported .npy version %d.%d (1.0, 2.0 and 3.0 are read)", major, minor);
    /* Version 1.0 has a 2-byte header length, 2.0 and 3.0 (UTF-8 header) 4 bytes. */
    size_t prefix = major == 1 ? NPY_V1_PREFIX : NPY_V2_PREFIX;
    size_t len_bytes = prefix - NPY_MAGIC_LEN - 2;
    if (fread(pre + NPY_MAGIC_LEN + 2, 1, len_bytes, f) != len_bytes)
        return file_error(err, err_size, path, "file ends inside the header");
    size_t header_len = 0;
    for (size_t i = len_bytes; i-- > 0;)
        header_len = header_len << 8 | pre[NPY_MAGIC_LEN + 2 + i];
    if (header_len > NPY_MAX_HEADER)
        return file_error(err, err_size, path, "header length %zu is larger than %d bytes", header_len,
                    NPY_MAX_HEADER);

    char *text = malloc(header_len + 1);
    if (!text)
        return file_error(err, err_size, path, "out of memory reading the header");
    if (fread(text, 1, header_len, f) != header_len) {
        free(text);
        return file_error(err, err_size, path, "file ends inside the header");
    }
    /* C string handling would stop at a NUL ('<f4\0>f8' read as '<f4'); NumPy
     * refuses such a header too. */
    const char *nul = memchr(text, '\0', header_len);
    if (nul) {
        size_t offset = prefix + (size_t)(nul - text);
        free(text);
        return file_error(err, err_size, path, "header holds a NUL byte at offset %zu", offset);
    }
    char why[WHY_SIZE];
    bool ok = parse_header(text, header_len, h, why, sizeof why);
    free(text);
    if (!ok)
        return file_error(err, err_size, path, "%s", why);
    *data_start = (long)(prefix + header_len);
    return true;
}

/* Opens path and checks all but the values: the header, the dtype, the order and the
 * data's length; the stream is left at the data. NULL after one line in err. */
static FILE *open_checked(const char *path, struct npy_header *h, size_t *count, char *err,
                          size_t err_size)
{
    FILE *f = open_input_file(path, 0, err, err_size);
    if (!f)
        return NULL;

    long data_start = 0;
    if (!read_header(f, path, h, &data_start, err, err_size)) {
        fclose(f);
        return NULL;
    }
    char shape_text[NPY_SHAPE_TEXT_SIZE];
    npy_format_shape(shape_text, sizeof shape_text, h->ndim, h->shape);
    bool ok = false;
    if (strcmp(h->descr, NPY_DTYPE) != 0)
        file_error(err, err_size, path, "dtype is '%s', expected '%s' (float32)", h->descr,
                   NPY_DTYPE);
    else if (h->fortran_order)
        file_error(err, err_size, path,
             "fortran_order is True: only C-order arrays are read (np.ascontiguousarray)");
    else if (!shape_count(h->ndim, h->shape, count))
        file_error(err, err_size, path, "shape %s has too many elements", shape_text);
    else
        ok = true;
    if (!ok) {
        fclose(f);
        return NULL;
    }

    /* Compare the data length with the shape before allocating: a lying header
     * must neither read past the end nor allocate what the file does not hold. */
    long file_size = -1;
    if (fseek(f, 0, SEEK_END) == 0)
        file_size = ftell(f);
    if (file_size < 0 || fseek(f, data_start, SEEK_SET) != 0) {
        fclose(f);
        file_error(err, err_size, path, "cannot seek: %s", strerror(errno));
        return NULL;
    }
    size_t need = *count * sizeof(float);
    size_t have = file_size > data_start ? (size_t)(file_size - data_start) : 0;
    if (have != need) {
        fclose(f);
        const char *why = have < need ? "file truncated" : "header does not match data";
        file_error(err, err_size, path, "data is %zu bytes but shape %s needs %zu (%s)", have,
                   shape_text, need, why);
        return NULL;
    }
    return f;
}

bool npy_read_shape(const char *path, int *ndim, size_t *shape, char *err, size_t err_size)
{
    struct npy_header h;
    size_t count;
    FILE *f = open_checked(path, &h, &count, err, err_size);
    if (!f)
        return false;
    fclose(f);
    *ndim = h.ndim;
    memcpy(shape, h.shape, sizeof h.shape[0] * (size_t)h.ndim);
    return true;
}

bool npy_read(const char *path, struct npy_array *a, char *err, size_t err_size)
{
    memset(a, 0, sizeof *a);
    struct npy_header h;
    size_t count;
    FILE *f = open_checked(path, &h, &count, err, err_size);
    if (!f)
        return false;
    const size_t need = count * sizeof(float);

    float *data = NULL;
    if (count > 0) {
        data = malloc(need);
        if (!data) {
            fclose(f);
            return file_error(err, err_size, path, "out of host memory for %zu bytes", need);
        }
        if (fread(data, sizeof(float), count, f) != count) {
            free(data);
            fclose(f);
            return file_error(err, err_size, path, "cannot read the data: %s", strerror(errno));
        }
    }
    fclose(f);
    /* NaN or infinity in an input is bad input, not a kernel failure to report later. */
    size_t bad = first_non_finite(data, count);
    if (bad < count) {
        char index_text[NPY_SHAPE_TEXT_SIZE];
        format_index(index_text, sizeof index_text, h.ndim, h.shape, bad);
        const char *what = isnan(data[bad]) ? "NaN" : "infinite";
        free(data);
        return file_error(err, err_size, path,
                          "element %s (flat index %zu) is %s: inputs must be finite numbers",
                          index_text, bad, what);
    }
    a->ndim = h.ndim;
    memcpy(a->shape, h.shape, sizeof h.shape[0] * (size_t)h.ndim);
    a->count = count;
    a->data = data;
    return true;
}

bool npy_write(const char *path, const float *data, int ndim, const size_t *shape, char *err,
               size_t err_size)
{
    if (ndim < 0 || ndim > NPY_MAX_DIMS)
        return file_error(err, err_size, path, "cannot write %d dimensions (0 to %d)", ndim,
                    NPY_MAX_DIMS);
    size_t count;
    if (!shape_count(ndim, shape, &count))
        return file_error(err, err_size, path, "shape has too many elements");

    char shape_text[NPY_SHAPE_TEXT_SIZE];
    npy_format_shape(shape_text, sizeof shape_text, ndim, shape);
    char dict[NPY_DICT_SIZE];
    int dict_len = snprintf(dict, sizeof dict,
                            "{'descr': '%s', 'fortran_order': False, 'shape': %s, }", NPY_DTYPE,
                            shape_text);
    /* Spaces, then '\n', up to the next multiple of NPY_ALIGN. */
    size_t unpadded = NPY_V1_PREFIX + (size_t)dict_len + 1;
    size_t pad = (NPY_ALIGN - unpadded % NPY_ALIGN) % NPY_ALIGN;
    size_t header_len = (size_t)dict_len + pad + 1;
    unsigned char pre[NPY_V1_PREFIX];
    memcpy(pre, NPY_MAGIC, NPY_MAGIC_LEN);
    pre[6] = 1;
    pre[7] = 0;
    pre[8] = (unsigned char)(header_len & 0xff);
    pre[9] = (unsigned char)(header_len >> 8);

    char tmp_path[FILENAME_MAX];
    FILE *f = atomic_open(path, tmp_path, sizeof tmp_path);
    if (!f)
        return file_error(err, err_size, path, "cannot create: %s", strerror(errno));
    fwrite(pre, 1, sizeof pre, f);
    fwrite(dict, 1, (size_t)dict_len, f);
    for (size_t i = 0; i < pad; i++)
        fputc(' ', f);
    fputc('\n', f);
    if (count > 0)
        fwrite(data, sizeof(float), count, f);
    /* Write errors stick in the stream's error flag, which atomic_commit checks. */
    if (!atomic_commit(f, tmp_path, path))
        return file_error(err, err_size, path, "cannot write: %s", strerror(errno));
    return true;
}

void npy_free(struct npy_array *a)
{
    free(a->data);
    memset(a, 0, sizeof *a);
}
