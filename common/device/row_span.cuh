/* A span of one image row in registers, and back: the load and store of the
 * register-tiled kernels (lessons 05 and 06). Reads outside the image give zeros,
 * the "same" padding; stores outside it are dropped. For the kernels (.cu) only. */
#ifndef ROW_SPAN_CUH
#define ROW_SPAN_CUH

/* Floats in one 16-byte load or store. */
#define VEC 4

/* Row y, columns x .. x + SPAN - 1 of one plane into registers; zero outside the
 * image, which is the "same" padding. With WIDE the caller guarantees that x and w
 * are multiples of 4 and the plane starts on 16 bytes, so each float4 lies wholly
 * inside or wholly outside the image and one test covers its four floats. */
template <int SPAN, bool WIDE>
__device__ __forceinline__ void load_span(float (&v)[SPAN], const float *__restrict__ plane, int y,
                                          int x, int h, int w)
{
    /* y * w + c is formed only for a pixel inside the image, so it fits an int, and
     * the compiler folds each element's offset into its load as an immediate. */
    const bool row_inside = (unsigned)y < (unsigned)h;
    if constexpr (WIDE) {
        static_assert(SPAN % VEC == 0, "a 16-byte span is whole float4s");
#pragma unroll
        for (int q = 0; q < SPAN / VEC; ++q) {
            const int c = x + q * VEC;
            float4 f = make_float4(0.0f, 0.0f, 0.0f, 0.0f);
            if (row_inside && (unsigned)c < (unsigned)w)
                f = __ldg(reinterpret_cast<const float4 *>(plane + (y * w + c)));
            v[q * VEC + 0] = f.x;
            v[q * VEC + 1] = f.y;
            v[q * VEC + 2] = f.z;
            v[q * VEC + 3] = f.w;
        }
    } else {
#pragma unroll
        for (int e = 0; e < SPAN; ++e) {
            const int c = x + e;
            v[e] = row_inside && (unsigned)c < (unsigned)w ? __ldg(plane + (y * w + c)) : 0.0f;
        }
    }
}

/* Outputs x .. x + OUTS - 1 of row y, the ones inside the image. */
template <int OUTS, bool WIDE>
__device__ __forceinline__ void store_span(const float (&v)[OUTS], float *__restrict__ plane, int y,
                                           int x, int h, int w)
{
    if (y >= h)
        return;
    if constexpr (WIDE) {
#pragma unroll
        for (int q = 0; q < OUTS / VEC; ++q) {
            const int c = x + q * VEC;
            if (c < w)
                *reinterpret_cast<float4 *>(plane + (y * w + c)) =
                    make_float4(v[q * VEC], v[q * VEC + 1], v[q * VEC + 2], v[q * VEC + 3]);
        }
    } else {
#pragma unroll
        for (int m = 0; m < OUTS; ++m)
            if (x + m < w)
                plane[y * w + x + m] = v[m];
    }
}

#endif
