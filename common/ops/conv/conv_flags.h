/* The convolution's own flags: its data (.npy files, a picture, a filter), how they go
 * together, and their --help. */
#ifndef CONV_FLAGS_H
#define CONV_FLAGS_H

#include <stdbool.h>
#include <stddef.h>

#include "op.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Indices into options.data, in the order of conv_data_flags. */
enum conv_data {
    DATA_INPUT,
    DATA_WEIGHTS,
    DATA_BIAS,
    DATA_IMAGE,
    DATA_FILTER,
    DATA_OUT,
    CONV_DATA_FLAGS
};

#define IMAGE_DEFAULT_KSIZE 5
#define IMAGE_DEFAULT_FILTER "gaussian"

/* Declares the convolution's presets, shape rules, data flags and --help in op. */
void conv_flags_declare(struct op *op);

#ifdef __cplusplus
}
#endif

#endif
