/* What a convolution kernel's launcher is called with: the one header of the harness a
 * lesson's kernels include (beside common/device/). Pointers are device pointers for
 * GPU variants and host pointers for CPU ones. input, weights and output are in the
 * variant's dtype and layout (tensor_format.h); the bias and scale are float32 whatever
 * the dtype. */
#ifndef CONV_ARGS_H
#define CONV_ARGS_H

#include <cuda_runtime_api.h>

#include "conv_problem.h"
#include "tensor_format.h"

struct conv_args {
    struct conv_shape shape;
    const void *input;   /* n x cin x h x w in the variant's layout */
    const void *weights; /* cout x cin x ksize x ksize in the variant's layout */
    const float *bias;   /* cout, or NULL when shape.bias is false */
    /* binary dtype: cout scaling factors alpha[k] (xnor_scale.h); the output is
     * alpha[k] * sum x * sign(w) + bias[k]. NULL for every other dtype. */
    const float *scale;
    void *output;        /* n x cout x h x w, output_dtype(dtype), output_layout(layout);
                          * packed signs in the bits layout for OUTPUT_SIGN_BITS */
    void *scratch;       /* scratch_bytes() of memory the harness owns; NULL when none */
    cudaStream_t stream; /* GPU: every launch and copy goes on this stream */
    /* The GPUs the run uses, device, device + 1, ... (gpus of them; 1 but in lesson
     * 12); stream belongs to the first. */
    int device, gpus;
    /* The SMs a persistent kernel (one wave of blocks that walk the tiles) may fill: 0
     * for all of the GPU's; lesson 12 leaves some to NCCL's kernel (conv_sms). */
    int sms;
};

/* The SMs a persistent launcher fills on a GPU of gpu_sms: a->sms where that is fewer. */
static inline int conv_sms(const struct conv_args *a, int gpu_sms)
{
    return a->sms > 0 && a->sms < gpu_sms ? a->sms : gpu_sms;
}

/* What a lesson's entry points are: a variant's setup and run (struct conv_variant,
 * conv_op.h) each take the launch arguments and return nothing. A lesson's header
 * declares the entry points of one step file on one line, inside its extern "C" block,
 *     conv_launcher setup_tile_in, launch_conv2d_tile_in;
 * and the step file defines each as an ordinary function (extern "C" in a .cu file),
 *     extern "C" void launch_conv2d_tile_in(const struct conv_args *a) { ... } */
typedef void conv_launcher(const struct conv_args *a);

/* The float32 views, for variants whose dtype stores float32. */
static inline const float *input_f32(const struct conv_args *a)
{
    return (const float *)a->input;
}
static inline const float *weights_f32(const struct conv_args *a)
{
    return (const float *)a->weights;
}
static inline float *output_f32(const struct conv_args *a)
{
    return (float *)a->output;
}

#endif
