/* A lesson whose one variant allocates device memory in setup and never frees it:
 * the memcheck leak check must catch it (tests/CMakeLists.txt, leak_is_caught).
 * It proves that a variant owning memory outside the harness's scratch fails
 * gpu-check instead of passing quietly. */
#include "conv_op.h"
#include "cuda_check.h"
#include "lesson.h"

#define LEAKED_BYTES (1 << 20)

static void setup_and_leak(const struct conv_args *a)
{
    (void)a;
    void *lost;
    CUDA_CHECK(cudaMalloc(&lost, LEAKED_BYTES));
}

static void copy_input(const struct conv_args *a)
{
    size_t bytes = input_count(&a->shape) * sizeof(float);
    CUDA_CHECK(cudaMemcpyAsync(a->output, a->input, bytes, cudaMemcpyDeviceToDevice, a->stream));
}

static const struct conv_variant variants[] = {
    {.name = "leaky",
     .what = "cudaMalloc in setup, no teardown",
     .setup = setup_and_leak,
     .run = copy_input},
};

static const struct conv_spec conv = {
    .variants = variants,
    .variant_count = 1,
    .image_variant = "leaky",
};

int main(int argc, char **argv)
{
    const struct lesson lesson = {
        .name = "leaky_lesson",
        .title = "a variant that leaks device memory",
        .default_preset = "seed000",
        .min_compute_capability = 75,
        .op = conv_op(&conv),
    };
    return lesson_main(&lesson, argc, argv);
}
