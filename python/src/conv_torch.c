/* The C ABI of libconv_torch.so (conv_torch.h): checks every argument before any GPU
 * work, picks the course's kernel for the problem and the GPU (conv2d_kernels.c) and
 * launches it with the struct conv_args the lessons' launchers take. The launchers exit
 * the process on a CUDA error (cuda_check.h), so whatever can be checked is checked here
 * first: sizes, codes, pointers and their alignment, the GPU's compute capability and
 * shared memory, the build's code for it, and errors left by earlier calls. */
#include "conv_torch.h"

#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>

#include "build_code.h"
#include "constant_filter.h"
#include "conv2d_kernels.h"

/* cudaMalloc's alignment (PyTorch's allocator gives as much): the kernels' 16-byte
 * stores and their scratch loads rely on it. */
#define BASE_ALIGNMENT 16

static int fail(int status, char *err, size_t err_size, const char *format, ...)
{
    if (err && err_size > 0) {
        va_list args;
        va_start(args, format);
        vsnprintf(err, err_size, format, args);
        va_end(args);
    }
    return status;
}

static int cuda_fail(cudaError_t e, const char *call, char *err, size_t err_size)
{
    return fail(CONV_TORCH_CUDA_ERROR, err, err_size, "CUDA: %s failed: %s", call,
                cudaGetErrorString(e));
}

/* The problem as the lessons' flags accept it (common/harness/cli.c), plus empty
 * batches, images and outputs, which launch nothing. */
static int check_problem(const struct conv_shape *s, int dtype, int layout, char *err,
                         size_t err_size)
{
    if (s->n < 0 || s->cin < 1 || s->cout < 0 || s->h < 0 || s->w < 0)
        return fail(CONV_TORCH_BAD_ARGUMENT, err, err_size,
                    "sizes n=%d cin=%d cout=%d h=%d w=%d: cin must be at least 1, the others "
                    "not negative",
                    s->n, s->cin, s->cout, s->h, s->w);
    if (s->ksize < 1 || s->ksize > MAX_KSIZE || s->ksize % 2 == 0)
        return fail(CONV_TORCH_BAD_ARGUMENT, err, err_size,
                    "ksize %d: an odd filter size from 1 to %d", s->ksize, MAX_KSIZE);
    if (dtype < DTYPE_FP32 || dtype > DTYPE_BF16)
        return fail(CONV_TORCH_BAD_ARGUMENT, err, err_size,
                    "dtype %d: 0 fp32, 1 tf32, 2 3xtf32, 3 fp16 or 4 bf16", dtype);
    if (layout != LAYOUT_NCHW && layout != LAYOUT_NHWC)
        return fail(CONV_TORCH_BAD_ARGUMENT, err, err_size, "layout %d: 0 NCHW or 1 NHWC", layout);
    if (shape_overflows_int32(s))
        return fail(CONV_TORCH_UNSUPPORTED, err, err_size,
                    "a tensor would have more than 2^31-1 elements (the kernels index with "
                    "32-bit integers)");
    return CONV_TORCH_OK;
}

/* Selects `device` and reads what the kernels need of it. */
static int query_gpu(int device, struct gpu_info *g, char *err, size_t err_size)
{
    int count = 0;
    cudaError_t e = cudaGetDeviceCount(&count);
    if (e != cudaSuccess)
        return cuda_fail(e, "cudaGetDeviceCount", err, err_size);
    if (device < 0 || device >= count)
        return fail(CONV_TORCH_BAD_ARGUMENT, err, err_size,
                    "device %d: CUDA sees %d device(s), 0 to %d", device, count, count - 1);
    if ((e = cudaSetDevice(device)) != cudaSuccess)
        return cuda_fail(e, "cudaSetDevice", err, err_size);
    int major, minor, smem;
    if ((e = cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, device)) ||
        (e = cudaDeviceGetAttribute(&minor, cudaDevAttrComputeCapabilityMinor, device)) ||
        (e = cudaDeviceGetAttribute(&smem, cudaDevAttrMaxSharedMemoryPerBlockOptin, device)))
        return cuda_fail(e, "cudaDeviceGetAttribute", err, err_size);
    *g = (struct gpu_info){.id = device,
                           .cc_major = major,
                           .cc_minor = minor,
                           .smem_per_block = (size_t)smem,
                           .code_cc = build_code_cc()};
    return CONV_TORCH_OK;
}

static int choose_kernel(int device, const struct conv_shape *s, int dtype, int layout,
                         const struct conv2d_kernel **kernel, char *err, size_t err_size)
{
    int status = check_problem(s, dtype, layout, err, err_size);
    struct gpu_info g;
    if (status == CONV_TORCH_OK)
        status = query_gpu(device, &g, err, err_size);
    if (status != CONV_TORCH_OK)
        return status;
    char why[320];
    *kernel = conv2d_kernel_for(s, (enum dtype)dtype, (enum layout)layout, &g, why, sizeof why);
    if (!*kernel)
        return fail(CONV_TORCH_UNSUPPORTED, err, err_size, "%s", why);
    return CONV_TORCH_OK;
}

static size_t scratch_of(const struct conv2d_kernel *k, const struct conv_shape *s)
{
    return k->scratch_bytes ? k->scratch_bytes(s) : 0;
}

int conv_torch_conv2d_plan(int device, int n, int cin, int cout, int h, int w, int ksize, int dtype,
                           int layout, const char **kernel, size_t *scratch_bytes, char *err,
                           size_t err_size)
{
    const struct conv_shape s = {n, cin, cout, h, w, ksize, false};
    const struct conv2d_kernel *k;
    const int status = choose_kernel(device, &s, dtype, layout, &k, err, err_size);
    if (status != CONV_TORCH_OK)
        return status;
    *kernel = k->name;
    *scratch_bytes = scratch_of(k, &s);
    return CONV_TORCH_OK;
}

static bool aligned(const void *p, size_t bytes)
{
    return (uintptr_t)p % bytes == 0;
}

static int check_pointers(const void *input, const void *weights, const float *bias,
                          const void *output, size_t element, char *err, size_t err_size)
{
    if (!input || !weights || !output)
        return fail(CONV_TORCH_BAD_ARGUMENT, err, err_size, "a NULL input, weights or output");
    if (!aligned(input, element) || !aligned(weights, element) || !aligned(bias, sizeof *bias))
        return fail(CONV_TORCH_BAD_ARGUMENT, err, err_size,
                    "input, weights or bias not aligned to its element (%zu bytes)", element);
    if (!aligned(output, BASE_ALIGNMENT))
        return fail(CONV_TORCH_BAD_ARGUMENT, err, err_size,
                    "the output is not %d-byte aligned (allocate it on its own)", BASE_ALIGNMENT);
    return CONV_TORCH_OK;
}

/* Lesson 05's filter copies run on the legacy default stream, which a stream capturing
 * a CUDA graph cannot wait for; its ordering events exist for the first devices. */
static int check_constant_filter(int device, cudaStream_t stream, char *err, size_t err_size)
{
    if (device >= CONSTANT_FILTER_MAX_DEVICES)
        return fail(CONV_TORCH_UNSUPPORTED, err, err_size,
                    "single-channel fp32 on device %d: lesson 05's kernel runs on devices 0 "
                    "to %d",
                    device, CONSTANT_FILTER_MAX_DEVICES - 1);
    enum cudaStreamCaptureStatus capture;
    const cudaError_t e = cudaStreamIsCapturing(stream, &capture);
    if (e != cudaSuccess)
        return cuda_fail(e, "cudaStreamIsCapturing", err, err_size);
    if (capture != cudaStreamCaptureStatusNone)
        return fail(CONV_TORCH_UNSUPPORTED, err, err_size,
                    "single-channel fp32 in a CUDA graph: lesson 05 copies the filter into "
                    "constant memory on the legacy default stream, which a graph capture "
                    "cannot hold");
    return CONV_TORCH_OK;
}

int conv_torch_conv2d(int device, void *stream, const void *input, const void *weights,
                      const float *bias, void *output, void *scratch, size_t scratch_bytes, int n,
                      int cin, int cout, int h, int w, int ksize, int dtype, int layout, char *err,
                      size_t err_size)
{
    const struct conv_shape s = {n, cin, cout, h, w, ksize, bias != NULL};
    int status = check_problem(&s, dtype, layout, err, err_size);
    if (status != CONV_TORCH_OK || output_count(&s) == 0)
        return status;
    const size_t element = (size_t)dtype_storage_bits((enum dtype)dtype, (enum layout)layout) / 8;
    status = check_pointers(input, weights, bias, output, element, err, err_size);
    const struct conv2d_kernel *k;
    if (status == CONV_TORCH_OK)
        status = choose_kernel(device, &s, dtype, layout, &k, err, err_size);
    if (status != CONV_TORCH_OK)
        return status;
    const size_t needed = scratch_of(k, &s);
    if (needed > 0 && (!scratch || scratch_bytes < needed || !aligned(scratch, BASE_ALIGNMENT)))
        return fail(CONV_TORCH_BAD_ARGUMENT, err, err_size,
                    "%s needs %zu bytes of %d-byte aligned scratch; got %zu at %p", k->name, needed,
                    BASE_ALIGNMENT, scratch_bytes, scratch);
    if (k->constant_filter &&
        (status = check_constant_filter(device, stream, err, err_size)) != CONV_TORCH_OK)
        return status;
    /* The launchers' CUDA_CHECK would exit on an error an earlier call left behind. */
    const cudaError_t earlier = cudaGetLastError();
    if (earlier != cudaSuccess)
        return cuda_fail(earlier, "an earlier CUDA call", err, err_size);

    const struct conv_args a = {.shape = s,
                                .input = input,
                                .weights = weights,
                                .bias = bias,
                                .output = output,
                                .scratch = needed > 0 ? scratch : NULL,
                                .stream = (cudaStream_t)stream};
    if (k->constant_filter) {
        const char *failed = "";
        const cudaError_t e = run_with_constant_filter(device, k, &a, &failed);
        return e == cudaSuccess ? CONV_TORCH_OK : cuda_fail(e, failed, err, err_size);
    }
    if (k->setup)
        k->setup(&a);
    k->run(&a);
    return CONV_TORCH_OK;
}
