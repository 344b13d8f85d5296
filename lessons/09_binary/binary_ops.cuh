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
 * where they differ. The functions here are __host__ too: tests/border_test.cu checks them
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

/* Window classes. With same padding a row's window depends only on how far the row is
 * from the top and bottom edges, counted up to r: along an axis of `size` pixels there
 * are min(size, ksize) different windows, the r rows at each edge and one for every row
 * between (none between when size < ksize: then each row has its own). A pixel's class
 * is (row class, column class); everything the epilogue needs that depends on the
 * window and not on the input is counted once per class. */
static __host__ __device__ __forceinline__ int window_classes(int size, int ksize)
{
    return size < ksize ? size : ksize;
}

/* The class of row y: y itself near the top, r between the edges, r + 1 ... near the
 * bottom. */
static __host__ __device__ __forceinline__ int window_class(int y, int size, int ksize)
{
    const int r = ksize / 2, between = size > ksize ? size - ksize : 0, past_top = y - r;
    return y - (past_top < 0 ? 0 : past_top > between ? between : past_top);
}

/* A row of class c, whose window is the class's. */
static __host__ __device__ __forceinline__ int window_class_row(int c, int size, int ksize)
{
    return c <= ksize / 2 ? c : c + (size > ksize ? size - ksize : 0);
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

/* [page: and-form] */
/* AND form: popc(x ^ w) = popc(x) + popc(w) - 2 popc(x & w), over the valid taps. A
 * zero word outside the image adds nothing to popc(x) or popc(x & w); popc(w) is
 * summed over the valid taps alone. */
static __host__ __device__ __forceinline__ int
sum_from_and_popc(int channels, int taps, int and_pop, int input_pop, int inside_weight_pop)
{
    return sum_from_mismatches(channels, taps, input_pop + inside_weight_pop - 2 * and_pop);
}
/* [/page: and-form] */

/* The same two forms with everything that depends on the window and the channel but not
 * on the input folded into one integer per (window class, channel), the form's value at
 * zero counts, so that the epilogue does O(1) work per output:
 *   AND: sum = and_base - 2 popc(x) + 4 popc(x & w),  and_base = taps C - 2 inside_weight_pop
 *   XOR: sum = xor_base - 2 popc(x ^ w),              xor_base = taps C + 2 outside_weight_pop */
/* [page: class-base] */
static __host__ __device__ __forceinline__ int and_sum_base(int channels, int taps,
                                                            int inside_weight_pop)
{
    return sum_from_and_popc(channels, taps, 0, 0, inside_weight_pop);
}

static __host__ __device__ __forceinline__ int sum_from_and_base(int base, int and_pop,
                                                                 int input_pop)
{
    return base - 2 * input_pop + 4 * and_pop;
}
/* [/page: class-base] */

static __host__ __device__ __forceinline__ int xor_sum_base(int channels, int taps,
                                                            int outside_weight_pop)
{
    return sum_from_xor_popc(channels, taps, 0, outside_weight_pop);
}

static __host__ __device__ __forceinline__ int sum_from_xor_base(int base, int xor_pop)
{
    return base - 2 * xor_pop;
}

/* The layer's output: alpha[k] * sum + bias[k], one rounding (the check allows two). */
static __device__ __forceinline__ float
binary_output(const float *__restrict__ alpha, const float *__restrict__ bias, int k, int sum)
{
    return fmaf(alpha[k], (float)sum, bias ? bias[k] : 0.0f);
}

#endif
