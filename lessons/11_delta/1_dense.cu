/* Lesson 11, variant dense: the layer recomputed on every frame, whatever changed. It
 * is the yardstick: the NHWC convolution of conv_tile.cuh, one block per 8x8-pixel
 * unit and 64 output channels, writing straight into out. Its state is only the
 * arranged weights, written on frame 0. */
#include "conv_tile.cuh"

#define ARRANGE_THREADS 256

/* One thread per arranged weight: [cout block][chunk][tap][ci][co] from K x R x S x C,
 * zero past channel c on either side. */
__global__ void __launch_bounds__(ARRANGE_THREADS)
    arrange_weights(const float *__restrict__ weights, float *__restrict__ arranged, int c,
                    int ksize)
{
    const int taps = ksize * ksize;
    const size_t count = (size_t)cout_blocks(c) * chunks_of(c) * taps * CHUNK * UNIT_COUT;
    const size_t e = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (e >= count)
        return;
    const int co = (int)(e % UNIT_COUT), ci = (int)(e / UNIT_COUT % CHUNK);
    const int tap = (int)(e / (UNIT_COUT * CHUNK) % taps);
    const size_t q = e / ((size_t)UNIT_COUT * CHUNK * taps);
    const int chunk = (int)(q % chunks_of(c)), block = (int)(q / chunks_of(c));
    const int k = block * UNIT_COUT + co, ch = chunk * CHUNK + ci;
    arranged[e] =
        k < c && ch < c ? weights[krsc_at(ksize, c, k, tap / ksize, tap % ksize, ch)] : 0.0f;
}

static void launch_arrange_weights(const struct delta_args *a, float *arranged)
{
    const size_t count = delta_arranged_weights(a->c, a->ksize);
    arrange_weights<<<(unsigned)((count + ARRANGE_THREADS - 1) / ARRANGE_THREADS), ARRANGE_THREADS,
                      0, a->stream>>>(a->weights, arranged, a->c, a->ksize);
    CUDA_CHECK_LAUNCH();
}

/* [page: dense-kernel] */
template <int K, bool VECTOR>
__global__ void __launch_bounds__(UNIT_THREADS, UNIT_MIN_BLOCKS)
    delta_dense(struct conv_operands o, int units_x)
{
    extern __shared__ float4 smem4[];
    conv_unit<K, SOURCE_ALL, STORE_WITH_BIAS, VECTOR>(o, blockIdx.x / units_x, blockIdx.x % units_x,
                                                      blockIdx.y, (float *)smem4);
}
/* [/page: dense-kernel] */

extern "C" size_t dense_state_bytes(const struct delta_args *a)
{
    return delta_state_layout(DELTA_DENSE, a->h, a->w, a->c, a->ksize, a->tile).bytes;
}

/* Every variant computes its units through conv_unit: the shared memory per block of
 * each of them, for the harness to check against the GPU's before a launch. */
extern "C" size_t delta_smem_bytes(int ksize)
{
    size_t bytes = 0;
    with_ksize(ksize, [&](auto k) { bytes = unit_tile<decltype(k)::value>::SMEM_BYTES; });
    return bytes;
}

extern "C" void launch_delta_dense(const struct delta_args *a)
{
    if (a->frame_index == 0)
        launch_arrange_weights(a, (float *)a->state);
    const int units_x = units_along(a->w);
    const dim3 grid((unsigned)(units_along(a->h) * units_x), (unsigned)cout_blocks(a->c));
    const struct conv_operands o = conv_operands_for(a, a->frame, NULL, a->out);
    const bool vector = vector_source(a, a->frame);
    with_ksize(a->ksize, [&](auto k) {
        constexpr int K = decltype(k)::value;
        const size_t smem = unit_tile<K>::SMEM_BYTES;
        auto kernel = vector ? delta_dense<K, true> : delta_dense<K, false>;
        allow_smem(kernel, smem);
        kernel<<<grid, UNIT_THREADS, smem, a->stream>>>(o, units_x);
    });
    CUDA_CHECK_LAUNCH();
}
