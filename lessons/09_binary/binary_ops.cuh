/* What every kernel of lesson 09 shares: where the taps of a pixel fall inside the
 * image, how a popcount becomes the sum of x * w over those taps, the epilogue
 * alpha * sum + bias, and the bit tensor-core instructions.
 *
 * A packed bit says +1 (set) or -1 (clear); it cannot say 0. A tap outside the image
 * is zero padding: it must add nothing. So every kernel counts the taps that fall
 * inside the image and sums only over them:
 *
 *   sum x*w = valid_taps * C - 2 * popc(x XOR w)           (over the valid taps)
 *
 * because each of the valid_taps * C products is +1 where the bits agree and -1
 * where they differ. The functions here are __host__ too: border_test.cu checks them
 * against the harness's float64 gold on the CPU. */
#ifndef BINARY_OPS_CUH
#define BINARY_OPS_CUH

#include <stdint.h>

#include "conv_problem.h"
#include "tensor_format.h"

/* The taps (i, j) of a ksize x ksize filter centred on (y, x) that read inside the
 * image: i0 <= i < i1, j0 <= j < j1. */
struct tap_window {
    int i0, i1, j0, j1;
};

static __host__ __device__ __forceinline__ struct tap_window
tap_window_at(int y, int x, const struct conv_shape *s)
{
    const int r = s->ksize / 2;
    struct tap_window t;
    t.i0 = r - y > 0 ? r - y : 0;
    t.i1 = s->h + r - y < s->ksize ? s->h + r - y : s->ksize;
    t.j0 = r - x > 0 ? r - x : 0;
    t.j1 = s->w + r - x < s->ksize ? s->w + r - x : s->ksize;
    return t;
}

static __host__ __device__ __forceinline__ int valid_taps(struct tap_window t)
{
    return (t.i1 - t.i0) * (t.j1 - t.j0);
}

static __host__ __device__ __forceinline__ bool all_taps_inside(struct tap_window t, int ksize)
{
    return t.i0 == 0 && t.j0 == 0 && t.i1 == ksize && t.j1 == ksize;
}

/* XOR form, the mismatches counted over the valid taps only. */
static __host__ __device__ __forceinline__ int sum_from_mismatches(int channels, int taps,
                                                                   int mismatches)
{
    return taps * channels - 2 * mismatches;
}

/* XOR form over every tap, the outside ones read as zero words: there a zero word
 * XOR w counts popc(w) mismatches that are not there, so they are taken back out
 * (outside_weight_pop = the popcounts of the weights of the outside taps). */
static __host__ __device__ __forceinline__ int
sum_from_xor_popc(int channels, int taps, int xor_pop, int outside_weight_pop)
{
    return sum_from_mismatches(channels, taps, xor_pop - outside_weight_pop);
}

/* AND form: popc(x ^ w) = popc(x) + popc(w) - 2 popc(x & w), over the valid taps. A
 * zero word outside the image adds nothing to popc(x) or popc(x & w); popc(w) is
 * summed over the valid taps alone. */
static __host__ __device__ __forceinline__ int
sum_from_and_popc(int channels, int taps, int and_pop, int input_pop, int inside_weight_pop)
{
    return sum_from_mismatches(channels, taps, input_pop + inside_weight_pop - 2 * and_pop);
}

/* The layer's output: alpha[k] * sum + bias[k], one rounding (the check allows two). */
static __device__ __forceinline__ float
binary_output(const float *__restrict__ alpha, const float *__restrict__ bias, int k, int sum)
{
    return fmaf(alpha[k], (float)sum, bias ? bias[k] : 0.0f);
}

#endif
