/* The CPU convolutions of lesson 01. Each computes the whole output from host
 * pointers before returning (see struct conv_args in conv_args.h). */
#ifndef LESSON01_KERNELS_H
#define LESSON01_KERNELS_H

#include "conv_args.h"

/* The textbook loop nest, one output at a time (1_plain.c). */
conv_launcher conv_plain;
/* Loops reordered so the innermost one streams along a row (2_reordered.c). */
conv_launcher conv_reordered;
/* conv_reordered split over threads (3_openmp.c). */
conv_launcher conv_openmp;

/* The reordered kernel on output rows [y0, y1) of plane (n, k): the unit of work
 * that conv_reordered loops over and conv_openmp hands to threads. */
void conv_rows(const struct conv_args *a, int n, int k, int y0, int y1);

#endif
