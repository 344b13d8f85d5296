/* Lesson 03's entry points: copy the filter into __constant__ memory once, then run
 * the naive convolution reading it from there, with a run-time or compile-time radius. */
#ifndef LESSON03_KERNELS_H
#define LESSON03_KERNELS_H

#include "conv_args.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The run-time radius (1_const_runtime.cu). setup: the device-resident weights into
 * that file's __constant__ filter. */
conv_launcher setup_const_runtime, launch_conv2d_const;
/* Radius 0..7 (ksize 1..15) runs a fully unrolled instantiation, larger ones fall
 * back to conv2d_const (2_const_unrolled.cu); setup fills both files' filters. */
conv_launcher setup_const_unrolled, launch_conv2d_const_unrolled;

#ifdef __cplusplus
}
#endif

#endif
