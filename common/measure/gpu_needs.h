/* What a GPU variant needs of the GPU it runs on and of the code the build holds for
 * it, checked before it is launched: a variant that cannot run is left out with one
 * line saying what it needs and what this GPU (or the one CONV_EMULATE_GPU names)
 * has, so that no kernel runs whose code was not built for the GPU. */
#ifndef GPU_NEEDS_H
#define GPU_NEEDS_H

#include <stdbool.h>
#include <stddef.h>

#include "conv_problem.h"
#include "gpu_info.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Zero: nothing beyond the lesson's minimum compute capability. */
struct gpu_needs {
    /* The compute capability of its instructions x 10 (80: mma.sync m16n8k16, bf16,
     * TF32, cp.async), on the GPU and in the code built for it. */
    int cc;
    /* Architecture-specific code (sm_90a: wgmma, setmaxnreg), which runs on a GPU of
     * compute capability cc alone. */
    bool arch_specific;
    /* Optional: the compute capability x 10 the variant's code was compiled for, as its
     * kernels run on this GPU (0: no such code), when its file has architectures of its
     * own (lesson 08's sm_90a); NULL: the build's (gpu_info.code_cc). */
    int (*code_cc)(void);
    /* Optional: shared memory per block, static and dynamic, at this shape. */
    size_t (*smem_bytes)(const struct conv_shape *s);
    /* The GPUs it spreads its work over, at least (lesson 12's splits); zero: one. */
    int gpus;
};

/* NULL when the variant can run on g at shape s, else why not (written into why). */
const char *gpu_needs_unmet(const struct gpu_needs *n, const struct gpu_info *g,
                            const struct conv_shape *s, char *why, size_t size);

#ifdef __cplusplus
}
#endif

#endif
