/* Lesson 12: one convolution layer over the GPUs of one host. Each GPU computes its
 * share with lesson 08's fastest fp16 NHWC kernel; the steps differ in how the layer
 * is split and how the GPUs exchange what they share: whole images (nothing to
 * exchange), bands of rows whose halo rows come from the neighbours through NCCL
 * (blocking, then hidden behind the interior), and the same with peer copies. One
 * process drives every GPU, with one NCCL communicator per GPU. Each split's rows
 * carry gpus=N and efficiency=T1/(N*TN) against one_gpu in the same run.
 *
 *   build/bin/12_multi_gpu --preset unet-64x64
 *   build/bin/12_multi_gpu --preset wide-8000x4096 --gpus 2
 */
#include "conv_op.h"
#include "lesson.h"
#include "lessons/08_tensor_cores/kernels.h"
#include "steps.h"

/* Each needs what lesson 08's mma.sync needs; the splits, two GPUs or more. */
#define ONE_GPU {.cc = 80, .smem_bytes = mma_smem_bytes}
#define SEVERAL_GPUS {.cc = 80, .smem_bytes = mma_smem_bytes, .gpus = 2}

static const struct conv_variant variants[] = {
    {.name = "one_gpu",
     .what = "lesson 08's fastest fp16 kernel on the first GPU: what the splits are measured "
             "against",
     .dtype = DTYPE_FP16,
     .layout = LAYOUT_NHWC,
     .needs = ONE_GPU,
     .run = conv_fastest_fp16},
    {.name = "batch_split",
     .what = "whole images to each GPU: nothing to exchange",
     .dtype = DTYPE_FP16,
     .layout = LAYOUT_NHWC,
     .needs = SEVERAL_GPUS,
     .setup = setup_batch,
     .run = run_batch_split,
     .collect = collect_split,
     .teardown = teardown_split},
    {.name = "rows_blocking",
     .what = "a band of rows to each GPU: halo rows exchanged with NCCL, then the bands",
     .dtype = DTYPE_FP16,
     .layout = LAYOUT_NHWC,
     .needs = SEVERAL_GPUS,
     .setup = setup_rows_nccl,
     .run = run_rows_blocking,
     .collect = collect_split,
     .teardown = teardown_split},
    {.name = "rows_overlap",
     .what = "the interior computed while the halo travels on a high-priority stream",
     .dtype = DTYPE_FP16,
     .layout = LAYOUT_NHWC,
     .needs = SEVERAL_GPUS,
     .setup = setup_rows_overlap,
     .run = run_rows_overlap,
     .collect = collect_split,
     .teardown = teardown_rows_overlap},
    {.name = "peer_copy",
     .what = "rows_blocking with cudaMemcpyPeerAsync in place of NCCL",
     .dtype = DTYPE_FP16,
     .layout = LAYOUT_NHWC,
     .needs = SEVERAL_GPUS,
     .setup = setup_rows,
     .run = run_peer_copy,
     .collect = collect_split,
     .teardown = teardown_split},
};

static const struct op_param params[] = {
    {.flag = "gpus",
     .help = "GPUs to use, from --device on (0: all of them)",
     .fallback = 0,
     .lo = 0,
     .hi = SPLIT_MAX_GPUS,
     .integer = true,
     .gpus = true},
};

static const struct conv_spec conv = {
    .variants = variants,
    .variant_count = (int)(sizeof variants / sizeof variants[0]),
    .image_variant = "one_gpu",
    .params = params,
    .param_count = (int)(sizeof params / sizeof params[0]),
    .scaling_reference = "one_gpu",
};

int main(int argc, char **argv)
{
    const struct lesson lesson = {
        .name = "12_multi_gpu",
        .title = "one layer over several GPUs with NCCL: by batch, by rows, overlapped",
        .default_preset = "unet-64x64",
        .min_compute_capability = 80,
        .op = conv_op(&conv),
    };
    return lesson_main(&lesson, argc, argv);
}
