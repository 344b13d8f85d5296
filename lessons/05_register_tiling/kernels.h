/* Lesson 05's entry points: copy the filter into __constant__ memory once, then run
 * one of the register-tiled kernels. Every launcher handles any odd ksize up to
 * MAX_KSIZE: radius 0..7 (ksize 1..15) runs a fully unrolled instantiation, larger
 * radii the run-time-radius kernel. Each step file has its own __constant__ filter,
 * which its setup fills. */
#ifndef LESSON05_KERNELS_H
#define LESSON05_KERNELS_H

#include "ring_window.h" /* step 3 */

#ifdef __cplusplus
extern "C" {
#endif

struct conv_args;

/* Step 1, outputs side by side along a row (1_row_tile.cu). */
void setup_row_tile(const struct conv_args *a);
/* One output per thread: lesson 03's unrolled kernel, the starting point. */
void launch_one_per_thread(const struct conv_args *a);
/* 4 outputs along a row per thread, scalar loads. */
void launch_row4(const struct conv_args *a);
/* 8 outputs along a row per thread, scalar loads. */
void launch_row8(const struct conv_args *a);
/* 8 outputs per thread with 16-byte loads where the rows allow them. */
void launch_row8_vec4(const struct conv_args *a);

/* Step 2, a strip of rows per thread (2_sliding_window.cu). */
void setup_sliding_window(const struct conv_args *a);
/* A strip of 32 rows x 8 outputs per thread: each input row is loaded once, just
 * before its FMAs, and feeds every output row it touches (the vertical register
 * window). */
void launch_strip32(const struct conv_args *a);
/* strip32, loading the next input row while the current one is used. */
void launch_strip32_ahead(const struct conv_args *a);
/* strip32_ahead with strips short enough to give every SM 16 blocks. */
void launch_strip(const struct conv_args *a);
/* strip, also asking L2 for the input row a few rows ahead: more bytes in flight. */
void launch_strip_prefetch(const struct conv_args *a);

#ifdef __cplusplus
}
#endif

#endif
