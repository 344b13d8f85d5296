/* The GPU a call runs on, as the lessons' variant tables test it (gpu_needs.h). */
#ifndef QUERY_GPU_H
#define QUERY_GPU_H

#include <stddef.h>

#include "gpu_needs.h"

/* Selects `device` and reads what the kernels need of it (compute capability, shared
 * memory per block, the build's code for it) into g; a conv_torch_status. */
int query_gpu(int device, struct gpu_info *g, char *err, size_t err_size);

/* query_gpu, then CONV_TORCH_UNSUPPORTED ("<kernel>: <what it needs>") where the GPU
 * cannot run the kernel `kernel` with these needs at shape s. */
int check_gpu_runs(int device, const char *kernel, const struct gpu_needs *needs,
                   const struct conv_shape *s, char *err, size_t err_size);

#endif
