/* The launchers that lesson 08's wgmma steps reuse from the step before: step 5's
 * cp.async kernel is every TMA step's fallback for channel counts the TMA cannot read,
 * step 7's warp-specialised kernel is step 8's, with a wider tile, and step 9's, with
 * two blocks per SM, step 8's launcher is step 16's where the TMA cannot store the
 * output, step 10's persistent ping-pong kernel is step 11's, with a
 * narrower tile, step 10's kernel is step 14's with its output staged, step 11's
 * launcher is step 13's and 14's for the layers they do not take, and steps 13, 14 and
 * 16 are the final kernels' beyond step 12 (launch_wide_or_staged: 16 or 14); step 17 is
 * step 16's launcher in clusters (launch_persistent_wide, CLUSTER = 2).
 * launch_halo_tile returns whether step 13 took the layer. Op is the storage type
 * (mma_fp16, mma_bf16, mma_tf32: mma_ops.cuh); each .cu instantiates the ones the others
 * call. */
#ifndef WGMMA_STEPS_H
#define WGMMA_STEPS_H

#include "conv_args.h"

template <typename Op> void launch_wgmma_cp_async(const struct conv_args *a);
template <typename Op, int BN, int BLOCKS> void launch_warp_specialised(const struct conv_args *a);
template <typename Op> void launch_wide_tile(const struct conv_args *a);
template <typename Op, int BN, bool STAGED> void launch_pingpong(const struct conv_args *a);
template <typename Op, bool STAGED = false> void launch_narrow_tile(const struct conv_args *a);
template <typename Op> bool launch_halo_tile(const struct conv_args *a);
template <typename Op> void launch_staged_store(const struct conv_args *a);
template <typename Op> void launch_wide_or_staged(const struct conv_args *a);
template <typename Op, int CLUSTER> void launch_persistent_wide(const struct conv_args *a);

#endif
