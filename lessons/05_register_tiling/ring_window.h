/* Step 3 of lesson 05, the ring kernels (3_ring_window.cu), with the run-time-radius
 * kernel they fall back on (any_radius.cu): a library of their own, which lesson 06
 * links for its full_2d row. */
#ifndef LESSON05_RING_WINDOW_H
#define LESSON05_RING_WINDOW_H

#ifdef __cplusplus
extern "C" {
#endif

struct conv_args;

/* setup() of the ring variants: the device-resident weights and bias into
 * __constant__ memory. */
void setup_ring_window(const struct conv_args *a);
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
