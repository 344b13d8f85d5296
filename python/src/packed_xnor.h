/* Lesson 09's packed_xnor (XOR + popcount on the CUDA cores) on float input: the signs
 * packed first by the lesson's pack_bits.cu, as its pack_bmma_and does for the bit tensor
 * cores. The binary kernel of GPUs without mma m16n8k256 (compute capability 7.5).
 * Input float NHWC, weights float KRSC: their signs are the layer's +1/-1 values. */
#ifndef PACKED_XNOR_H
#define PACKED_XNOR_H

#include <stddef.h>

#include "conv_args.h"

/* Scratch: the packed input, then the packed weights. */
size_t packed_xnor_scratch_bytes(const struct conv_shape *s);
/* Packs the weights into scratch. */
void setup_packed_xnor(const struct conv_args *a);
/* Packs the input into scratch and runs the layer on the packed words. */
void run_packed_xnor(const struct conv_args *a);

#endif
