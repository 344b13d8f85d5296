/* Running a kernel whose setup copies the filter into __constant__ memory (lesson 05)
 * on any stream of the caller's, in order with that stream's work and with every other
 * such kernel. */
#ifndef CONSTANT_FILTER_H
#define CONSTANT_FILTER_H

#include <cuda_runtime_api.h>

#include "conv2d_kernels.h"

/* Devices whose ordering events are kept. */
#define CONSTANT_FILTER_MAX_DEVICES 64

/* k's setup and run on a->stream of the current device `device`; a->scratch holds
 * k->scratch_bytes (a zero bias for a layer without one). Returns the first CUDA error
 * of the ordering, with its call in *failed. */
cudaError_t run_with_constant_filter(int device, const struct conv2d_kernel *k,
                                     const struct conv_args *a, const char **failed);

#endif
