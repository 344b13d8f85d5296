/* Built instead of cudnn_baseline.c when cuDNN was not found at configure time. */
#include "cudnn_baseline.h"

#include <stddef.h>

bool cudnn_available(void)
{
    return false;
}

struct cudnn_conv *cudnn_conv_create(const struct conv_shape *s, const char **why)
{
    (void)s;
    *why = "built without cuDNN";
    return NULL;
}

void cudnn_conv_run(struct cudnn_conv *c, const float *in, const float *w, float *out)
{
    (void)c, (void)in, (void)w, (void)out;
}

const char *cudnn_conv_algorithm(const struct cudnn_conv *c)
{
    (void)c;
    return "none";
}

void cudnn_conv_destroy(struct cudnn_conv *c)
{
    (void)c;
}
