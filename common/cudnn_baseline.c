#include "cudnn_baseline.h"

#include <cudnn.h>
#include <stdio.h>
#include <stdlib.h>

#include "cuda_check.h"

#define CUDNN_CHECK(expr)                                                              \
    do {                                                                               \
        cudnnStatus_t cudnn_check_status_ = (expr);                                    \
        if (cudnn_check_status_ != CUDNN_STATUS_SUCCESS) {                             \
            fprintf(stderr, "error: cuDNN: %s failed at %s:%d: %s\n", #expr, __FILE__, \
                    __LINE__, cudnnGetErrorString(cudnn_check_status_));               \
            exit(1);                                                                   \
        }                                                                              \
    } while (0)

struct cudnn_conv {
    cudnnHandle_t handle;
    cudnnTensorDescriptor_t in_desc, out_desc;
    cudnnFilterDescriptor_t w_desc;
    cudnnConvolutionDescriptor_t conv_desc;
    cudnnConvolutionFwdAlgo_t algo;
    void *workspace;
    size_t workspace_bytes;
};

static const char *const algo_names[] = {
    "implicit_gemm", "implicit_precomp_gemm", "gemm",     "direct",
    "fft",           "fft_tiling",            "winograd", "winograd_nonfused"};

bool cudnn_available(void)
{
    return true;
}

struct cudnn_conv *cudnn_conv_create(const struct conv_shape *s, const char **why)
{
    struct cudnn_conv *c = calloc(1, sizeof *c);
    if (!c) {
        *why = "out of host memory";
        return NULL;
    }
    const int pad = s->ksize / 2;
    CUDNN_CHECK(cudnnCreate(&c->handle));
    CUDNN_CHECK(cudnnCreateTensorDescriptor(&c->in_desc));
    CUDNN_CHECK(cudnnCreateTensorDescriptor(&c->out_desc));
    CUDNN_CHECK(cudnnCreateFilterDescriptor(&c->w_desc));
    CUDNN_CHECK(cudnnCreateConvolutionDescriptor(&c->conv_desc));
    CUDNN_CHECK(cudnnSetTensor4dDescriptor(c->in_desc, CUDNN_TENSOR_NCHW, CUDNN_DATA_FLOAT, s->n,
                                           s->cin, s->h, s->w));
    CUDNN_CHECK(cudnnSetTensor4dDescriptor(c->out_desc, CUDNN_TENSOR_NCHW, CUDNN_DATA_FLOAT, s->n,
                                           s->cout, s->h, s->w));
    CUDNN_CHECK(cudnnSetFilter4dDescriptor(c->w_desc, CUDNN_DATA_FLOAT, CUDNN_TENSOR_NCHW, s->cout,
                                           s->cin, s->ksize, s->ksize));
    CUDNN_CHECK(cudnnSetConvolution2dDescriptor(c->conv_desc, pad, pad, 1, 1, 1, 1,
                                                CUDNN_CROSS_CORRELATION, CUDNN_DATA_FLOAT));
    /* FMA math only: plain fp32, no TF32 tensor cores. */
    CUDNN_CHECK(cudnnSetConvolutionMathType(c->conv_desc, CUDNN_FMA_MATH));

    cudnnConvolutionFwdAlgoPerf_t perf[CUDNN_CONVOLUTION_FWD_ALGO_COUNT];
    int found = 0;
    CUDNN_CHECK(cudnnFindConvolutionForwardAlgorithm(c->handle, c->in_desc, c->w_desc,
                                                     c->conv_desc, c->out_desc,
                                                     CUDNN_CONVOLUTION_FWD_ALGO_COUNT, &found,
                                                     perf));
    int best = -1;
    for (int i = 0; i < found && best < 0; i++)
        if (perf[i].status == CUDNN_STATUS_SUCCESS)
            best = i; /* results come sorted by time */
    if (best < 0) {
        *why = "cuDNN found no algorithm for this problem";
        cudnn_conv_destroy(c);
        return NULL;
    }
    c->algo = perf[best].algo;
    c->workspace_bytes = perf[best].memory;
    if (c->workspace_bytes > 0 && cudaMalloc(&c->workspace, c->workspace_bytes) != cudaSuccess) {
        cudaGetLastError();
        *why = "no GPU memory left for cuDNN's workspace";
        c->workspace = NULL;
        cudnn_conv_destroy(c);
        return NULL;
    }
    return c;
}

void cudnn_conv_run(struct cudnn_conv *c, const float *in, const float *w, float *out)
{
    const float alpha = 1.0f, beta = 0.0f;
    CUDNN_CHECK(cudnnConvolutionForward(c->handle, &alpha, c->in_desc, in, c->w_desc, w,
                                        c->conv_desc, c->algo, c->workspace, c->workspace_bytes,
                                        &beta, c->out_desc, out));
}

const char *cudnn_conv_algorithm(const struct cudnn_conv *c)
{
    int i = (int)c->algo;
    return i >= 0 && i < (int)(sizeof algo_names / sizeof algo_names[0]) ? algo_names[i] : "?";
}

void cudnn_conv_destroy(struct cudnn_conv *c)
{
    if (!c)
        return;
    if (c->workspace)
        CUDA_CHECK(cudaFree(c->workspace));
    cudnnDestroyConvolutionDescriptor(c->conv_desc);
    cudnnDestroyFilterDescriptor(c->w_desc);
    cudnnDestroyTensorDescriptor(c->in_desc);
    cudnnDestroyTensorDescriptor(c->out_desc);
    cudnnDestroy(c->handle);
    free(c);
}
