/* Lesson 09: a binarised layer. Inputs and weights are +1/-1 (the signs of real
 * values), the output alpha[k] * sum x*w + bias[k] in fp32, with XNOR-Net's scale
 * alpha[k] = mean |w| of output channel k and zero "same" padding. Each variant adds
 * one idea: the float kernel on signs (binarised, not packed); seed 002's design on
 * packed bits; the same XOR + popcount with reuse through shared memory; the bit
 * tensor cores with .and.popc, then, one step at a time, a cp.async ring, the border
 * correction per window class, stages of 3 taps and the epilogue's tables in shared
 * memory (bmma_and); bmma_and with .xor.popc; the AND kernel writing the packed signs
 * of its output, as a binary network's next layer reads them; and the AND kernel with
 * the input's packing inside its timed run.
 *
 *   build/bin/09_binary --preset bnn-b16c256s28
 *   build/bin/09_binary --preset bnn-b64c512s14 --variant bmma_and
 *   build/bin/09_binary --preset bnn-b16c256s28 --variant bmma_fused
 */
#include "conv_op.h"
#include "kernels.h"
#include "lesson.h"

/* The bit tensor cores' m16n8k256 with .and.popc needs sm_80 (sm_75 has only m8n8k128
 * with .xor.popc); wgmma is sm_90a code, which runs on a 9.0 GPU alone. */
static const struct conv_variant variants[] = {
    {.name = "float_sign",
     .what = "lesson 07's fp32 implicit GEMM on +1/-1 floats, then alpha and bias: no packing",
     .dtype = DTYPE_BINARY,
     .layout = LAYOUT_NCHW,
     .scratch_bytes = float_sign_scratch_bytes,
     .setup = setup_conv2d_float_sign,
     .run = launch_conv2d_float_sign},
    {.name = "seed_layout",
     .what = "seed 002's design: a block per pixel, a thread per output channel, no reuse",
     .dtype = DTYPE_BINARY,
     .layout = LAYOUT_BITS,
     .unsupported = binary_channels_fit_grid,
     .run = launch_conv2d_seed_layout},
    {.name = "packed_xnor",
     .what = "XOR + __popc, 32 channels x 64 pixels per block, weights from shared memory",
     .dtype = DTYPE_BINARY,
     .layout = LAYOUT_BITS,
     .unsupported = binary_channels_fit_grid,
     .run = launch_conv2d_packed_xnor},
    {.name = "bmma",
     .what = "bit tensor cores, mma m16n8k256 .and.popc tap by tap through registers, the "
             "border from each tap's weight counts",
     .dtype = DTYPE_BINARY,
     .layout = LAYOUT_BITS,
     .unsupported = bmma_shape_unsupported,
     .needs = {.cc = 80, .smem_bytes = bmma_smem_per_block},
     .scratch_bytes = bmma_tap_scratch_bytes,
     .setup = setup_conv2d_bmma,
     .run = launch_conv2d_bmma},
    {.name = "bmma_ring",
     .what = "bmma with its stages copied by cp.async into a ring of 3, two in flight",
     .dtype = DTYPE_BINARY,
     .layout = LAYOUT_BITS,
     .unsupported = bmma_shape_unsupported,
     .needs = {.cc = 80, .smem_bytes = bmma_smem_per_block},
     .scratch_bytes = bmma_tap_scratch_bytes,
     .setup = setup_conv2d_bmma,
     .run = launch_conv2d_bmma_ring},
    {.name = "bmma_classes",
     .what = "bmma_ring with the border correction O(1): a base per window class and channel",
     .dtype = DTYPE_BINARY,
     .layout = LAYOUT_BITS,
     .unsupported = bmma_shape_unsupported,
     .needs = {.cc = 80, .smem_bytes = bmma_smem_per_block},
     .scratch_bytes = bmma_scratch_bytes,
     .setup = setup_conv2d_bmma_classes,
     .run = launch_conv2d_bmma_classes},
    {.name = "bmma_rows",
     .what = "bmma_classes with stages of 3 taps of a filter row: their input rows copied once",
     .dtype = DTYPE_BINARY,
     .layout = LAYOUT_BITS,
     .unsupported = bmma_shape_unsupported,
     .needs = {.cc = 80, .smem_bytes = bmma_smem_per_block},
     .scratch_bytes = bmma_scratch_bytes,
     .setup = setup_conv2d_bmma_classes,
     .run = launch_conv2d_bmma_rows},
    {.name = "bmma_and",
     .what = "bmma_rows with alpha, bias and the bases copied to shared memory with the first "
             "stage",
     .dtype = DTYPE_BINARY,
     .layout = LAYOUT_BITS,
     .unsupported = bmma_shape_unsupported,
     .needs = {.cc = 80, .smem_bytes = bmma_smem_per_block},
     .scratch_bytes = bmma_scratch_bytes,
     .setup = setup_conv2d_bmma_classes,
     .run = launch_conv2d_bmma_and},
    {.name = "bmma_xor",
     .what = "the same kernel with .xor.popc (emulated on Hopper)",
     .dtype = DTYPE_BINARY,
     .layout = LAYOUT_BITS,
     .unsupported = bmma_shape_unsupported,
     .needs = {.cc = 80, .smem_bytes = bmma_smem_per_block},
     .scratch_bytes = bmma_scratch_bytes,
     .setup = setup_conv2d_bmma_xor,
     .run = launch_conv2d_bmma_xor},
    {.name = "bmma_fused",
     .what = "bmma_and with a binary network's epilogue: sign(alpha * sum + bias) written as "
             "packed bits",
     .dtype = DTYPE_BINARY,
     .layout = LAYOUT_BITS,
     .output = OUTPUT_SIGN_BITS,
     .unsupported = bmma_shape_unsupported,
     .needs = {.cc = 80, .smem_bytes = bmma_smem_per_block},
     .scratch_bytes = bmma_scratch_bytes,
     .setup = setup_conv2d_bmma_classes,
     .run = launch_conv2d_bmma_fused},
    {.name = "bmma_wgmma",
     .what = "bmma_and on Hopper's warpgroup MMA, wgmma.m64n32k256 .and.popc, B by descriptor",
     .dtype = DTYPE_BINARY,
     .layout = LAYOUT_BITS,
     .unsupported = bmma_shape_unsupported,
     .needs = {.cc = 90,
               .arch_specific = true,
               .code_cc = bmma_wgmma_code_cc,
               .smem_bytes = bmma_smem_per_block},
     .scratch_bytes = bmma_scratch_bytes,
     .setup = setup_conv2d_bmma_classes,
     .run = launch_conv2d_bmma_wgmma},
    {.name = "bmma_tma",
     .what = "the AND layer fed by TMA im2col boxes to wgmma.m64n128k256, a producer warp, "
             "persistent blocks",
     .dtype = DTYPE_BINARY,
     .layout = LAYOUT_BITS,
     .unsupported = bmma_shape_unsupported,
     .needs = {.cc = 90,
               .arch_specific = true,
               .code_cc = bmma_tma_code_cc,
               .smem_bytes = bmma_tma_smem_per_block},
     .scratch_bytes = bmma_tma_scratch_bytes,
     .setup = setup_conv2d_bmma_tma,
     .run = launch_conv2d_bmma_tma},
    {.name = "pack_bmma_and",
     .what = "bmma_and on +1/-1 float NHWC input, packed to bits inside the timed run",
     .dtype = DTYPE_BINARY,
     .layout = LAYOUT_NHWC,
     .unsupported = bmma_shape_unsupported,
     .needs = {.cc = 80, .smem_bytes = bmma_smem_per_block},
     .scratch_bytes = pack_bmma_scratch_bytes,
     .setup = setup_conv2d_pack_bmma_and,
     .run = launch_conv2d_pack_bmma_and},
};

static const struct conv_spec conv = {
    .variants = variants,
    .variant_count = (int)(sizeof variants / sizeof variants[0]),
    .image_variant = "packed_xnor",
};

int main(int argc, char **argv)
{
    const struct lesson lesson = {
        .name = "09_binary",
        .title = "binarised convolution: packed bits, XOR/AND + popcount, bit tensor cores",
        .default_preset = "bnn-b16c256s28",
        .min_compute_capability = 75,
        .op = conv_op(&conv),
    };
    return lesson_main(&lesson, argc, argv);
}
