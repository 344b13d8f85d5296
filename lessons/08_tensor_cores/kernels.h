/* The launchers of lesson 08, one file per idea. Each enqueues its kernel on
 * a->stream; input, weights and output are NHWC (weights KRSC) device tensors in the
 * variant's dtype, bias is fp32 (NULL when the layer has none). */
#ifndef KERNELS_H
#define KERNELS_H

#include <stdbool.h>
#include <stddef.h>

#include "conv_args.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Step 1: the WMMA API on fp16, 16x16x16 fragments, one tile at a time (01_wmma.cu). */
conv_launcher launch_conv2d_wmma_fp16;

/* Step 2: mma.sync with 64 x 64 warp tiles, fragments read word by word (02_mma_sync.cu). */
conv_launcher launch_conv2d_mma_fp16_tiles;

/* Step 3: + ldmatrix from swizzled tiles (03_ldmatrix.cu). */
conv_launcher launch_conv2d_mma_fp16_ldmatrix;

/* Step 4: + a cp.async ring (04_cp_async_ring.cu), on fp16, bf16, fp32 in TF32, and fp32
 * in 3xTF32; their shared memory per block. */
conv_launcher launch_conv2d_mma_fp16, launch_conv2d_mma_bf16, launch_conv2d_mma_tf32,
    launch_conv2d_3xtf32;
size_t mma_smem_bytes(const struct conv_shape *s);
size_t mma_3xtf32_smem_bytes(const struct conv_shape *s);

/* Hopper's warpgroup MMA, which runs on a 9.0 GPU where the build has sm_90a code:
 * wgmma_code_cc() is 90 then, else 0 (05_wgmma.cu). */
int wgmma_code_cc(void);
/* Step 5: wgmma fed by a cp.async ring (05_wgmma.cu). */
conv_launcher launch_conv2d_wgmma_fp16_cp_async;
/* Step 6: by TMA loads and mbarriers (06_tma.cu). */
conv_launcher launch_conv2d_wgmma_fp16_tma;
/* Step 7: + warp specialisation (07_warp_specialised.cu). */
conv_launcher launch_conv2d_wgmma_fp16_ws;
/* Step 8: + 128 x 256 tiles (08_wide_tile.cu). */
conv_launcher launch_conv2d_wgmma_fp16_wide;
/* Step 9: step 7 at two blocks per SM (09_two_blocks.cu). */
conv_launcher launch_conv2d_wgmma_fp16_2blocks;
/* Step 10: persistent blocks, ping-pong consumers (10_pingpong.cu). */
conv_launcher launch_conv2d_wgmma_fp16_pingpong;
/* Step 11: + 128 x 64 tiles below 65 output channels (11_narrow_tile.cu). */
conv_launcher launch_conv2d_wgmma_fp16_narrow;
/* Step 12: layers whose C*R*S fits one tile of k (<= 32: a first layer): the weights kept,
 * A gathered, mma.sync, the output written through shared memory (12_few_channels.cu);
 * NULL where it takes the shape, else why not. */
conv_launcher launch_conv2d_few_channels_fp16;
const char *few_channels_unsupported(const struct conv_shape *s);
/* Step 13: at most 64 input channels (128 bytes a pixel): each tile's input rows loaded
 * once with their halo, every tap's A a shifted view of them, the block's weights kept in
 * shared memory (13_halo_tile.cu); step 11 elsewhere. */
conv_launcher launch_conv2d_wgmma_fp16_halo;
/* Step 14: step 11 with step 13's epilogue, the output through shared memory and TMA
 * stores (14_staged_store.cu). */
conv_launcher launch_conv2d_wgmma_fp16_staged;
/* Step 15: 3xTF32 on wgmma, in step 7's kernel: the weights split per call into the
 * scratch (big and small parts, twice the weights' bytes), each stage's input split as it
 * lands (15_wgmma_3xtf32.cu); step 4's 3xtf32 where the TMA cannot read the layer. */
conv_launcher launch_conv2d_wgmma_3xtf32;
size_t wgmma_3xtf32_scratch_bytes(const struct conv_shape *s);
/* Step 16: step 8's 128 x 256 tiles in persistent blocks, both consumer warpgroups on one
 * tile, the output staged and stored by the TMA (16_persistent_wide.cu). */
conv_launcher launch_conv2d_wgmma_fp16_persistent;
/* Step 17: step 16 in clusters of two blocks that share each step's weights, loaded half
 * by each with a multicast TMA load (17_multicast.cu). */
conv_launcher launch_conv2d_wgmma_fp16_multicast;
/* The final kernels, on fp16, bf16 and TF32: step 12 where it takes the layer, else step
 * 13 where it does, else step 16 where the layer has 256 output channels or more and C*R*S
 * >= 2048, else step 14. */
conv_launcher launch_conv2d_wgmma_fp16, launch_conv2d_wgmma_bf16, launch_conv2d_wgmma_tf32;

/* Where the final kernels (wgmma_fp16, ...) are faster than mma.sync's on a 9.0 GPU (for
 * those who pick one: the PyTorch package, lesson 12): step 12's few-channel kernel, or
 * the TMA paths of steps 11, 13 and 14, which need whole 16-byte rows of channels (8 fp16 or
 * bf16). Where they have them, they win at any width: unet-64x64 took 0.33 ms on
 * mma_fp16, 0.22 on step 11 (results/h200/08_ladder/bench_9aed403.csv) and 0.12 on step
 * 13 (bench_bc964d1.csv); unet-3x64 (3 channels) 0.19 on mma_fp16 and 0.076 on step 12
 * (bench_34bf365.csv). */
static inline bool wgmma_beats_mma(const struct conv_shape *s)
{
    return s->cin % 8 == 0 || few_channels_unsupported(s) == NULL;
}

#ifdef __cplusplus
}
#endif

#endif
