/* Lesson 06's entry points. setup_factors() factors the filter into a column and a
 * row of taps and copies them into __constant__ memory; the launchers handle
 * any odd ksize up to MAX_KSIZE: radius 0..7 (ksize 1..15) runs unrolled kernels,
 * larger radii the run-time-radius two-pass kernels. */
#ifndef LESSON06_KERNELS_H
#define LESSON06_KERNELS_H

#ifdef __cplusplus
extern "C" {
#endif

#include <stddef.h>

struct conv_args;
struct conv_shape;

/* setup() of every variant here: the filter's factors to constant memory. */
void setup_factors(const struct conv_args *a);
/* Scratch for two_pass: the intermediate image it writes. */
size_t two_pass_scratch_bytes(const struct conv_shape *s);
/* Scratch for the fused kernels: the intermediate image of the run-time-radius
 * fallback (ksize above 15), else none. */
size_t fused_scratch_bytes(const struct conv_shape *s);
/* A row pass into an intermediate image, then a column pass out of it. */
void launch_two_pass(const struct conv_args *a);
/* One kernel: a block's row pass, halo rows included, kept in shared memory. */
void launch_fused_smem(const struct conv_args *a);
/* One kernel: each thread's row pass kept in registers, halo rows recomputed. */
void launch_fused_registers(const struct conv_args *a);

#ifdef __cplusplus
}
#endif

#endif
