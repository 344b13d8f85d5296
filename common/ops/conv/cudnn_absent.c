/* Built instead of cudnn_baseline.c when cuDNN was not found at configure time or
 * CONV_CUDNN is OFF. */
#include "cudnn_baseline.h"

bool cudnn_available(void)
{
    return false;
}

int cudnn_version(void)
{
    return 0;
}

struct cudnn_conv *cudnn_conv_create(const struct conv_shape *s, enum dtype d, enum layout l,
                                     cudaStream_t stream, const char **why)
{
    (void)s, (void)d, (void)l, (void)stream;
    *why = "built without cuDNN";
    return NULL;
}

int cudnn_conv_algorithm_count(void)
{
    return 0;
}

const char *cudnn_algorithm_name(int algorithm)
{
    (void)algorithm;
    return "none";
}

bool cudnn_conv_select(struct cudnn_conv *c, int algorithm, size_t max_workspace, const char **why)
{
    (void)c, (void)algorithm, (void)max_workspace;
    *why = "built without cuDNN";
    return false;
}

bool cudnn_conv_run(struct cudnn_conv *c, const void *in, const void *w, void *out)
{
    (void)c, (void)in, (void)w, (void)out;
    return false;
}

void cudnn_conv_destroy(struct cudnn_conv *c)
{
    (void)c;
}
