/* The GPUs students own, as the harness knows them: what sets their limits and peaks
 * (compute capability, SMs, boost clock, shared memory, L2, memory bandwidth, and
 * whether tensor cores run fp32 accumulation at half rate, as GeForce cards do). The
 * course's tables in the README and the primer come from these numbers, and
 * CONV_EMULATE_GPU imposes one model's limits on the GPU a run has (gpu_info.h). */
#ifndef GPU_MODELS_H
#define GPU_MODELS_H

#include <stdbool.h>
#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

struct gpu_model {
    const char *key;  /* CONV_EMULATE_GPU's value: t4, a100, rtx3090, rtx4090, h100, h200 */
    const char *name; /* as the CUDA driver names it */
    int cc;           /* compute capability x 10 */
    int sm_count;
    int boost_mhz;
    size_t smem_per_block; /* the most a block may opt in to */
    size_t smem_per_sm;
    size_t l2_bytes;
    double dram_gbps; /* the datasheet's memory bandwidth */
    bool geforce;     /* tensor cores at half rate with fp32 accumulation */
};

extern const struct gpu_model gpu_models[];
extern const int gpu_model_count;

/* The model of that key, or NULL. */
const struct gpu_model *gpu_model_find(const char *key);
/* The keys, comma-separated, for an error line. */
const char *gpu_model_keys(void);

#ifdef __cplusplus
}
#endif

#endif
