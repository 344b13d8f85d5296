/* Lesson 05's entry points: copy the filter into __constant__ memory once, then run
 * one of the register-tiled kernels. Every launcher handles any odd ksize up to
 * MAX_KSIZE: radius 0..7 (ksize 1..15) runs a fully unrolled instantiation, larger
 * radii the run-time-radius kernel. Each step file has its own __constant__ filter,
 * which its setup fills. */
#ifndef LESSON05_KERNELS_H
#define LESSON05_KERNELS_H

#include "conv_args.h"
#include "ring_window.h" /* step 3 */

#ifdef __cplusplus
extern "C" {
#endif

/* Step 1, outputs side by side along a row (1_row_tile.cu): one output per thread
 * (the baseline: lesson 03's work per output, in this kernel's form); 4, then 8 outputs per
 * thread, scalar loads; 8 outputs with 16-byte loads where the rows allow them. */
conv_launcher setup_row_tile, launch_one_per_thread, launch_row4, launch_row8, launch_row8_vec4;

/* Step 2, a strip of rows per thread (2_sliding_window.cu). strip32: a strip of 32 rows
 * x 8 outputs per thread, each input row loaded once, just before its FMAs, and fed
 * into every output row it touches (the vertical register window); strip32_ahead:
 * loading the next input row while the current one is used; strip: strips short
 * enough to give every SM 16 blocks; strip_prefetch: also asking L2 for the input row
 * a few rows ahead, more bytes in flight. */
conv_launcher setup_sliding_window, launch_strip32, launch_strip32_ahead, launch_strip,
    launch_strip_prefetch;

#ifdef __cplusplus
}
#endif

#endif
