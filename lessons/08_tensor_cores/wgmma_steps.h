/* The launchers that lesson 08's wgmma steps reuse from the step before: step 5's
 * cp.async kernel is every TMA step's fallback for channel counts the TMA cannot read,
 * step 7's warp-specialised kernel is step 8's, with a wider tile, and step 9's, with
 * two blocks per SM, step 10's persistent ping-pong kernel is step 11's, with a
 * narrower tile, and step 11's launcher is step 13's for the layers it does not take;
 * step 13's is the final kernels' beyond step 12's. Op is
 * the storage type (mma_fp16, mma_bf16, mma_tf32: mma_ops.cuh); each .cu instantiates
 * the ones the others call. */
#ifndef WGMMA_STEPS_H
#define WGMMA_STEPS_H

#include "conv_args.h"

template <typename Op> void launch_wgmma_cp_async(const struct conv_args *a);
template <typename Op, int BN, int BLOCKS> void launch_warp_specialised(const struct conv_args *a);
template <typename Op, int BN> void launch_pingpong(const struct conv_args *a);
template <typename Op> void launch_narrow_tile(const struct conv_args *a);
template <typename Op> void launch_halo_tile(const struct conv_args *a);

#endif
