/* What the harness needs to know about the GPU: its name and limits, the peak of
 * each arithmetic unit from its attributes, and a measured copy bandwidth (the
 * memory roof). */
#ifndef GPU_INFO_H
#define GPU_INFO_H

#include <stdbool.h>
#include <stddef.h>

#include "gpu_models.h"
#include "roofline.h"

#ifdef __cplusplus
extern "C" { /* tools/mma_rate.cu calls these */
#endif

struct gpu_info {
    int id;
    char name[256];
    int cc_major, cc_minor;
    int sm_count;
    int clock_khz;
    size_t l2_bytes;
    size_t free_bytes, total_bytes;
    size_t smem_per_block; /* shared memory a block may opt in to */
    size_t smem_per_sm;
    bool geforce; /* tensor cores at half rate with fp32 accumulation */
    /* The compute capability x 10 of the build's code as it runs here (its kernels'
     * __CUDA_ARCH__ / 10): this GPU's own, or older PTX the driver compiled; 0 when the
     * build holds nothing this GPU can run. */
    int code_cc;
    /* The GPUs the run uses: this one and the next gpus - 1 devices (1 unless the op
     * has a flag that asks for more, op_param.gpus). */
    int gpus;
    /* The model whose limits CONV_EMULATE_GPU imposed (gpu_emulate), else NULL. */
    const struct gpu_model *emulated;
    /* SMs x clock x FLOPs per clock per SM of each unit; 0 where unknown.
     * FP32: lanes per SM x 2. */
    double peak_gflops[UNIT_COUNT];
    double copy_gbps; /* device-to-device copy, bytes read + written */
};

/* Number of usable devices; 0 when CUDA reports none (the reason in *why). */
int gpu_count(const char **why);
/* Selects the device and reads its attributes (no measurement). */
void gpu_query(int id, struct gpu_info *g);
/* Imposes model m's limits on g: compute capability, SMs, clock, shared memory, L2,
 * the tensor-core rates and so the peaks; g's name becomes "<GPU> as <model>". The
 * kernels still run on the GPU g is, with its code: what changes is which variants
 * the harness lets run, and the roofline. */
void gpu_emulate(struct gpu_info *g, const struct gpu_model *m);
/* gpu_info.code_cc of the current device (a one-thread kernel reads __CUDA_ARCH__). */
int gpu_code_cc(void);
/* Measures copy bandwidth once per process and stores it in g->copy_gbps. */
void gpu_measure_copy_bandwidth(struct gpu_info *g);
int fp32_lanes_per_sm(int cc_major, int cc_minor);
/* True when none of the architectures a binary was built for (CMake's list, e.g.
 * "75", "80;90-real", "90-virtual") has machine code this GPU runs: the driver then
 * compiles the embedded PTX at load, without the GPU's own instructions. */
bool binary_runs_jit(const char *architectures, int cc_major, int cc_minor);

#ifdef __cplusplus
}
#endif

#endif
