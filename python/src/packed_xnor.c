#include "packed_xnor.h"

#include <stdint.h>

#include "lessons/09_binary/kernels.h"

static long long input_pixels(const struct conv_shape *s)
{
    return (long long)s->n * s->h * s->w;
}

/* Weights KRSC are rows of C channels, as input pixels are. */
static long long weight_rows(const struct conv_shape *s)
{
    return (long long)s->cout * s->ksize * s->ksize;
}

static uint32_t *packed_weights(const struct conv_args *a)
{
    return (uint32_t *)a->scratch + input_pixels(&a->shape) * WORDS_PER_PIXEL(a->shape.cin);
}

size_t packed_xnor_scratch_bytes(const struct conv_shape *s)
{
    return (size_t)(input_pixels(s) + weight_rows(s)) * WORDS_PER_PIXEL(s->cin) * sizeof(uint32_t);
}

void setup_packed_xnor(const struct conv_args *a)
{
    enqueue_pack_signs(weights_f32(a), packed_weights(a), weight_rows(&a->shape), a->shape.cin,
                       a->stream);
}

void run_packed_xnor(const struct conv_args *a)
{
    enqueue_pack_signs(input_f32(a), (uint32_t *)a->scratch, input_pixels(&a->shape), a->shape.cin,
                       a->stream);
    struct conv_args packed = *a;
    packed.input = a->scratch;
    packed.weights = packed_weights(a);
    launch_conv2d_packed_xnor(&packed);
}
