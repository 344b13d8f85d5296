/* Lesson 06's entry points. Each setup factors the filter into a column and a row of
 * taps and copies them into its step file's __constant__ memory; the launchers handle
 * any odd ksize up to MAX_KSIZE: radius 0..7 (ksize 1..15) runs unrolled kernels,
 * larger radii the run-time-radius two-pass kernels of 1_two_pass.cu. */
#ifndef LESSON06_KERNELS_H
#define LESSON06_KERNELS_H

#ifdef __cplusplus
extern "C" {
#endif

#include <stddef.h>

struct conv_args;
struct conv_shape;

/* Scratch for two_pass: the intermediate image it writes. */
size_t two_pass_scratch_bytes(const struct conv_shape *s);
/* Scratch for the fused kernels: the intermediate image of the run-time-radius
 * fallback (ksize above 15), else none. */
size_t fused_scratch_bytes(const struct conv_shape *s);
/* A row pass into an intermediate image, then a column pass out of it (1_two_pass.cu). */
void setup_two_pass(const struct conv_args *a);
void launch_two_pass(const struct conv_args *a);
/* One kernel: a block's row pass, halo rows included, kept in shared memory
 * (2_fused_smem.cu). */
void setup_fused_smem(const struct conv_args *a);
void launch_fused_smem(const struct conv_args *a);
/* One kernel: each thread's row pass kept in registers, halo rows recomputed
 * (3_fused_registers.cu). */
void setup_fused_registers(const struct conv_args *a);
void launch_fused_registers(const struct conv_args *a);

#ifdef __cplusplus
}
#endif

#endif
