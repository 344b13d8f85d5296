/* The problem every lesson solves: a batched, multi-channel 2D convolution with
 * "same" zero padding, stride 1, NCHW float32 tensors and KCRS weights.
 *
 *   out[n][k][y][x] = bias[k] + sum_{c,i,j} in[n][c][y+i-r][x+j-r] * w[k][c][i][j]
 *
 * where r = ksize/2 and reads outside the image are zero. This is cross-correlation,
 * as in every deep-learning library (cuDNN's CUDNN_CROSS_CORRELATION). */
#ifndef CONV_PROBLEM_H
#define CONV_PROBLEM_H

#include <stdbool.h>
#include <stddef.h>

/* Largest odd filter size the harness accepts (radius 15). */
#define MAX_KSIZE 31

#ifdef __cplusplus
extern "C" { /* kernels (.cu) call these too */
#endif

struct conv_shape {
    int n;     /* batch */
    int cin;   /* input channels */
    int cout;  /* output channels */
    int h, w;  /* image height and width (input and output: "same" padding) */
    int ksize; /* odd filter size R = S */
    bool bias; /* one bias value per output channel */
};

struct conv_preset {
    const char *name;
    const char *what;
    struct conv_shape shape;
};

/* The fixed preset table; returns NULL for an unknown name. */
const struct conv_preset *find_preset(const char *name);
const struct conv_preset *preset_at(int i); /* NULL past the end */

size_t input_count(const struct conv_shape *s);   /* n*cin*h*w */
size_t output_count(const struct conv_shape *s);  /* n*cout*h*w */
size_t weight_count(const struct conv_shape *s);  /* cout*cin*ksize*ksize */
size_t bias_count(const struct conv_shape *s);    /* cout, or 0 without bias */
/* Multiply-adds of the direct algorithm: n*cout*h*w*cin*ksize^2. */
double conv_macs(const struct conv_shape *s);
double conv_flops(const struct conv_shape *s);    /* 2 * macs */
/* Minimum traffic: every input, weight and bias read once, every output written once. */
double conv_min_bytes(const struct conv_shape *s);
/* True when any tensor has more elements than 32-bit indexing can address. */
bool shape_overflows_int32(const struct conv_shape *s);
/* For conv_variant.unsupported in the single-channel lessons (02-06): NULL when
 * cin = cout = 1 (any batch), else the reason. */
const char *single_channel_only(const struct conv_shape *s);

#ifdef __cplusplus
}
#endif

#endif
