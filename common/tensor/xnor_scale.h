/* XNOR-Net's scaling factor (Rastegari et al., 2016): a binary layer replaces the real
 * weights w[k][c][i][j] by alpha[k] * sign(w), where alpha[k] is the mean |w| over the
 * real weights of output channel k: the factor that makes alpha * sign(w) the closest
 * such tensor to w. The kernels sum x * sign(w) exactly in integers and multiply by
 * alpha[k] once per output. */
#ifndef XNOR_SCALE_H
#define XNOR_SCALE_H

#include "conv_problem.h"

#ifdef __cplusplus
extern "C" {
#endif

/* alpha[k] for every output channel, and the weights as the layer uses them,
 * alpha[k] * sign(w) (sign(0) = +1, as dtype_round), into binarised. */
void xnor_scale_weights(const struct conv_shape *s, const float *weights, float *alpha,
                        float *binarised);

#ifdef __cplusplus
}
#endif

#endif
