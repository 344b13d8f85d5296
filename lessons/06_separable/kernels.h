/* Lesson 06's entry points. Each setup factors the filter into a column and a row of
 * taps and copies them into its step file's __constant__ memory; the launchers handle
 * any odd ksize up to MAX_KSIZE: radius 0..7 (ksize 1..15) runs unrolled kernels,
 * larger radii the run-time-radius two-pass kernels of 1_two_pass.cu. */
#ifndef LESSON06_KERNELS_H
#define LESSON06_KERNELS_H

#include <stddef.h>

#include "conv_args.h"

#ifdef __cplusplus
extern "C" {
#endif

/* A row pass into an intermediate image, then a column pass out of it (1_two_pass.cu);
 * its scratch is the intermediate image. */
size_t two_pass_scratch_bytes(const struct conv_shape *s);
conv_launcher setup_two_pass, launch_two_pass;
/* Scratch for the fused kernels below: the intermediate image of their run-time-radius
 * fallback, two_pass (ksize above 15), else none (1_two_pass.cu). */
size_t fused_scratch_bytes(const struct conv_shape *s);
/* One kernel: a block's row pass, halo rows included, kept in shared memory
 * (2_fused_smem.cu). */
conv_launcher setup_fused_smem, launch_fused_smem;
/* One kernel: each thread's row pass kept in registers, halo rows recomputed
 * (3_fused_registers.cu). */
conv_launcher setup_fused_registers, launch_fused_registers;

#ifdef __cplusplus
}
#endif

#endif
