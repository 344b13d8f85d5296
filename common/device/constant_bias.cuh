/* A layer's bias into a __constant__ float, 0 when the layer has none, so that a kernel
 * adds it without testing for it (lessons 05 and 06). Host code, for the launchers in a
 * lesson's .cu files. */
#ifndef CONSTANT_BIAS_CUH
#define CONSTANT_BIAS_CUH

#include "cuda_check.h"

/* symbol: the __constant__ float of the calling .cu file; bias: one float in device
 * memory, or NULL. */
template <typename Symbol> void copy_bias_to_constant(const Symbol &symbol, const float *bias)
{
    if (bias) {
        CUDA_CHECK(cudaMemcpyToSymbol(symbol, bias, sizeof(float), 0, cudaMemcpyDeviceToDevice));
    } else {
        const float no_bias = 0.0f;
        CUDA_CHECK(cudaMemcpyToSymbol(symbol, &no_bias, sizeof no_bias));
    }
}

#endif
