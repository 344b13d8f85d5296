/* Lesson 07: a real network layer. Batched NCHW input with cin channels, cout
 * output channels, any odd filter size, "same" padding and a bias per output
 * channel, run on the ten U-Net layers of the seed report. Nine variants, each
 * adding one idea to the one before: one thread per output; an input tile in
 * shared memory shared by 8 output channels; 8 channels x 4 pixels per thread
 * with the weights in shared memory; the layer as an implicit GEMM; then, one at a
 * time, the ideas that feed that GEMM faster: one pixel column per thread, one
 * border test per tap, asynchronous global-to-shared copies, deeper slices and a
 * three-stage ring.
 *
 *   build/bin/07_multichannel --preset unet-128x128
 *   build/bin/07_multichannel --preset unet-3x64 --variant implicit_gemm
 */
#include "conv_op.h"
#include "kernels.h"
#include "lesson.h"

static const struct conv_variant variants[] = {
    {.name = "direct",
     .what = "one thread per output, every operand read from global memory",
     .run = launch_conv2d_direct},
    {.name = "smem_input",
     .what = "16x16 input tile + halo in shared memory, 8 output channels per thread",
     .run = launch_conv2d_smem_input},
    {.name = "reg_block",
     .what = "8 channels x 4 pixels per thread, input and weights in shared memory",
     .run = launch_conv2d_reg_block},
    {.name = "implicit_gemm",
     .what = "implicit GEMM: 128x128 block tiles, 8x8 per thread, double-buffered",
     .scratch_bytes = implicit_gemm_scratch_bytes,
     .setup = setup_conv2d_implicit_gemm,
     .run = launch_conv2d_implicit_gemm},
    {.name = "implicit_gemm_column",
     .what = "implicit_gemm with each thread gathering one pixel column of every slice, "
             "its origin in registers, not a shared pixel table",
     .scratch_bytes = implicit_gemm_scratch_bytes,
     .setup = setup_conv2d_implicit_gemm,
     .run = launch_conv2d_implicit_gemm_column},
    {.name = "implicit_gemm_tap",
     .what = "implicit_gemm_column with one border test for a thread's rows of one tap",
     .scratch_bytes = implicit_gemm_scratch_bytes,
     .setup = setup_conv2d_implicit_gemm,
     .run = launch_conv2d_implicit_gemm_tap},
    {.name = "implicit_gemm_cp",
     .what = "implicit_gemm_tap with slices copied global -> shared by cp.async, not through "
             "registers",
     .scratch_bytes = implicit_gemm_scratch_bytes,
     .setup = setup_conv2d_implicit_gemm,
     .run = launch_conv2d_implicit_gemm_cp},
    {.name = "implicit_gemm_bk16",
     .what = "implicit_gemm_cp with slices 16 rows deep: 1024 FMAs per thread per barrier",
     .scratch_bytes = implicit_gemm_scratch_bytes,
     .setup = setup_conv2d_implicit_gemm,
     .run = launch_conv2d_implicit_gemm_bk16},
    {.name = "implicit_gemm_async",
     .what = "implicit_gemm_bk16 with a 3-stage shared-memory ring: two slices in flight",
     .scratch_bytes = implicit_gemm_scratch_bytes,
     .setup = setup_conv2d_implicit_gemm,
     .run = launch_conv2d_implicit_gemm_async},
};

static const struct conv_spec conv = {
    .variants = variants,
    .variant_count = (int)(sizeof variants / sizeof variants[0]),
    .image_variant = "implicit_gemm",
};

int main(int argc, char **argv)
{
    const struct lesson lesson = {
        .name = "07_multichannel",
        .title = "multi-channel convolution with bias: channel blocking, register tiles, implicit GEMM",
        .default_preset = "unet-128x128",
        .min_compute_capability = 75,
        .op = conv_op(&conv),
    };
    return lesson_main(&lesson, argc, argv);
}
