/* The C ABI of libconv_torch.so (conv_torch.h): checks every argument before any GPU
 * work, picks the course's kernel for the problem and the GPU (conv2d_kernels.c) and
 * launches it with the struct conv_args the lessons' launchers take. The launchers exit
 * the process on a CUDA error (cuda_check.h), so whatever can be checked is checked here
 * first: sizes, codes, pointers and their alignment, the GPU's compute capability and
 * shared memory, the build's code for it, and errors left by earlier calls. */
#include "conv_torch.h"

#include "abi_status.h"
#include "constant_filter.h"
#include "conv2d_kernels.h"
#include "query_gpu.h"

/* The problem as the lessons' flags accept it (common/harness/cli.c), plus empty
 * batches, images and outputs, which launch nothing. */
static int check_problem(const struct conv_shape *s, int dtype, int layout, char *err,
                         size_t err_size)
{
    if (s->n < 0 || s->cin < 1 || s->cout < 0 || s->h < 0 || s->w < 0)
        return abi_fail(CONV_TORCH_BAD_ARGUMENT, err, err_size,
                        "sizes n=%d cin=%d cout=%d h=%d w=%d: cin must be at least 1, the others "
                        "not negative",
                        s->n, s->cin, s->cout, s->h, s->w);
    if (s->ksize < 1 || s->ksize > MAX_KSIZE || s->ksize % 2 == 0)
        return abi_fail(CONV_TORCH_BAD_ARGUMENT, err, err_size,
                        "ksize %d: an odd filter size from 1 to %d", s->ksize, MAX_KSIZE);
    if (dtype < DTYPE_FP32 || dtype > DTYPE_BINARY)
        return abi_fail(CONV_TORCH_BAD_ARGUMENT, err, err_size,
                        "dtype %d: 0 fp32, 1 tf32, 2 3xtf32, 3 fp16, 4 bf16 or 5 binary", dtype);
    if (layout != LAYOUT_NCHW && layout != LAYOUT_NHWC)
        return abi_fail(CONV_TORCH_BAD_ARGUMENT, err, err_size, "layout %d: 0 NCHW or 1 NHWC",
                        layout);
    if (shape_overflows_int32(s))
        return abi_fail(CONV_TORCH_UNSUPPORTED, err, err_size,
                        "a tensor would have more than 2^31-1 elements (the kernels index with "
                        "32-bit integers)");
    return CONV_TORCH_OK;
}

/* The named kernel, or the fastest where name is NULL. */
static int choose_kernel(int device, const char *name, const struct conv_shape *s, int dtype,
                         int layout, const struct conv2d_kernel **kernel, char *err,
                         size_t err_size)
{
    int status = check_problem(s, dtype, layout, err, err_size);
    struct gpu_info g;
    if (status == CONV_TORCH_OK)
        status = query_gpu(device, &g, err, err_size);
    if (status != CONV_TORCH_OK)
        return status;
    char why[320];
    const enum dtype d = (enum dtype)dtype;
    const enum layout l = (enum layout)layout;
    *kernel = name ? conv2d_kernel_named(name, s, d, l, &g, why, sizeof why)
                   : conv2d_kernel_for(s, d, l, &g, why, sizeof why);
    if (!*kernel)
        return abi_fail(CONV_TORCH_UNSUPPORTED, err, err_size, "%s", why);
    return CONV_TORCH_OK;
}

static size_t scratch_of(const struct conv2d_kernel *k, const struct conv_shape *s)
{
    return k->scratch_bytes ? k->scratch_bytes(s) : 0;
}

int conv_torch_conv2d_plan(int device, const char *name, int n, int cin, int cout, int h, int w,
                           int ksize, int dtype, int layout, const char **kernel,
                           size_t *scratch_bytes, char *err, size_t err_size)
{
    const struct conv_shape s = {n, cin, cout, h, w, ksize, false};
    const struct conv2d_kernel *k;
    const int status = choose_kernel(device, name, &s, dtype, layout, &k, err, err_size);
    if (status != CONV_TORCH_OK)
        return status;
    *kernel = k->name;
    *scratch_bytes = scratch_of(k, &s);
    return CONV_TORCH_OK;
}

static int check_pointers(const void *input, const void *weights, const float *bias,
                          const float *scale, const void *output, int dtype, int layout, char *err,
                          size_t err_size)
{
    const size_t element = (size_t)dtype_storage_bits((enum dtype)dtype, (enum layout)layout) / 8;
    if (!input || !weights || !output)
        return abi_fail(CONV_TORCH_BAD_ARGUMENT, err, err_size, "a NULL input, weights or output");
    if ((dtype == DTYPE_BINARY) != (scale != NULL))
        return abi_fail(CONV_TORCH_BAD_ARGUMENT, err, err_size,
                        "scale (alpha per output channel) is for dtype 5, binary, alone: %s",
                        scale ? "give NULL" : "give cout floats");
    if (!abi_aligned(input, element) || !abi_aligned(weights, element) ||
        !abi_aligned(bias, sizeof *bias) || !abi_aligned(scale, sizeof *scale))
        return abi_fail(CONV_TORCH_BAD_ARGUMENT, err, err_size,
                        "input, weights, bias or scale not aligned to its element (%zu bytes)",
                        element);
    if (!abi_aligned(output, BASE_ALIGNMENT))
        return abi_fail(CONV_TORCH_BAD_ARGUMENT, err, err_size,
                        "the output is not %d-byte aligned (allocate it on its own)",
                        BASE_ALIGNMENT);
    return CONV_TORCH_OK;
}

/* Lessons 04 and 05's filter copies run on the legacy default stream, which a stream
 * capturing a CUDA graph cannot wait for; their ordering events exist for the first
 * devices. */
static int check_constant_filter(const struct conv2d_kernel *k, int device, cudaStream_t stream,
                                 char *err, size_t err_size)
{
    if (device >= CONSTANT_FILTER_MAX_DEVICES)
        return abi_fail(CONV_TORCH_UNSUPPORTED, err, err_size,
                        "%s on device %d: kernels with a constant-memory filter run on devices 0 "
                        "to %d",
                        k->name, device, CONSTANT_FILTER_MAX_DEVICES - 1);
    enum cudaStreamCaptureStatus capture;
    const cudaError_t e = cudaStreamIsCapturing(stream, &capture);
    if (e != cudaSuccess)
        return abi_cuda_fail(e, "cudaStreamIsCapturing", err, err_size);
    if (capture != cudaStreamCaptureStatusNone)
        return abi_fail(CONV_TORCH_UNSUPPORTED, err, err_size,
                        "%s in a CUDA graph: it copies the filter into constant memory on the "
                        "legacy default stream, which a graph capture cannot hold",
                        k->name);
    return CONV_TORCH_OK;
}

int conv_torch_conv2d(int device, void *stream, const char *name, const void *input,
                      const void *weights, const float *bias, const float *scale, void *output,
                      void *scratch, size_t scratch_bytes, int n, int cin, int cout, int h, int w,
                      int ksize, int dtype, int layout, char *err, size_t err_size)
{
    const struct conv_shape s = {n, cin, cout, h, w, ksize, bias != NULL};
    int status = check_problem(&s, dtype, layout, err, err_size);
    if (status != CONV_TORCH_OK || output_count(&s) == 0)
        return status;
    status = check_pointers(input, weights, bias, scale, output, dtype, layout, err, err_size);
    const struct conv2d_kernel *k;
    if (status == CONV_TORCH_OK)
        status = choose_kernel(device, name, &s, dtype, layout, &k, err, err_size);
    if (status != CONV_TORCH_OK)
        return status;
    const size_t needed = scratch_of(k, &s);
    status = abi_check_memory(k->name, "scratch", needed, scratch, scratch_bytes, err, err_size);
    if (status != CONV_TORCH_OK)
        return status;
    if (k->constant_filter &&
        (status = check_constant_filter(k, device, stream, err, err_size)) != CONV_TORCH_OK)
        return status;
    if ((status = abi_check_earlier_cuda_error(err, err_size)) != CONV_TORCH_OK)
        return status;

    const struct conv_args a = {.shape = s,
                                .input = input,
                                .weights = weights,
                                .bias = bias,
                                .scale = scale,
                                .output = output,
                                .scratch = needed > 0 ? scratch : NULL,
                                .stream = (cudaStream_t)stream};
    if (k->constant_filter) {
        const char *failed = "";
        const cudaError_t e = run_with_constant_filter(device, k, &a, &failed);
        return e == cudaSuccess ? CONV_TORCH_OK : abi_cuda_fail(e, failed, err, err_size);
    }
    if (k->setup)
        k->setup(&a);
    k->run(&a);
    return CONV_TORCH_OK;
}

const char *conv_torch_conv2d_kernel(int i, int *dtype, int *layout)
{
    const struct conv2d_kernel *k = i < 0 ? NULL : conv2d_kernel_at((size_t)i);
    if (!k)
        return NULL;
    *dtype = (int)k->dtype;
    *layout = (int)k->layout;
    return k->name;
}
