/* The values of big_layer's layer, each a function of where it is: every GPU draws its
 * own rows of the input where they lie, and the host computes the few it needs for its
 * float64 check, without a copy of the layer anywhere. Multiples of 2^-10 in [-1, 1),
 * exact in fp16 (and in float32 and double). */
#ifndef LAYER_VALUES_H
#define LAYER_VALUES_H

#include <stdint.h>

#ifdef __CUDACC__
#define LAYER_VALUES_FN __host__ __device__ static inline
#else
#define LAYER_VALUES_FN static inline
#endif

enum layer_tensor { LAYER_INPUT = 1, LAYER_WEIGHTS = 2, LAYER_BIAS = 3 };

/* Element `index` of a tensor (its flat index in the layer's NHWC input, KRSC weights
 * or the bias): splitmix64 of the two, its top 11 bits as -1024..1023 / 1024. */
LAYER_VALUES_FN float layer_value(enum layer_tensor tensor, uint64_t index)
{
    uint64_t z = index * 0x9e3779b97f4a7c15ull + (uint64_t)tensor * 0xd1b54a32d192ed03ull;
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    z ^= z >> 31;
    return (float)((int)(z >> 53) - 1024) / 1024.0f;
}

#endif
