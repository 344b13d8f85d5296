/* The launchers of lesson 09, one file per idea. Each enqueues its kernels on
 * a->stream. Inputs are NHWC: packed bits (32 channels per word, bit set = +1) or
 * float signs, as the variant declares; weights KRSC in the same format; a->scale
 * holds alpha per output channel; the output is float32 NHWC (NCHW for float_sign). */
#ifndef BINARY_KERNELS_H
#define BINARY_KERNELS_H

#include <limits.h>
#include <stdint.h>

#include "conv_args.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The shapes the kernels take (the variant table's and the PyTorch package's check):
 * output channels are the grid's y dimension, 32 a block at most... */
#define BINARY_MAX_GRID_Y 65535
static inline const char *binary_channels_fit_grid(const struct conv_shape *s)
{
    return s->cout <= BINARY_MAX_GRID_Y * 32 ? NULL : "at most 2097120 output channels";
}

/* ... and the tensor-core kernels address packed words with 32-bit offsets
 * (bmma_tile.cuh). */
static inline const char *bmma_shape_unsupported(const struct conv_shape *s)
{
    const size_t words = WORDS_PER_PIXEL(s->cin);
    if ((size_t)s->n * s->h * s->w * words > INT_MAX ||
        (size_t)s->cout * s->ksize * s->ksize * words > INT_MAX)
        return "packed input and weights of at most 2^31 words each";
    return binary_channels_fit_grid(s);
}

/* Lesson 07's fp32 implicit GEMM on +1/-1 floats, then alpha and bias (1_float_sign.cu). */
size_t float_sign_scratch_bytes(const struct conv_shape *s);
conv_launcher setup_conv2d_float_sign, launch_conv2d_float_sign;

/* The seed's design: a block per pixel, a thread per output channel (2_seed_layout.cu). */
conv_launcher launch_conv2d_seed_layout;

/* XOR + popcount on the CUDA cores, weights reused from shared memory (3_packed_xnor.cu). */
conv_launcher launch_conv2d_packed_xnor;

/* Bit tensor cores, mma.sync m16n8k256 with .and.popc or .xor.popc: the ladder of
 * 4_bmma.cu ... 8_bmma_and.cu, one idea a step. setup counts what the epilogue's border
 * correction needs into scratch. */
/* bmma and bmma_ring: each tap's weight popcount per output channel (4_bmma.cu,
 * 5_bmma_ring.cu). */
size_t bmma_tap_scratch_bytes(const struct conv_shape *s);
conv_launcher setup_conv2d_bmma, launch_conv2d_bmma, launch_conv2d_bmma_ring;
/* From bmma_classes on: the op's base per window class and output channel
 * (6_bmma_classes.cu, the AND form; 8_bmma_and.cu, the XOR form), and their shared
 * memory per block at most (the table of bases in it where it fits). */
size_t bmma_scratch_bytes(const struct conv_shape *s);
size_t bmma_smem_per_block(const struct conv_shape *s);
conv_launcher setup_conv2d_bmma_classes, launch_conv2d_bmma_classes; /* 6_bmma_classes.cu */
conv_launcher launch_conv2d_bmma_rows;                               /* 7_bmma_rows.cu */
conv_launcher launch_conv2d_bmma_and, setup_conv2d_bmma_xor, launch_conv2d_bmma_xor;
/* The AND kernel writing the signs of its output packed for the next binary layer
 * (9_bmma_fused.cu): a->output is bits, NHWC; scratch and setup are bmma_classes's. */
conv_launcher launch_conv2d_bmma_fused;
/* bmma_and on Hopper's warpgroup MMA (10_bmma_wgmma.cu, sm_90a code): scratch and setup
 * are bmma_classes's; bmma_wgmma_code_cc is 90 where the build made its sm_90a code, else 0. */
conv_launcher launch_conv2d_bmma_wgmma;
int bmma_wgmma_code_cc(void);
/* The AND layer as lesson 08's best kernels run theirs (11_bmma_tma.cu, sm_90a code): TMA
 * im2col boxes, A and B by descriptor, a producer warp, persistent blocks; step 10 where
 * the TMA cannot read the packed rows. Scratch: bmma_classes's table of bases, then the
 * weights as wgmma reads them (setup lays them out). */
conv_launcher setup_conv2d_bmma_tma, launch_conv2d_bmma_tma;
int bmma_tma_code_cc(void);
size_t bmma_tma_smem_per_block(const struct conv_shape *s);
size_t bmma_tma_scratch_bytes(const struct conv_shape *s);
/* The same AND kernel on float sign input, packed into scratch inside the timed run
 * (setup packs the weights once, as a network would; 8_bmma_and.cu). */
size_t pack_bmma_scratch_bytes(const struct conv_shape *s);
conv_launcher setup_conv2d_pack_bmma_and, launch_conv2d_pack_bmma_and;

/* Signs of `pixels` rows of `channels` floats -> bits, words_per_pixel words per row
 * (pack_bits.cu). */
void enqueue_pack_signs(const float *rows, uint32_t *bits, long long pixels, int channels,
                        cudaStream_t stream);

#ifdef __cplusplus
}
#endif

#endif
