/* The library baseline: cudnnConvolutionForward on the same problem in a given
 * dtype and layout. fp32 runs with tensor-core math off (CUDNN_FMA_MATH, so no
 * TF32); tf32 is float32 data with tensor-core math allowed; fp16 and bf16 store
 * their own type and accumulate in float32. Every forward algorithm can be chosen
 * in turn so the harness times each one itself (baseline.c) instead of trusting
 * cudnnFind's single noisy pass. The bias is not part of the timed call (it would
 * be a second kernel): cuDNN's time is for the convolution alone, which can only
 * flatter cuDNN. Built against a stub when cuDNN is absent. */
#ifndef CUDNN_BASELINE_H
#define CUDNN_BASELINE_H

#include <stdbool.h>
#include <stddef.h>

#include <cuda_runtime_api.h>

#include "conv_problem.h"
#include "tensor_format.h"

#ifdef __cplusplus
extern "C" {
#endif

struct cudnn_conv;

bool cudnn_available(void);
/* cudnnGetVersion(), e.g. 91000 for 9.10.0; 0 without cuDNN. */
int cudnn_version(void);
/* Describes the problem; NULL with *why when cuDNN cannot express this format. */
struct cudnn_conv *cudnn_conv_create(const struct conv_shape *s, enum dtype d, enum layout l,
                                     cudaStream_t stream, const char **why);
/* Forward algorithms there are to try. */
int cudnn_conv_algorithm_count(void);
const char *cudnn_algorithm_name(int algorithm);
/* Makes `algorithm` the one run() uses and gives it a workspace of at most
 * max_workspace bytes; false with *why when cuDNN does not offer it here. */
bool cudnn_conv_select(struct cudnn_conv *c, int algorithm, size_t max_workspace, const char **why);
/* Enqueues one forward convolution (no bias) with the selected algorithm; false
 * when cuDNN refuses it at run time. */
bool cudnn_conv_run(struct cudnn_conv *c, const void *in, const void *w, void *out);
void cudnn_conv_destroy(struct cudnn_conv *c);

#ifdef __cplusplus
}
#endif

#endif
