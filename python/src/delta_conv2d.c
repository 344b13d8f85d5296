/* The C ABI of lesson 11's delta convolution (delta_conv2d.h): every argument checked
 * with the lesson's own rules before any GPU work, since the launchers exit the process
 * on a CUDA error (cuda_check.h). */
#include "delta_conv2d.h"

#include "abi_status.h"
#include "lessons/11_delta/kernels.h"
#include "query_gpu.h"

/* The lesson's minimum. */
#define DELTA_CC 75

struct delta_kernel {
    const char *name;
    size_t (*state_bytes)(const struct delta_args *a);
    void (*launch)(const struct delta_args *a);
};

/* Indexed by enum delta_variant. */
static const struct delta_kernel kernels[] = {
    {"11_delta/dense", dense_state_bytes, launch_delta_dense},
    {"11_delta/tile_mask", tile_mask_state_bytes, launch_delta_tile_mask},
    {"11_delta/delta_update", delta_update_state_bytes, launch_delta_update},
    {"11_delta/delta_compact", delta_compact_state_bytes, launch_delta_compact},
};
#define KERNEL_COUNT (int)(sizeof kernels / sizeof kernels[0])

static size_t unit_smem_bytes(const struct conv_shape *s)
{
    return delta_smem_bytes(s->ksize);
}

static struct conv_shape shape_of(const struct delta_args *a)
{
    return (struct conv_shape){1, a->c, a->c, a->h, a->w, a->ksize, true};
}

/* The lesson's rules for the layer, the tile and the threshold. */
static int plan(const struct delta_args *a, int variant, const struct delta_kernel **k, char *err,
                size_t err_size)
{
    const struct conv_shape s = shape_of(a);
    if (variant < 0 || variant >= KERNEL_COUNT)
        return abi_fail(CONV_TORCH_BAD_ARGUMENT, err, err_size,
                        "variant %d: 0 dense, 1 tile_mask, 2 delta_update or 3 delta_compact",
                        variant);
    const char *problem = delta_shape_problem(&s, a->tile);
    if (!problem)
        problem = delta_threshold_problem(a->threshold);
    if (problem)
        return abi_fail(CONV_TORCH_BAD_ARGUMENT, err, err_size, "%s", problem);
    *k = &kernels[variant];
    return CONV_TORCH_OK;
}

int conv_torch_delta_plan(int h, int w, int c, int ksize, int tile, int variant,
                          const char **kernel, size_t *state_bytes, char *err, size_t err_size)
{
    const struct delta_args a = {.h = h, .w = w, .c = c, .ksize = ksize, .tile = tile};
    const struct delta_kernel *k = NULL;
    const int status = plan(&a, variant, &k, err, err_size);
    if (status != CONV_TORCH_OK)
        return status;
    *kernel = k->name;
    *state_bytes = k->state_bytes(&a);
    return CONV_TORCH_OK;
}

/* The kernels load and store whole float4s where the channels allow. */
static int check_pointers(const struct delta_args *a, char *err, size_t err_size)
{
    if (!a->frame || !a->weights || !a->bias || !a->out || !a->state)
        return abi_fail(CONV_TORCH_BAD_ARGUMENT, err, err_size,
                        "a NULL frame, weights, bias, out or state");
    const void *const float4s[] = {a->frame, a->weights, a->out, a->state};
    return abi_check_float4_aligned(float4s, sizeof float4s / sizeof *float4s,
                                    "frame, weights, out and state", a->bias, "the bias", err,
                                    err_size);
}

int conv_torch_delta_frame(int device, void *stream, const float *frame, const float *weights,
                           const float *bias, float *out, void *state, size_t state_bytes, int h,
                           int w, int c, int ksize, int tile, float threshold, int first,
                           int variant, char *err, size_t err_size)
{
    const struct delta_args a = {.h = h,
                                 .w = w,
                                 .c = c,
                                 .ksize = ksize,
                                 .frame_index = first ? 0 : 1,
                                 .frame = frame,
                                 .weights = weights,
                                 .bias = bias,
                                 .out = out,
                                 .state = state,
                                 .stream = (cudaStream_t)stream,
                                 .threshold = threshold,
                                 .tile = tile};
    const struct delta_kernel *k = NULL;
    int status = check_pointers(&a, err, err_size);
    if (status == CONV_TORCH_OK)
        status = plan(&a, variant, &k, err, err_size);
    const struct conv_shape s = shape_of(&a);
    const struct gpu_needs needs = {.cc = DELTA_CC, .smem_bytes = unit_smem_bytes};
    if (status == CONV_TORCH_OK)
        status = check_gpu_runs(device, k->name, &needs, &s, err, err_size);
    if (status != CONV_TORCH_OK)
        return status;
    status =
        abi_check_memory(k->name, "state", k->state_bytes(&a), state, state_bytes, err, err_size);
    if (status != CONV_TORCH_OK)
        return status;
    if ((status = abi_check_earlier_cuda_error(err, err_size)) != CONV_TORCH_OK)
        return status;
    k->launch(&a);
    return CONV_TORCH_OK;
}
