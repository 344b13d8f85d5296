/* Lesson 06's entry points. The prepare() functions factor the filter into a column
 * and a row of taps and copy them into __constant__ memory; the launchers handle
 * any odd ksize up to MAX_KSIZE: radius 0..7 (ksize 1..15) runs unrolled kernels,
 * larger radii the run-time-radius two-pass kernels. */
#ifndef LESSON06_KERNELS_H
#define LESSON06_KERNELS_H

#ifdef __cplusplus
extern "C" {
#endif

struct conv_args;

/* prepare() for two_pass: the factors, and the intermediate image it writes. */
void prepare_two_pass(const struct conv_args *a);
/* prepare() for the fused kernels: the factors (and the intermediate image for the
 * run-time-radius fallback, ksize above 15). */
void prepare_fused(const struct conv_args *a);
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
