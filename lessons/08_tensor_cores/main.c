/* Lesson 08: the U-Net layers of lesson 07 on tensor cores. The layer is the same
 * implicit GEMM (M = N*H*W pixels, N = K channels, K = C*R*S), now in NHWC so that
 * a GEMM row's k runs along memory, and multiplied by the tensor cores: 16x8x16
 * (fp16, bf16) or 16x8x8 (TF32) tiles per warp instruction. Each variant adds one
 * idea: the WMMA API; mma.sync fed by ldmatrix from swizzled tiles through a
 * cp.async ring, in fp16 and bf16; the same on fp32 data in TF32, which is what
 * PyTorch runs by default; and 3xTF32, fp32 accuracy from three TF32 products.
 * Each runs beside cuDNN at its own precision and layout.
 *
 *   build/bin/08_tensor_cores --preset unet-512x512
 *   build/bin/08_tensor_cores --preset unet-64x64 --variant mma_fp16
 */
#include "conv_op.h"
#include "kernels.h"
#include "lesson.h"

/* mma.sync's m16n8k16 (fp16, bf16) and m16n8k8 (TF32) and cp.async need sm_80; wgmma
 * is sm_90a code, which runs on a 9.0 GPU alone. */
static const struct conv_variant variants[] = {
    {.name = "wmma_fp16",
     .what = "WMMA 16x16x16 fragments, 64x64 block tiles, one unswizzled tile at a time",
     .dtype = DTYPE_FP16,
     .layout = LAYOUT_NHWC,
     .run = launch_conv2d_wmma_fp16},
    {.name = "mma_fp16",
     .what = "mma.sync m16n8k16, ldmatrix from swizzled tiles, 4-stage cp.async ring, 64x32 "
             "warp tiles",
     .dtype = DTYPE_FP16,
     .layout = LAYOUT_NHWC,
     .needs = {.cc = 80, .smem_bytes = mma_smem_bytes},
     .run = launch_conv2d_mma_fp16},
    {.name = "mma_bf16",
     .what = "the same kernel on bf16 (fp32's exponent range, 7 stored mantissa bits)",
     .dtype = DTYPE_BF16,
     .layout = LAYOUT_NHWC,
     .needs = {.cc = 80, .smem_bytes = mma_smem_bytes},
     .run = launch_conv2d_mma_bf16},
    {.name = "mma_tf32",
     .what = "the same kernel on fp32 data, m16n8k8 in TF32 (PyTorch's default)",
     .dtype = DTYPE_TF32,
     .layout = LAYOUT_NHWC,
     .needs = {.cc = 80, .smem_bytes = mma_smem_bytes},
     .run = launch_conv2d_mma_tf32},
    {.name = "wgmma_fp16",
     .what = "Hopper's wgmma, warp-specialised: a TMA producer, 2 consumer warpgroups, "
             "128x256 tiles (128x128 below 256 output channels)",
     .dtype = DTYPE_FP16,
     .layout = LAYOUT_NHWC,
     .needs = {.cc = 90, .arch_specific = true, .code_cc = wgmma_code_cc},
     .run = launch_conv2d_wgmma_fp16},
    {.name = "wgmma_bf16",
     .what = "the same on bf16",
     .dtype = DTYPE_BF16,
     .layout = LAYOUT_NHWC,
     .needs = {.cc = 90, .arch_specific = true, .code_cc = wgmma_code_cc},
     .run = launch_conv2d_wgmma_bf16},
    {.name = "3xtf32",
     .what = "fp32 accuracy on tensor cores: operands split big + small, three TF32 mma",
     .dtype = DTYPE_3XTF32,
     .layout = LAYOUT_NHWC,
     .needs = {.cc = 80, .smem_bytes = mma_3xtf32_smem_bytes},
     .run = launch_conv2d_3xtf32},
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
        .title = "convolution on tensor cores: WMMA, mma.sync, TF32 and 3xTF32",
        .default_preset = "unet-512x512",
        .min_compute_capability = 75,
        .op = conv_op(&conv),
    };
    return lesson_main(&lesson, argc, argv);
}
