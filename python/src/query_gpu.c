#include "query_gpu.h"

#include <pthread.h>
#include <stdatomic.h>

#include <cuda_runtime_api.h>

#include "abi_status.h"
#include "build_code.h"

/* What query_gpu reads of a device (its compute capability, shared memory per block and
 * the build's code for it) does not change while the process runs: read at a device's
 * first call and kept, it spares every later call five CUDA queries, one of them a
 * kernel's attributes (build_code_cc). The count of devices is kept the same way; a
 * failed query keeps nothing. Devices past the table are queried on every call. */
#define KEPT_DEVICES 64

struct kept_gpu {
    atomic_int ready; /* 1 once the fields below are written (release/acquire) */
    int cc_major, cc_minor, code_cc;
    size_t smem_per_block;
};

static struct kept_gpu kept[KEPT_DEVICES];
static atomic_int kept_count; /* 0: not read yet */
static pthread_mutex_t keeping = PTHREAD_MUTEX_INITIALIZER;

static int device_count(int *count, char *err, size_t err_size)
{
    *count = atomic_load_explicit(&kept_count, memory_order_acquire);
    if (*count > 0)
        return CONV_TORCH_OK;
    const cudaError_t e = cudaGetDeviceCount(count);
    if (e != cudaSuccess)
        return abi_cuda_fail(e, "cudaGetDeviceCount", err, err_size);
    atomic_store_explicit(&kept_count, *count, memory_order_release);
    return CONV_TORCH_OK;
}

/* The current device's (`device`, selected) fields of g, read from CUDA. */
static int read_gpu(int device, struct gpu_info *g, char *err, size_t err_size)
{
    int major, minor, smem;
    cudaError_t e;
    if ((e = cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, device)) ||
        (e = cudaDeviceGetAttribute(&minor, cudaDevAttrComputeCapabilityMinor, device)) ||
        (e = cudaDeviceGetAttribute(&smem, cudaDevAttrMaxSharedMemoryPerBlockOptin, device)))
        return abi_cuda_fail(e, "cudaDeviceGetAttribute", err, err_size);
    *g = (struct gpu_info){.id = device,
                           .cc_major = major,
                           .cc_minor = minor,
                           .smem_per_block = (size_t)smem,
                           .code_cc = build_code_cc()};
    return CONV_TORCH_OK;
}

int query_gpu(int device, struct gpu_info *g, char *err, size_t err_size)
{
    int count = 0;
    int status = device_count(&count, err, err_size);
    if (status != CONV_TORCH_OK)
        return status;
    if (device < 0 || device >= count)
        return abi_fail(CONV_TORCH_BAD_ARGUMENT, err, err_size,
                        "device %d: CUDA sees %d device(s), 0 to %d", device, count, count - 1);
    /* Every call: the launches that follow go to the current device. */
    const cudaError_t e = cudaSetDevice(device);
    if (e != cudaSuccess)
        return abi_cuda_fail(e, "cudaSetDevice", err, err_size);
    if (device >= KEPT_DEVICES)
        return read_gpu(device, g, err, err_size);
    struct kept_gpu *k = &kept[device];
    if (!atomic_load_explicit(&k->ready, memory_order_acquire)) {
        pthread_mutex_lock(&keeping);
        if (!atomic_load_explicit(&k->ready, memory_order_relaxed)) {
            struct gpu_info read;
            status = read_gpu(device, &read, err, err_size);
            if (status == CONV_TORCH_OK) {
                k->cc_major = read.cc_major;
                k->cc_minor = read.cc_minor;
                k->code_cc = read.code_cc;
                k->smem_per_block = read.smem_per_block;
                atomic_store_explicit(&k->ready, 1, memory_order_release);
            }
        }
        pthread_mutex_unlock(&keeping);
        if (status != CONV_TORCH_OK)
            return status;
    }
    *g = (struct gpu_info){.id = device,
                           .cc_major = k->cc_major,
                           .cc_minor = k->cc_minor,
                           .smem_per_block = k->smem_per_block,
                           .code_cc = k->code_cc};
    return CONV_TORCH_OK;
}

int check_gpu_runs(int device, const char *kernel, const struct gpu_needs *needs,
                   const struct conv_shape *s, char *err, size_t err_size)
{
    struct gpu_info g;
    const int status = query_gpu(device, &g, err, err_size);
    if (status != CONV_TORCH_OK)
        return status;
    char unmet[256];
    const char *reason = gpu_needs_unmet(needs, &g, s, unmet, sizeof unmet);
    return reason ? abi_fail(CONV_TORCH_UNSUPPORTED, err, err_size, "%s: %s", kernel, reason)
                  : CONV_TORCH_OK;
}
