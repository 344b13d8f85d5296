#include "xnor_scale.h"

#include <math.h>

#include "tensor_format.h"

void xnor_scale_weights(const struct conv_shape *s, const float *weights, float *alpha,
                        float *binarised)
{
    size_t per_channel = (size_t)s->cin * s->ksize * s->ksize;
    for (int k = 0; k < s->cout; k++) {
        const float *w = weights + (size_t)k * per_channel;
        double sum = 0;
        for (size_t i = 0; i < per_channel; i++)
            sum += fabs(w[i]);
        alpha[k] = (float)(sum / (double)per_channel);
        for (size_t i = 0; i < per_channel; i++)
            binarised[(size_t)k * per_channel + i] = alpha[k] * dtype_round(DTYPE_BINARY, w[i]);
    }
}
