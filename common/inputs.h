/* The host side of a run: the input, weights and bias, drawn at random from the
 * seed, built from a named filter, or read from .npy files or an image. All file
 * reading happens here, before any GPU work. */
#ifndef INPUTS_H
#define INPUTS_H

#include "cli.h"
#include "image.h"
#include "lesson.h"

struct host_problem {
    struct conv_shape shape;
    float *input, *weights, *bias; /* bias NULL when shape.bias is false */
    int input_ndim;                /* npy mode: the output keeps the input's layout */
    struct image image;            /* image mode: the picture (its planes are the batch) */
};

/* Fills p (and o->shape) as the options ask; returns 0, or 2 after one error line.
 * Host memory it cannot get ends the run with 2 (alloc.h). */
int load_inputs(const struct lesson *lesson, struct options *o, struct host_problem *p);
void free_inputs(struct host_problem *p);

#endif
