#define _POSIX_C_SOURCE 200809L /* strcasecmp */
#include "inputs.h"

#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "alloc.h"
#include "escape.h"
#include "filters.h"
#include "npy.h"
#include "rng.h"

#define ERROR_SIZE 512

/* Prints one error line and returns the exit code of bad input. */
static int input_error(const char *format, ...)
{
    va_list args;
    va_start(args, format);
    vprint_error(format, args);
    va_end(args);
    return 2;
}

static float *alloc_floats(size_t count, const char *what)
{
    return host_alloc(count * sizeof(float), what);
}

/* Resolves the filter (a file sets the size unless --ksize or a preset did) and
 * gives every (output, input) channel pair the same taps. */
static int filter_weights(const struct conv_request *q, struct host_problem *p)
{
    float taps[MAX_KSIZE * MAX_KSIZE];
    char err[ERROR_SIZE];
    int ksize = p->shape.ksize;
    if (!filter_from_spec(q->filter, &ksize, taps, err, sizeof err))
        return input_error("--filter %s", err);
    bool size_free = !q->ksize_given && strcmp(q->preset, "custom") == 0;
    if (ksize != p->shape.ksize && !size_free)
        return input_error("--filter %s is %dx%d but the problem has ksize %d", q->filter,
                           ksize, ksize, p->shape.ksize);
    p->shape.ksize = ksize;
    p->weights = alloc_floats(weight_count(&p->shape), "the weights");
    size_t plane = (size_t)ksize * ksize;
    for (size_t i = 0; i < weight_count(&p->shape) / plane; i++)
        memcpy(p->weights + i * plane, taps, plane * sizeof *taps);
    return 0;
}

/* Rank-1 taps u_i * v_j for each channel pair: a separable filter. */
static void separable_weights(const struct conv_shape *s, float *w, struct rng *r)
{
    float u[MAX_KSIZE], v[MAX_KSIZE];
    size_t plane = (size_t)s->ksize * s->ksize;
    for (size_t p = 0; p < weight_count(s) / plane; p++) {
        fill_uniform(u, (size_t)s->ksize, -1.0f, 1.0f, r);
        fill_uniform(v, (size_t)s->ksize, -1.0f, 1.0f, r);
        for (int i = 0; i < s->ksize; i++)
            for (int j = 0; j < s->ksize; j++)
                w[p * plane + (size_t)i * s->ksize + j] = u[i] * v[j];
    }
}

static int random_problem(const struct conv_request *q, struct host_problem *p)
{
    p->shape = q->shape;
    p->input = alloc_floats(input_count(&p->shape), "the input");
    struct rng r = rng_seeded(q->seed);
    fill_uniform(p->input, input_count(&p->shape), -1.0f, 1.0f, &r);
    if (q->filter) {
        int rc = filter_weights(q, p);
        if (rc)
            return rc;
    } else {
        p->weights = alloc_floats(weight_count(&p->shape), "the weights");
        if (q->separable)
            separable_weights(&p->shape, p->weights, &r);
        else
            fill_uniform(p->weights, weight_count(&p->shape), -1.0f, 1.0f, &r);
    }
    if (p->shape.bias) {
        p->bias = alloc_floats(bias_count(&p->shape), "the bias");
        fill_uniform(p->bias, bias_count(&p->shape), -1.0f, 1.0f, &r);
    }
    return 0;
}

/* The output image's format follows the input's: grey in, .pgm out; RGB in, .ppm out. */
static bool extension_is(const char *path, const char *ext)
{
    size_t n = strlen(path), e = strlen(ext);
    return n >= e && strcasecmp(path + n - e, ext) == 0;
}

static int image_problem(const struct conv_request *q, struct host_problem *p)
{
    char err[ERROR_SIZE];
    if (!image_read(q->image, &p->image, err, sizeof err))
        return input_error("--image %s", err);
    const char *ext = p->image.planes == 1 ? ".pgm" : ".ppm";
    if (!extension_is(q->out, ext))
        return input_error("--out %s: a %s image is written as %s", q->out,
                           p->image.planes == 1 ? "grey" : "colour", ext);
    struct conv_shape s = {p->image.planes, 1, 1, p->image.height, p->image.width,
                           q->shape.ksize, false};
    p->shape = s;
    p->input = p->image.data; /* owned by p->image */
    return filter_weights(q, p);
}

static bool dim_to_int(size_t d, int *out)
{
    if (d == 0 || d > INT_MAX)
        return false;
    *out = (int)d;
    return true;
}

/* Input: HxW, CxHxW or NxCxHxW; weights: RxS or KxCxRxS; bias: K. */
static int npy_shape(const struct npy_array *in, const struct npy_array *w,
                     const struct npy_array *b, const struct conv_request *q, struct conv_shape *s)
{
    static const int lead_dims[] = {0, 0, 2, 1, 0}; /* leading dims missing per ndim */
    if (in->ndim < 2 || in->ndim > 4)
        return input_error("--input %s: expected a 2-D (HxW), 3-D (CxHxW) or 4-D (NxCxHxW) "
                           "array, got %d-D", q->input, in->ndim);
    size_t dims[4] = {1, 1, 1, 1};
    memcpy(dims + lead_dims[in->ndim], in->shape, (size_t)in->ndim * sizeof *dims);
    bool ok = dim_to_int(dims[0], &s->n) && dim_to_int(dims[1], &s->cin) &&
              dim_to_int(dims[2], &s->h) && dim_to_int(dims[3], &s->w);
    if (!ok)
        return input_error("--input %s: every dimension must be 1..%d", q->input, INT_MAX);
    size_t k = 1, c = 1, r, rs;
    if (w->ndim == 2) {
        r = w->shape[0], rs = w->shape[1];
    } else if (w->ndim == 4) {
        k = w->shape[0], c = w->shape[1], r = w->shape[2], rs = w->shape[3];
    } else {
        return input_error("--weights %s: expected a 2-D (RxS) or 4-D (KxCxRxS) array, got %d-D",
                           q->weights, w->ndim);
    }
    if (w->count == 0) {
        char shape[NPY_SHAPE_TEXT_SIZE];
        npy_format_shape(shape, sizeof shape, w->ndim, w->shape);
        return input_error("--weights %s: shape %s has a zero extent: every dimension must be "
                           "at least 1", q->weights, shape);
    }
    if (r != rs || r % 2 == 0 || r > MAX_KSIZE)
        return input_error("--weights %s: filters must be square with an odd size 1..%d, "
                           "got %zux%zu", q->weights, MAX_KSIZE, r, rs);
    if (c != (size_t)s->cin)
        return input_error("--weights %s: %zu input channels, but --input %s has %d",
                           q->weights, c, q->input, s->cin);
    if (!dim_to_int(k, &s->cout))
        return input_error("--weights %s: %zu output channels, more than %d", q->weights, k,
                           INT_MAX);
    s->ksize = (int)r;
    s->bias = b != NULL;
    if (b && (b->ndim != 1 || b->shape[0] != k))
        return input_error("--bias %s: expected a 1-D array of %zu values (one per output "
                           "channel)", q->bias, k);
    if (shape_overflows_int32(s))
        return input_error("--input %s: the output would have more than 2^31-1 elements",
                           q->input);
    return 0;
}

static int npy_problem(const struct conv_request *q, struct host_problem *p)
{
    char err[ERROR_SIZE];
    struct npy_array in = {0}, w = {0}, b = {0};
    int rc = 2;
    if (!npy_read(q->input, &in, err, sizeof err)) {
        print_error("--input %s", err);
        goto done;
    }
    if (!npy_read(q->weights, &w, err, sizeof err)) {
        print_error("--weights %s", err);
        goto done;
    }
    if (q->bias && !npy_read(q->bias, &b, err, sizeof err)) {
        print_error("--bias %s", err);
        goto done;
    }
    rc = npy_shape(&in, &w, q->bias ? &b : NULL, q, &p->shape);
    if (rc)
        goto done;
    p->input_ndim = in.ndim;
    p->input = in.data, in.data = NULL;
    p->weights = w.data, w.data = NULL;
    p->bias = b.data, b.data = NULL;
done:
    npy_free(&in);
    npy_free(&w);
    npy_free(&b);
    return rc;
}

int load_inputs(const struct conv_request *q, struct host_problem *p)
{
    memset(p, 0, sizeof *p);
    return q->image ? image_problem(q, p) : q->input ? npy_problem(q, p) : random_problem(q, p);
}

void free_inputs(struct host_problem *p)
{
    if (p->image.data)
        image_free(&p->image);
    else
        free(p->input);
    free(p->weights);
    free(p->bias);
    memset(p, 0, sizeof *p);
}
