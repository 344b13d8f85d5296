/* Lesson 03's entry points: copy the filter into __constant__ memory once, then run
 * the naive convolution reading it from there, with a run-time or compile-time radius. */
#ifndef LESSON03_KERNELS_H
#define LESSON03_KERNELS_H

#ifdef __cplusplus
extern "C" {
#endif

struct conv_args;

/* prepare(): the device-resident weights into the __constant__ filter. */
void copy_filter_to_constant(const struct conv_args *a);
void launch_conv2d_const(const struct conv_args *a);
/* Radius 0..7 (ksize 1..15) runs a fully unrolled instantiation, larger ones
 * fall back to conv2d_const. */
void launch_conv2d_const_unrolled(const struct conv_args *a);

#ifdef __cplusplus
}
#endif

#endif
