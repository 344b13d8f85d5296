/* Step 3 of lesson 05, the ring kernels (3_ring_window.cu), with the run-time-radius
 * kernel they fall back on (any_radius.cu): a library of their own, which lesson 06
 * links for its full_2d row. */
#ifndef LESSON05_RING_WINDOW_H
#define LESSON05_RING_WINDOW_H

#include "conv_args.h"

#ifdef __cplusplus
extern "C" {
#endif

/* setup: the device-resident weights and bias into __constant__ memory. From strip,
 * ring8_regs: a block-wide strip, 8 outputs per thread, the input rows passing through
 * a ring of shared rows; each thread loads its share of a row into registers a row
 * ahead and stores it into the ring. ring8_async: the ring filled by cp.async, rows in
 * flight hold no registers. ring8_wave: strips as tall as one wave of resident blocks
 * allows. strip_ring8: a launch bound that sets a register budget per thread.
 * strip_ring: 4 outputs per thread, fewer registers per thread, more warps. */
conv_launcher setup_ring_window, launch_ring8_regs, launch_ring8_async, launch_ring8_wave,
    launch_strip_ring8, launch_strip_ring;

#ifdef __cplusplus
}
#endif

#endif
