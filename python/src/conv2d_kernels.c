/* The course's fastest kernel for each convolution, from the measured tables of
 * results/h200/bench.csv: for fp32, lesson 05's strip_ring on single-channel images and
 * lesson 07's implicit_gemm_async on multi-channel layers; on tensor cores (fp16, bf16,
 * TF32), lesson 08's final kernels on an H100 or H200 where lesson 08's
 * wgmma_beats_mma says they are faster (step 12 on first layers, step 11's wgmma on
 * whole 16-byte channel rows), else its mma.sync (results/h200/08_ladder/); 3xTF32 on
 * step 15's wgmma there (results/h200/08_ladder/bench_step15*.csv); for binary
 * layers lesson 09's bit tensor cores, its packed_xnor on a GPU without them. Seed 000's
 * naive and tiled kernels (lessons 02 and 04) run when named. */
#include "conv2d_kernels.h"

#include <stdio.h>
#include <string.h>

#include "lessons/04_shared_tiling/kernels.h"
#include "lessons/05_register_tiling/ring_window.h"
#include "lessons/07_multichannel/implicit_gemm.h"
#include "lessons/08_tensor_cores/kernels.h"
#include "lessons/09_binary/kernels.h"
#include "naive_blocks.h"
#include "packed_xnor.h"

/* Every lesson's minimum (mma.sync's fp16 needs 8.0, as lesson 08's table says). */
#define COURSE_CC 75
#define MMA_CC 80
#define WMMA_CC 70
#define WGMMA_CC 90
/* Lesson 07 puts output-channel tiles in gridDim.y (at most 65535), 128 channels each
 * above 64 channels. */
#define MAX_GRID_Y 65535
#define GEMM_TILE_COUT 128

/* Lesson 05's setup copies the bias into constant memory from device memory: a layer
 * without one gets a zero there, as every kernel with a constant filter does
 * (constant_filter.c). */
static size_t zero_bias_bytes(const struct conv_shape *s)
{
    (void)s;
    return sizeof(float);
}

static const char *too_many_channel_tiles(const struct conv_shape *s)
{
    return (s->cout + GEMM_TILE_COUT - 1) / GEMM_TILE_COUT > MAX_GRID_Y
               ? "more than 65535 x 128 output channels"
               : NULL;
}

static const char *mma_is_faster(const struct conv_shape *s)
{
    return wgmma_beats_mma(s) ? NULL : "mma.sync is faster here";
}

static const struct conv2d_kernel kernels[] = {
    {.name = "05_register_tiling/strip_ring",
     .dtype = DTYPE_FP32,
     .layout = LAYOUT_NCHW,
     .needs = {.cc = COURSE_CC},
     .unsuited = single_channel_only,
     .scratch_bytes = zero_bias_bytes,
     .setup = setup_ring_window,
     .run = launch_strip_ring,
     .constant_filter = true},
    {.name = "07_multichannel/implicit_gemm_async",
     .dtype = DTYPE_FP32,
     .layout = LAYOUT_NCHW,
     .needs = {.cc = COURSE_CC},
     .unsuited = too_many_channel_tiles,
     .scratch_bytes = implicit_gemm_scratch_bytes,
     .setup = setup_conv2d_implicit_gemm,
     .run = launch_conv2d_implicit_gemm_async},
    {.name = "08_tensor_cores/wgmma_tf32",
     .dtype = DTYPE_TF32,
     .layout = LAYOUT_NHWC,
     .needs = {.cc = WGMMA_CC, .arch_specific = true, .code_cc = wgmma_code_cc},
     .unsuited = mma_is_faster,
     .run = launch_conv2d_wgmma_tf32},
    {.name = "08_tensor_cores/mma_tf32",
     .dtype = DTYPE_TF32,
     .layout = LAYOUT_NHWC,
     .needs = {.cc = MMA_CC, .smem_bytes = mma_smem_bytes},
     .run = launch_conv2d_mma_tf32},
    /* Falls back to 3xtf32 itself where the TMA cannot read the layer. */
    {.name = "08_tensor_cores/wgmma_3xtf32",
     .dtype = DTYPE_3XTF32,
     .layout = LAYOUT_NHWC,
     .needs = {.cc = WGMMA_CC, .arch_specific = true, .code_cc = wgmma_code_cc},
     .scratch_bytes = wgmma_3xtf32_scratch_bytes,
     .run = launch_conv2d_wgmma_3xtf32},
    {.name = "08_tensor_cores/3xtf32",
     .dtype = DTYPE_3XTF32,
     .layout = LAYOUT_NHWC,
     .needs = {.cc = MMA_CC, .smem_bytes = mma_3xtf32_smem_bytes},
     .run = launch_conv2d_3xtf32},
    {.name = "08_tensor_cores/wgmma_fp16",
     .dtype = DTYPE_FP16,
     .layout = LAYOUT_NHWC,
     .needs = {.cc = WGMMA_CC, .arch_specific = true, .code_cc = wgmma_code_cc},
     .unsuited = mma_is_faster,
     .run = launch_conv2d_wgmma_fp16},
    {.name = "08_tensor_cores/mma_fp16",
     .dtype = DTYPE_FP16,
     .layout = LAYOUT_NHWC,
     .needs = {.cc = MMA_CC, .smem_bytes = mma_smem_bytes},
     .run = launch_conv2d_mma_fp16},
    /* The tensor cores of a T4 (7.5), which mma.sync's m16n8k16 does not reach. */
    {.name = "08_tensor_cores/wmma_fp16",
     .dtype = DTYPE_FP16,
     .layout = LAYOUT_NHWC,
     .needs = {.cc = WMMA_CC},
     .run = launch_conv2d_wmma_fp16},
    {.name = "08_tensor_cores/wgmma_bf16",
     .dtype = DTYPE_BF16,
     .layout = LAYOUT_NHWC,
     .needs = {.cc = WGMMA_CC, .arch_specific = true, .code_cc = wgmma_code_cc},
     .unsuited = mma_is_faster,
     .run = launch_conv2d_wgmma_bf16},
    {.name = "08_tensor_cores/mma_bf16",
     .dtype = DTYPE_BF16,
     .layout = LAYOUT_NHWC,
     .needs = {.cc = MMA_CC, .smem_bytes = mma_smem_bytes},
     .run = launch_conv2d_mma_bf16},
    /* Float signs in, packed inside the run; the weights packed by setup. */
    {.name = "09_binary/pack_bmma_and",
     .dtype = DTYPE_BINARY,
     .layout = LAYOUT_NHWC,
     .needs = {.cc = MMA_CC, .smem_bytes = bmma_smem_per_block},
     .unsuited = bmma_shape_unsupported,
     .scratch_bytes = pack_bmma_scratch_bytes,
     .setup = setup_conv2d_pack_bmma_and,
     .run = launch_conv2d_pack_bmma_and},
    {.name = "09_binary/packed_xnor",
     .dtype = DTYPE_BINARY,
     .layout = LAYOUT_NHWC,
     .needs = {.cc = COURSE_CC},
     .unsuited = binary_channels_fit_grid,
     .scratch_bytes = packed_xnor_scratch_bytes,
     .setup = setup_packed_xnor,
     .run = run_packed_xnor},
    /* Seed 000's two kernels as the course rebuilt them, single-channel fp32 NCHW. */
    {.name = "02_gpu_naive/block16x16",
     .dtype = DTYPE_FP32,
     .layout = LAYOUT_NCHW,
     .needs = {.cc = COURSE_CC},
     .unsuited = single_channel_only,
     .run = run_naive_block16x16,
     .named_only = true},
    {.name = "02_gpu_naive/block32x8",
     .dtype = DTYPE_FP32,
     .layout = LAYOUT_NCHW,
     .needs = {.cc = COURSE_CC},
     .unsuited = single_channel_only,
     .run = run_naive_block32x8,
     .named_only = true},
    {.name = "04_shared_tiling/tile_in",
     .dtype = DTYPE_FP32,
     .layout = LAYOUT_NCHW,
     .needs = {.cc = COURSE_CC},
     .unsuited = single_channel_only,
     .scratch_bytes = zero_bias_bytes,
     .setup = setup_tile_in,
     .run = launch_conv2d_tile_in,
     .constant_filter = true,
     .named_only = true},
    {.name = "04_shared_tiling/tile_out",
     .dtype = DTYPE_FP32,
     .layout = LAYOUT_NCHW,
     .needs = {.cc = COURSE_CC},
     .unsuited = single_channel_only,
     .scratch_bytes = zero_bias_bytes,
     .setup = setup_tile_out,
     .run = launch_conv2d_tile_out,
     .constant_filter = true,
     .named_only = true},
    {.name = "04_shared_tiling/tile_cached_halo",
     .dtype = DTYPE_FP32,
     .layout = LAYOUT_NCHW,
     .needs = {.cc = COURSE_CC},
     .unsuited = single_channel_only,
     .scratch_bytes = zero_bias_bytes,
     .setup = setup_tile_cached_halo,
     .run = launch_conv2d_tile_cached_halo,
     .constant_filter = true,
     .named_only = true},
};

#define KERNEL_COUNT (sizeof kernels / sizeof kernels[0])

const struct conv2d_kernel *conv2d_kernel_at(size_t i)
{
    return i < KERNEL_COUNT ? &kernels[i] : NULL;
}

/* NULL when k runs s on g, else why not (unmet: room for gpu_needs' words). */
static const char *unfit(const struct conv2d_kernel *k, const struct conv_shape *s,
                         const struct gpu_info *g, char *unmet, size_t unmet_size)
{
    const char *reason = k->unsuited ? k->unsuited(s) : NULL;
    return reason ? reason : gpu_needs_unmet(&k->needs, g, s, unmet, unmet_size);
}

const struct conv2d_kernel *conv2d_kernel_for(const struct conv_shape *s, enum dtype d,
                                              enum layout l, const struct gpu_info *g, char *why,
                                              size_t why_size)
{
    /* The last candidate is the least demanding: its reason is the one to give. */
    const struct conv2d_kernel *last = NULL;
    const char *reason = NULL;
    char unmet[256];
    for (size_t i = 0; i < KERNEL_COUNT; i++) {
        const struct conv2d_kernel *k = &kernels[i];
        if (k->dtype != d || k->layout != l || k->named_only)
            continue;
        last = k;
        if (!(reason = unfit(k, s, g, unmet, sizeof unmet)))
            return k;
    }
    if (!last)
        snprintf(why, why_size,
                 "the course has no %s kernel in the %s layout (fp32 runs in nchw; "
                 "tf32, 3xtf32, fp16, bf16 and binary in nhwc)",
                 dtype_name(d), layout_name(l));
    else
        snprintf(why, why_size, "%s: %s", last->name, reason);
    return NULL;
}

const struct conv2d_kernel *conv2d_kernel_named(const char *name, const struct conv_shape *s,
                                                enum dtype d, enum layout l,
                                                const struct gpu_info *g, char *why,
                                                size_t why_size)
{
    for (size_t i = 0; i < KERNEL_COUNT; i++) {
        const struct conv2d_kernel *k = &kernels[i];
        if (strcmp(k->name, name) != 0)
            continue;
        if (k->dtype != d || k->layout != l) {
            snprintf(why, why_size, "%s runs %s in the %s layout, not %s in %s", k->name,
                     dtype_name(k->dtype), layout_name(k->layout), dtype_name(d), layout_name(l));
            return NULL;
        }
        char unmet[256];
        const char *reason = unfit(k, s, g, unmet, sizeof unmet);
        if (reason) {
            snprintf(why, why_size, "%s: %s", k->name, reason);
            return NULL;
        }
        return k;
    }
    snprintf(why, why_size, "no kernel is called \"%s\"", name);
    return NULL;
}
