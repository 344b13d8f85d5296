#include "instruction_rate.h"

#include <stdarg.h>
#include <stdio.h>

#include "cuda_check.h"
#include "session.h"

int rate_open(struct gpu_info *g, const char *tool, bool (*can_run)(const struct gpu_info *g),
              const char *needs, const char *format, ...)
{
    const char *why = NULL;
    if (gpu_count(&why) == 0)
        return report_no_gpu(tool, why);
    gpu_query(0, g);
    if (!can_run(g)) {
        fprintf(stderr, "skipped: %s; %s is %d.%d\n", needs, g->name, g->cc_major, g->cc_minor);
        return EXIT_NO_GPU;
    }
    printf("%s | %s | cc %d.%d | %d SMs | clock %d MHz (the attribute: per-clock rates assume "
           "it) | ",
           tool, g->name, g->cc_major, g->cc_minor, g->sm_count, g->clock_khz / 1000);
    va_list args;
    va_start(args, format);
    vprintf(format, args);
    va_end(args);
    printf("\n");
    return EXIT_PASS;
}

/* The fastest of kind's timed runs, in ms. */
static float fastest_ms(const struct gpu_info *g, const struct rate_kind *kind, uint32_t *sink)
{
    cudaEvent_t start, stop;
    CUDA_CHECK(cudaEventCreate(&start));
    CUDA_CHECK(cudaEventCreate(&stop));
    float best_ms = 0.0f;
    for (int r = 0; r < RATE_WARMUP + RATE_REPS; r++) {
        CUDA_CHECK(cudaEventRecord(start, 0));
        kind->launch(r, g, sink);
        CUDA_CHECK_LAUNCH();
        CUDA_CHECK(cudaEventRecord(stop, 0));
        CUDA_CHECK(cudaEventSynchronize(stop));
        float ms;
        CUDA_CHECK(cudaEventElapsedTime(&ms, start, stop));
        if (r >= RATE_WARMUP && (best_ms == 0.0f || ms < best_ms))
            best_ms = ms;
    }
    CUDA_CHECK(cudaEventDestroy(start));
    CUDA_CHECK(cudaEventDestroy(stop));
    return best_ms;
}

void rate_measure(const struct gpu_info *g, const char *instruction, int name_width,
                  const struct rate_kind *kinds, int count)
{
    uint32_t *sink;
    CUDA_CHECK(cudaMalloc((void **)&sink, sizeof *sink));
    for (int k = 0; k < count; k++) {
        const float best_ms = fastest_ms(g, &kinds[k], sink);
        const double per_second = kinds[k].ops_per_sm * g->sm_count / (best_ms * 1e-3);
        printf("%s %-*s %8.1f TOPS  %7.0f ops per clock per SM  (fastest of %d runs, %.3f ms)\n",
               instruction, name_width, kinds[k].name, per_second / 1e12,
               per_second / ((double)g->clock_khz * 1e3 * g->sm_count), RATE_REPS, best_ms);
    }
    CUDA_CHECK(cudaFree(sink));
}
