#include "cudnn_baseline.h"

#include <cudnn.h>
#include <stdlib.h>

#include "cuda_check.h"

#define CUDNN_CHECK(expr)                                                                          \
    CHECK_CALL("cuDNN", cudnnStatus_t, CUDNN_STATUS_SUCCESS, cudnnGetErrorString, expr, #expr)

struct cudnn_conv {
    cudnnHandle_t handle;
    cudnnTensorDescriptor_t in_desc, out_desc;
    cudnnFilterDescriptor_t w_desc;
    cudnnConvolutionDescriptor_t conv_desc;
    cudnnConvolutionFwdAlgo_t algo;
    void *workspace;
    size_t workspace_bytes;
};

static const char *const algo_names[CUDNN_CONVOLUTION_FWD_ALGO_COUNT] = {
    "implicit_gemm", "implicit_precomp_gemm", "gemm", "direct", "fft", "fft_tiling",
    "winograd",      "winograd_nonfused"};

bool cudnn_available(void)
{
    return true;
}

int cudnn_version(void)
{
    return (int)cudnnGetVersion();
}

int cudnn_conv_algorithm_count(void)
{
    return CUDNN_CONVOLUTION_FWD_ALGO_COUNT;
}

const char *cudnn_algorithm_name(int algorithm)
{
    return algorithm >= 0 && algorithm < CUDNN_CONVOLUTION_FWD_ALGO_COUNT ? algo_names[algorithm]
                                                                          : "?";
}

static bool data_type_of(enum dtype d, cudnnDataType_t *t)
{
    switch (d) {
    case DTYPE_FP32:
    case DTYPE_TF32: *t = CUDNN_DATA_FLOAT; return true;
    case DTYPE_FP16: *t = CUDNN_DATA_HALF; return true;
    case DTYPE_BF16: *t = CUDNN_DATA_BFLOAT16; return true;
    default: return false; /* 3xtf32 and binary have no cuDNN equivalent */
    }
}

struct cudnn_conv *cudnn_conv_create(const struct conv_shape *s, enum dtype d, enum layout l,
                                     cudaStream_t stream, const char **why)
{
    cudnnDataType_t type;
    if (!data_type_of(d, &type) || l == LAYOUT_BITS) {
        *why = "cuDNN has no such format";
        return NULL;
    }
    struct cudnn_conv *c = calloc(1, sizeof *c);
    if (!c) {
        *why = "out of host memory";
        return NULL;
    }
    const cudnnTensorFormat_t format = l == LAYOUT_NHWC ? CUDNN_TENSOR_NHWC : CUDNN_TENSOR_NCHW;
    const int pad = s->ksize / 2;
    CUDNN_CHECK(cudnnCreate(&c->handle));
    CUDNN_CHECK(cudnnSetStream(c->handle, stream));
    CUDNN_CHECK(cudnnCreateTensorDescriptor(&c->in_desc));
    CUDNN_CHECK(cudnnCreateTensorDescriptor(&c->out_desc));
    CUDNN_CHECK(cudnnCreateFilterDescriptor(&c->w_desc));
    CUDNN_CHECK(cudnnCreateConvolutionDescriptor(&c->conv_desc));
    CUDNN_CHECK(cudnnSetTensor4dDescriptor(c->in_desc, format, type, s->n, s->cin, s->h, s->w));
    CUDNN_CHECK(cudnnSetTensor4dDescriptor(c->out_desc, format, type, s->n, s->cout, s->h, s->w));
    CUDNN_CHECK(
        cudnnSetFilter4dDescriptor(c->w_desc, type, format, s->cout, s->cin, s->ksize, s->ksize));
    /* Accumulate in float32 for every type (fp16/bf16: the "pseudo" configurations). */
    CUDNN_CHECK(cudnnSetConvolution2dDescriptor(c->conv_desc, pad, pad, 1, 1, 1, 1,
                                                CUDNN_CROSS_CORRELATION, CUDNN_DATA_FLOAT));
    /* fp32 is plain FMA arithmetic; the others may use the tensor cores. */
    CUDNN_CHECK(cudnnSetConvolutionMathType(c->conv_desc, d == DTYPE_FP32 ? CUDNN_FMA_MATH
                                                                          : CUDNN_TENSOR_OP_MATH));
    return c;
}

static void release_workspace(struct cudnn_conv *c)
{
    if (c->workspace)
        CUDA_CHECK(cudaFree(c->workspace));
    c->workspace = NULL;
    c->workspace_bytes = 0;
}

bool cudnn_conv_select(struct cudnn_conv *c, int algorithm, size_t max_workspace, const char **why)
{
    release_workspace(c);
    c->algo = (cudnnConvolutionFwdAlgo_t)algorithm;
    size_t bytes = 0;
    if (cudnnGetConvolutionForwardWorkspaceSize(c->handle, c->in_desc, c->w_desc, c->conv_desc,
                                                c->out_desc, c->algo,
                                                &bytes) != CUDNN_STATUS_SUCCESS) {
        *why = "not offered for this problem";
        return false;
    }
    if (bytes > max_workspace) {
        *why = "its workspace does not fit in GPU memory";
        return false;
    }
    if (bytes > 0 && cudaMalloc(&c->workspace, bytes) != cudaSuccess) {
        cudaGetLastError();
        c->workspace = NULL;
        *why = "no GPU memory left for its workspace";
        return false;
    }
    c->workspace_bytes = bytes;
    return true;
}

bool cudnn_conv_run(struct cudnn_conv *c, const void *in, const void *w, void *out)
{
    const float alpha = 1.0f, beta = 0.0f;
    return cudnnConvolutionForward(c->handle, &alpha, c->in_desc, in, c->w_desc, w, c->conv_desc,
                                   c->algo, c->workspace, c->workspace_bytes, &beta, c->out_desc,
                                   out) == CUDNN_STATUS_SUCCESS;
}

void cudnn_conv_destroy(struct cudnn_conv *c)
{
    if (!c)
        return;
    release_workspace(c);
    cudnnDestroyConvolutionDescriptor(c->conv_desc);
    cudnnDestroyFilterDescriptor(c->w_desc);
    cudnnDestroyTensorDescriptor(c->in_desc);
    cudnnDestroyTensorDescriptor(c->out_desc);
    cudnnDestroy(c->handle);
    free(c);
}
