#include "draw.h"

#include <cuda_fp16.h>

#include "cuda_check.h"
#include "layer_values.h"

#define DRAW_THREADS 256
#define DRAW_BLOCKS 4096 /* a grid-stride loop: enough blocks to fill any GPU */

__global__ void draw_kernel(__half *to, size_t image_stride, int n0, int images, int r0,
                            size_t per_image, int h, int w, int c)
{
    const size_t count = per_image * (size_t)images;
    for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < count;
         i += (size_t)gridDim.x * blockDim.x) {
        const size_t n = i / per_image, e = i % per_image;
        const uint64_t at = ((uint64_t)(n0 + n) * h + r0) * w * c + e; /* in the layer */
        to[n * image_stride + e] = __float2half_rn(layer_value(LAYER_INPUT, at));
    }
}

void draw_input_rows(void *to, size_t image_stride, int n0, int images, int r0, int rows,
                     const struct conv_shape *s, cudaStream_t stream)
{
    const size_t per_image = (size_t)rows * s->w * s->cin;
    if (per_image == 0 || images == 0)
        return;
    draw_kernel<<<DRAW_BLOCKS, DRAW_THREADS, 0, stream>>>((__half *)to, image_stride, n0, images,
                                                          r0, per_image, s->h, s->w, s->cin);
    CUDA_CHECK(cudaGetLastError());
}
