#include "gpu_needs.h"

#include <stdio.h>

const char *gpu_needs_unmet(const struct gpu_needs *n, const struct gpu_info *g,
                            const struct conv_shape *s, char *why, size_t size)
{
    const int cc = g->cc_major * 10 + g->cc_minor;
    const char *suffix = n->arch_specific ? "a" : "";
    if (n->arch_specific ? cc != n->cc : cc < n->cc) {
        snprintf(why, size, "needs compute capability %d.%d%s (sm_%d%s code); this GPU is %d.%d",
                 n->cc / 10, n->cc % 10, n->arch_specific ? " exactly" : "", n->cc, suffix,
                 g->cc_major, g->cc_minor);
        return why;
    }
    const int code = n->code_cc ? n->code_cc() : g->code_cc;
    if (code < n->cc) {
        if (code > 0)
            snprintf(why, size, "built without sm_%d%s code: its code on this GPU is sm_%d's "
                     "(CMAKE_CUDA_ARCHITECTURES)", n->cc, suffix, code);
        else
            snprintf(why, size, "built without sm_%d%s code (CMAKE_CUDA_ARCHITECTURES)", n->cc,
                     suffix);
        return why;
    }
    const size_t smem = n->smem_bytes ? n->smem_bytes(s) : 0;
    if (smem > g->smem_per_block) {
        snprintf(why, size, "needs %zu B of shared memory per block, this GPU allows %zu", smem,
                 g->smem_per_block);
        return why;
    }
    if (n->gpus > g->gpus) {
        snprintf(why, size, "needs %d GPUs, the run has %d (--gpus, or the machine)", n->gpus,
                 g->gpus);
        return why;
    }
    return NULL;
}
