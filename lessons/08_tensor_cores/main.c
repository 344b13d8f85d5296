/* Lesson 08: the U-Net layers of lesson 07 on tensor cores, as a ladder of steps, one
 * idea each. The layer is the same implicit GEMM (M = N*H*W pixels, N = K channels, K =
 * C*R*S), now in NHWC so that a GEMM row's k runs along memory, multiplied by the
 * tensor cores. Steps 1-4 use the warp-level instructions every GPU since the A100 has
 * (mma.sync); steps 5-11 and 13-16 Hopper's warpgroup MMA (wgmma) and its copy engine
 * (TMA), 15 at fp32 accuracy (3xTF32); step 12 the first layer, whose three channels
 * make it a memory problem. The
 * last step of each kind runs at every precision it supports: fp16, bf16, fp32 data in
 * TF32 (what PyTorch runs by default), and 3xTF32 (fp32 accuracy from three TF32
 * products). Each runs beside cuDNN at its own precision and layout.
 *
 *   build/bin/08_tensor_cores --preset unet-512x512
 *   build/bin/08_tensor_cores --preset unet-64x64 --variant mma_fp16
 */
#include "conv_op.h"
#include "kernels.h"
#include "lesson.h"

/* mma.sync's m16n8k16 (fp16, bf16) and m16n8k8 (TF32) and cp.async need sm_80; wgmma
 * is sm_90a code, which runs on a 9.0 GPU alone. */
#define NEEDS_MMA(smem)                                                                            \
    {                                                                                              \
        .cc = 80, .smem_bytes = smem                                                               \
    }
#define NEEDS_WGMMA                                                                                \
    {                                                                                              \
        .cc = 90, .arch_specific = true, .code_cc = wgmma_code_cc                                  \
    }
static const struct conv_variant variants[] = {
    {.name = "wmma_fp16",
     .what = "1: the WMMA API, 16x16x16 fragments, 32x32 warp tiles, one unswizzled tile at a "
             "time",
     .dtype = DTYPE_FP16,
     .layout = LAYOUT_NHWC,
     .run = launch_conv2d_wmma_fp16},
    {.name = "mma_fp16_tiles",
     .what = "2: mma.sync m16n8k16 with 64x64 warp tiles, fragments read word by word",
     .dtype = DTYPE_FP16,
     .layout = LAYOUT_NHWC,
     .needs = NEEDS_MMA(NULL),
     .run = launch_conv2d_mma_fp16_tiles},
    {.name = "mma_fp16_ldmatrix",
     .what = "3: + fragments by ldmatrix from XOR-swizzled tiles",
     .dtype = DTYPE_FP16,
     .layout = LAYOUT_NHWC,
     .needs = NEEDS_MMA(NULL),
     .run = launch_conv2d_mma_fp16_ldmatrix},
    {.name = "mma_fp16",
     .what = "4: + a 4-stage cp.async ring",
     .dtype = DTYPE_FP16,
     .layout = LAYOUT_NHWC,
     .needs = NEEDS_MMA(mma_smem_bytes),
     .run = launch_conv2d_mma_fp16},
    {.name = "mma_bf16",
     .what = "4 on bf16 (fp32's exponent range, 7 stored mantissa bits)",
     .dtype = DTYPE_BF16,
     .layout = LAYOUT_NHWC,
     .needs = NEEDS_MMA(mma_smem_bytes),
     .run = launch_conv2d_mma_bf16},
    {.name = "mma_tf32",
     .what = "4 on fp32 data, m16n8k8 in TF32 (PyTorch's default)",
     .dtype = DTYPE_TF32,
     .layout = LAYOUT_NHWC,
     .needs = NEEDS_MMA(mma_smem_bytes),
     .run = launch_conv2d_mma_tf32},
    {.name = "3xtf32",
     .what = "4 at fp32 accuracy: operands split big + small, three TF32 mma",
     .dtype = DTYPE_3XTF32,
     .layout = LAYOUT_NHWC,
     .needs = NEEDS_MMA(mma_3xtf32_smem_bytes),
     .run = launch_conv2d_3xtf32},
    {.name = "wgmma_fp16_cp_async",
     .what = "5: Hopper's wgmma from shared memory, 2 warpgroups, fed by a cp.async ring",
     .dtype = DTYPE_FP16,
     .layout = LAYOUT_NHWC,
     .needs = NEEDS_WGMMA,
     .run = launch_conv2d_wgmma_fp16_cp_async},
    {.name = "wgmma_fp16_tma",
     .what = "6: + TMA boxes and mbarriers, one thread loading, a barrier per step",
     .dtype = DTYPE_FP16,
     .layout = LAYOUT_NHWC,
     .needs = NEEDS_WGMMA,
     .run = launch_conv2d_wgmma_fp16_tma},
    {.name = "wgmma_fp16_ws",
     .what = "7: + warp specialisation: a producer warpgroup, full and empty mbarriers, "
             "setmaxnreg",
     .dtype = DTYPE_FP16,
     .layout = LAYOUT_NHWC,
     .needs = NEEDS_WGMMA,
     .run = launch_conv2d_wgmma_fp16_ws},
    {.name = "wgmma_fp16_wide",
     .what = "8: + 128x256 tiles from 256 output channels on",
     .dtype = DTYPE_FP16,
     .layout = LAYOUT_NHWC,
     .needs = NEEDS_WGMMA,
     .run = launch_conv2d_wgmma_fp16_wide},
    {.name = "wgmma_fp16_2blocks",
     .what = "9: step 7's kernel, two blocks per SM (3 stages each)",
     .dtype = DTYPE_FP16,
     .layout = LAYOUT_NHWC,
     .needs = NEEDS_WGMMA,
     .run = launch_conv2d_wgmma_fp16_2blocks},
    {.name = "wgmma_fp16_pingpong",
     .what = "10: persistent blocks, two consumer warpgroups taking 128x128 tiles in turn",
     .dtype = DTYPE_FP16,
     .layout = LAYOUT_NHWC,
     .needs = NEEDS_WGMMA,
     .run = launch_conv2d_wgmma_fp16_pingpong},
    {.name = "wgmma_fp16_narrow",
     .what = "11: step 10 with 128x64 tiles where there are at most 64 output channels",
     .dtype = DTYPE_FP16,
     .layout = LAYOUT_NHWC,
     .needs = NEEDS_WGMMA,
     .run = launch_conv2d_wgmma_fp16_narrow},
    {.name = "few_channels_fp16",
     .what = "12: where C*R*S <= 32, the weights kept, A gathered, output through shared "
             "memory",
     .dtype = DTYPE_FP16,
     .layout = LAYOUT_NHWC,
     .unsupported = few_channels_unsupported,
     .needs = NEEDS_MMA(NULL),
     .run = launch_conv2d_few_channels_fp16},
    {.name = "wgmma_fp16_halo",
     .what = "13: C <= 64: a tile's input rows loaded once with their halo, weights kept",
     .dtype = DTYPE_FP16,
     .layout = LAYOUT_NHWC,
     .needs = NEEDS_WGMMA,
     .run = launch_conv2d_wgmma_fp16_halo},
    {.name = "wgmma_fp16_staged",
     .what = "14: step 11 with 13's epilogue: the output through shared memory, TMA stores",
     .dtype = DTYPE_FP16,
     .layout = LAYOUT_NHWC,
     .needs = NEEDS_WGMMA,
     .run = launch_conv2d_wgmma_fp16_staged},
    {.name = "wgmma_fp16_persistent",
     .what = "16: step 8's 128x256 tiles, both warpgroups on one, persistent blocks, staged stores",
     .dtype = DTYPE_FP16,
     .layout = LAYOUT_NHWC,
     .needs = NEEDS_WGMMA,
     .run = launch_conv2d_wgmma_fp16_persistent},
    {.name = "wgmma_fp16_multicast",
     .what = "17: step 16 in clusters of two blocks, each loading half the weights into both",
     .dtype = DTYPE_FP16,
     .layout = LAYOUT_NHWC,
     .needs = NEEDS_WGMMA,
     .run = launch_conv2d_wgmma_fp16_multicast},
    {.name = "wgmma_fp16",
     .what = "12, 13, 16 or 14, whichever takes the layer first",
     .dtype = DTYPE_FP16,
     .layout = LAYOUT_NHWC,
     .needs = NEEDS_WGMMA,
     .run = launch_conv2d_wgmma_fp16},
    {.name = "wgmma_bf16",
     .what = "12, 13, 16 or 14 on bf16",
     .dtype = DTYPE_BF16,
     .layout = LAYOUT_NHWC,
     .needs = NEEDS_WGMMA,
     .run = launch_conv2d_wgmma_bf16},
    {.name = "wgmma_tf32",
     .what = "12, 16 or 14 on fp32 data in TF32 (wgmma.m64nNk8 in 14 and 16)",
     .dtype = DTYPE_TF32,
     .layout = LAYOUT_NHWC,
     .needs = NEEDS_WGMMA,
     .run = launch_conv2d_wgmma_tf32},
    {.name = "wgmma_3xtf32",
     .what = "15: 3xTF32 on wgmma: weights split per call, each stage's input as it lands",
     .dtype = DTYPE_3XTF32,
     .layout = LAYOUT_NHWC,
     .needs = NEEDS_WGMMA,
     .scratch_bytes = wgmma_3xtf32_scratch_bytes,
     .run = launch_conv2d_wgmma_3xtf32},
};

/* The library's rows in NCHW too: what a framework using NCHW tensors gets, and
 * fp32 NCHW, where cuDNN has its Winograd kernels (3xTF32's rival at large batch). */
static const struct baseline_format nchw_baselines[] = {
    {DTYPE_FP32, LAYOUT_NCHW},
    {DTYPE_FP16, LAYOUT_NCHW},
    {DTYPE_BF16, LAYOUT_NCHW},
    {DTYPE_TF32, LAYOUT_NCHW},
};

static const struct conv_spec conv = {
    .variants = variants,
    .variant_count = (int)(sizeof variants / sizeof variants[0]),
    .image_variant = "mma_tf32",
    .extra_baselines = nchw_baselines,
    .extra_baseline_count = (int)(sizeof nchw_baselines / sizeof nchw_baselines[0]),
};

int main(int argc, char **argv)
{
    const struct lesson lesson = {
        .name = "08_tensor_cores",
        .title = "convolution on tensor cores, step by step: WMMA, mma.sync, wgmma and TMA",
        .default_preset = "unet-512x512",
        .min_compute_capability = 75,
        .op = conv_op(&conv),
    };
    return lesson_main(&lesson, argc, argv);
}
