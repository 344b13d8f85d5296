/* The host side of a run: the input, weights and bias, drawn at random from the
 * seed, built from a named filter, or read from .npy files or an image. All file
 * reading happens here, before any GPU work. */
#ifndef INPUTS_H
#define INPUTS_H

#include <stdbool.h>
#include <stdint.h>

#include "conv_problem.h"
#include "image.h"

#ifdef __cplusplus
extern "C" {
#endif

/* What the flags ask of the convolution's problem. */
struct conv_request {
    const char *input, *weights, *bias; /* .npy files (--input, --weights, --bias), or NULL */
    const char *image, *out;            /* image mode (--image, --out), or NULL */
    const char *filter;                 /* --filter: a named or file filter; NULL: random */
    struct conv_shape shape;            /* a bench run's; the ksize of the others */
    const char *preset;                 /* "custom" unless a preset named the problem */
    bool ksize_given;
    bool separable; /* random weights as outer products of two vectors (rank 1) */
    uint64_t seed;
};

struct host_problem {
    struct conv_shape shape;
    float *input, *weights, *bias; /* bias NULL when shape.bias is false */
    int input_ndim;                /* npy mode: the output keeps the input's layout */
    struct image image;            /* image mode: the picture (its planes are the batch) */
};

/* Fills p as the request asks (its shape from the files or the image when given);
 * returns 0, or 2 after one error line. Host memory it cannot get ends the run with 2
 * (alloc.h). */
int load_inputs(const struct conv_request *q, struct host_problem *p);
void free_inputs(struct host_problem *p);

#ifdef __cplusplus
}
#endif

#endif
