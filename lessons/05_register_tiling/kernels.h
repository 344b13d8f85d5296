/* Lesson 05's entry points: copy the filter into __constant__ memory once, then run
 * one of the register-tiled kernels. Every launcher handles any odd ksize up to
 * MAX_KSIZE: radius 0..7 (ksize 1..15) runs a fully unrolled instantiation, larger
 * radii the run-time-radius kernel. */
#ifndef LESSON05_KERNELS_H
#define LESSON05_KERNELS_H

#ifdef __cplusplus
extern "C" {
#endif

struct conv_args;

/* prepare(): the device-resident weights and bias into __constant__ memory. */
void upload_filter(const struct conv_args *a);
/* One output per thread: lesson 03's unrolled kernel, the starting point. */
void launch_one_per_thread(const struct conv_args *a);
/* 4 outputs along a row per thread, scalar loads. */
void launch_row4(const struct conv_args *a);
/* 8 outputs along a row per thread, scalar loads. */
void launch_row8(const struct conv_args *a);
/* 8 outputs per thread with 16-byte loads where the rows allow them. */
void launch_row8_vec4(const struct conv_args *a);
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
/* From strip: a block-wide strip, 8 outputs per thread, the input rows passing through
 * a ring of shared rows; each thread loads its share of a row into registers a row
 * ahead and stores it into the ring. */
void launch_ring8_regs(const struct conv_args *a);
/* ring8_regs with the ring filled by cp.async: rows in flight hold no registers. */
void launch_ring8_async(const struct conv_args *a);
/* ring8_async with strips as tall as one wave of resident blocks allows. */
void launch_ring8_wave(const struct conv_args *a);
/* ring8_wave with a launch bound that sets a register budget per thread. */
void launch_strip_ring8(const struct conv_args *a);
/* strip_ring8 with 4 outputs per thread: fewer registers per thread, more warps. */
void launch_strip_ring(const struct conv_args *a);

#ifdef __cplusplus
}
#endif

#endif
