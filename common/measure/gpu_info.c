#include "gpu_info.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "alloc.h"
#include "cuda_check.h"
#include "timing.h"

/* The copy that measures the memory roof: large enough to dwarf every cache. */
#define COPY_BYTES ((size_t)256 << 20)
#define COPY_REPS 10

int gpu_count(const char **why)
{
    int count = 0;
    cudaError_t err = cudaGetDeviceCount(&count);
    if (err != cudaSuccess) {
        *why = cudaGetErrorString(err);
        cudaGetLastError(); /* clear the sticky error so later calls start clean */
        return 0;
    }
    if (count == 0)
        *why = "CUDA reports no devices";
    return count;
}

int fp32_lanes_per_sm(int cc_major, int cc_minor)
{
    if (cc_major == 7)
        return 64; /* Turing (sm_75) */
    if (cc_major == 8 && cc_minor == 0)
        return 64; /* A100 */
    return 128;    /* sm_86/87/89, Hopper, Blackwell */
}

static void set_peaks(struct gpu_info *g)
{
    double sm_clocks = (double)g->sm_count * g->clock_khz * 1e3 / 1e9;
    g->peak_gflops[UNIT_FP32_FMA] = sm_clocks * fp32_lanes_per_sm(g->cc_major, g->cc_minor) * 2;
    for (int u = UNIT_TF32_TC; u < UNIT_COUNT; u++)
        g->peak_gflops[u] = sm_clocks * tensor_flops_per_clock((enum compute_unit)u, g->cc_major,
                                                               g->cc_minor, g->geforce);
}

bool binary_runs_jit(const char *architectures, int cc_major, int cc_minor)
{
    /* CMake picks real machine code for these itself. */
    if (strstr(architectures, "native") || strstr(architectures, "all"))
        return false;
    const char *p = architectures;
    while (*p) {
        char *end;
        long arch = strtol(p, &end, 10);
        bool ptx_only = strncmp(end, "-virtual", 8) == 0;
        /* Machine code for X runs on a GPU of the same major version and minor >= X's;
         * "a"/"f" suffixed architectures (90a) need the exact GPU. */
        bool exact_only = *end == 'a' || *end == 'f';
        if (end != p && !ptx_only && arch / 10 == cc_major &&
            (exact_only ? arch % 10 == cc_minor : arch % 10 <= cc_minor))
            return false;
        p = end + strcspn(end, ";,");
        p += *p != '\0';
    }
    return true;
}

void gpu_query(int id, struct gpu_info *g)
{
    memset(g, 0, sizeof *g);
    g->id = id;
    g->gpus = 1;
    CUDA_CHECK(cudaSetDevice(id));
    struct cudaDeviceProp prop;
    CUDA_CHECK(cudaGetDeviceProperties(&prop, id));
    snprintf(g->name, sizeof g->name, "%s", prop.name);
    int l2 = 0;
    /* CUDA 13 dropped some cudaDeviceProp fields: read attributes instead. */
    CUDA_CHECK(cudaDeviceGetAttribute(&g->cc_major, cudaDevAttrComputeCapabilityMajor, id));
    CUDA_CHECK(cudaDeviceGetAttribute(&g->cc_minor, cudaDevAttrComputeCapabilityMinor, id));
    CUDA_CHECK(cudaDeviceGetAttribute(&g->sm_count, cudaDevAttrMultiProcessorCount, id));
    CUDA_CHECK(cudaDeviceGetAttribute(&g->clock_khz, cudaDevAttrClockRate, id));
    CUDA_CHECK(cudaDeviceGetAttribute(&l2, cudaDevAttrL2CacheSize, id));
    g->l2_bytes = (size_t)l2;
    int smem_block = 0, smem_sm = 0;
    CUDA_CHECK(cudaDeviceGetAttribute(&smem_block, cudaDevAttrMaxSharedMemoryPerBlockOptin, id));
    CUDA_CHECK(
        cudaDeviceGetAttribute(&smem_sm, cudaDevAttrMaxSharedMemoryPerMultiprocessor, id));
    g->smem_per_block = (size_t)smem_block;
    g->smem_per_sm = (size_t)smem_sm;
    g->geforce = strstr(g->name, "GeForce") != NULL;
    CUDA_CHECK(cudaMemGetInfo(&g->free_bytes, &g->total_bytes));
    g->code_cc = gpu_code_cc();
    set_peaks(g);
}

void gpu_emulate(struct gpu_info *g, const struct gpu_model *m)
{
    char real[sizeof g->name];
    memcpy(real, g->name, sizeof real);
    /* A model's name is short: the GPU's keeps 200 characters. */
    snprintf(g->name, sizeof g->name, "%.200s as %.40s", real, m->name);
    g->cc_major = m->cc / 10;
    g->cc_minor = m->cc % 10;
    g->sm_count = m->sm_count;
    g->clock_khz = m->boost_mhz * 1000;
    g->smem_per_block = m->smem_per_block;
    g->smem_per_sm = m->smem_per_sm;
    g->l2_bytes = m->l2_bytes;
    g->geforce = m->geforce;
    g->emulated = m;
    set_peaks(g);
}

void gpu_measure_copy_bandwidth(struct gpu_info *g)
{
    void *src = gpu_alloc(COPY_BYTES, "the copy-bandwidth test");
    void *dst = gpu_alloc(COPY_BYTES, "the copy-bandwidth test");
    CUDA_CHECK(cudaMemset(src, 1, COPY_BYTES));
    cudaEvent_t start, stop;
    CUDA_CHECK(cudaEventCreate(&start));
    CUDA_CHECK(cudaEventCreate(&stop));
    CUDA_CHECK(cudaMemcpy(dst, src, COPY_BYTES, cudaMemcpyDeviceToDevice)); /* warm-up */
    double samples[COPY_REPS];
    for (int i = 0; i < COPY_REPS; i++) {
        CUDA_CHECK(cudaEventRecord(start, 0));
        CUDA_CHECK(cudaMemcpyAsync(dst, src, COPY_BYTES, cudaMemcpyDeviceToDevice, 0));
        CUDA_CHECK(cudaEventRecord(stop, 0));
        CUDA_CHECK(cudaEventSynchronize(stop));
        float ms;
        CUDA_CHECK(cudaEventElapsedTime(&ms, start, stop));
        samples[i] = ms;
    }
    struct timing t = timing_from_samples(samples, COPY_REPS);
    /* A copy reads and writes every byte. The best run is the roof. */
    g->copy_gbps = 2.0 * COPY_BYTES / (t.min_ms * 1e-3) / 1e9;
    CUDA_CHECK(cudaEventDestroy(start));
    CUDA_CHECK(cudaEventDestroy(stop));
    CUDA_CHECK(cudaFree(src));
    CUDA_CHECK(cudaFree(dst));
}
