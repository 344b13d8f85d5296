/* Lesson 09, variant "bmma_fused": bmma_and's layer with the epilogue of a real binary
 * network. The next layer only needs the signs of this one's output, so the kernel
 * writes sign(alpha[k] * sum + bias[k]) packed 32 channels to a word (the bits layout,
 * bit set = value >= 0, bits past cout clear: what pack_bits.cu and the harness make),
 * 1 bit per output instead of 32.
 *
 * A warp's 32 channels of one pixel are one output word: each of the 4 lanes of a quad
 * holds 8 of them (channels j * 8 + 2 (lane % 4) + c), sets their bits, and two
 * shuffles OR the quad's bits into the word, which the first lane stores. On
 * bnn-b16c256s28 the output shrinks from 12.8 MB of fp32 to 0.4 MB: what is left is
 * the tensor-core loop and its latency (docs/09_binary.md, the prediction).
 *
 *   build/bin/09_binary --preset bnn-b16c256s28 --variant bmma_fused
 */
#include "bmma_tile.cuh"
#include "kernels.h"

#define FULL_WARP 0xffffffffu
#define QUAD 4

/* The epilogue: each pixel row's signs from its bases, one word per quad. */
template <typename Op> struct sign_bits {
    typedef uint32_t out;
    template <typename Bases>
    static __device__ __forceinline__ void
    store(const struct bmma_smem &sm, const struct bmma_counts &c, const struct channel_affine &a,
          const Bases &bases, uint32_t *__restrict__ output, const struct conv_shape &s, int m0,
          int n0)
    {
        const int lane = threadIdx.x % 32, warp = threadIdx.x / 32;
        const int word_c = warp / WARPS_M * WARP_N, word_k = n0 + word_c; /* the warp's word */
        const int bit0 = 2 * (lane % QUAD), c0 = word_c + bit0, k0 = n0 + c0;
        const int pixels = s.n * s.h * s.w;
        const int words = WORDS_PER_PIXEL(s.cout);
#pragma unroll
        for (int i = 0; i < M_FRAGS; i++)
#pragma unroll
            for (int h = 0; h < 2; h++) {
                /* Every lane takes part in the shuffles; only pixels of the image are stored
                 * (those past it have window class 0, so their reads stay in the table). */
                const int pixel = m0 + warp % WARPS_M * WARP_M + i * 16 + lane / 4 + 8 * h;
                int2 base[N_FRAGS];
                bases.at(sm, s, pixel - m0, c0, base);
                float2 v[N_FRAGS];
                row_outputs<Op>(a, c, base, i, h, v);
                /* [page: sign-bits] */
                uint32_t bits = 0;
#pragma unroll
                for (int j = 0; j < N_FRAGS; j++) {
                    const int k = k0 + j * 8;
                    bits |= (uint32_t)(k < s.cout && v[j].x >= 0.0f) << (j * 8 + bit0);
                    bits |= (uint32_t)(k + 1 < s.cout && v[j].y >= 0.0f) << (j * 8 + bit0 + 1);
                }
                bits |= __shfl_xor_sync(FULL_WARP, bits, 1);
                bits |= __shfl_xor_sync(FULL_WARP, bits, 2);
                if (pixel < pixels && lane % QUAD == 0 && word_k < s.cout)
                    output[(size_t)pixel * words + word_k / BITS_PER_WORD] = bits;
                /* [/page: sign-bits] */
            }
    }
};

extern "C" void launch_conv2d_bmma_fused(const struct conv_args *a)
{
    /* scratch holds the table of bases (6_bmma_classes.cu, setup_conv2d_bmma_classes). */
    launch_bmma<bmma_and, sign_bits, BMMA_TABLES>(a);
}
