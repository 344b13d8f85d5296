/* The round trip the .npy targets (fuzz_npy.c, fuzz_cov_gamma.c) ask of an array they
 * read: written and read again, it must come back unchanged. */
#ifndef NPY_ROUND_TRIP_H
#define NPY_ROUND_TRIP_H

#include "npy.h"

/* Writes a to stem's scratch output path (fuzz_output_path) and reads it back; aborts
 * (fuzz_require) unless both succeed and give a's shape and bytes again. */
void fuzz_npy_round_trip(const struct npy_array *a, const char *stem);

#endif
