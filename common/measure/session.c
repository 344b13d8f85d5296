#include "session.h"

#include <math.h>
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>

#include "build_info.h"
#include "cuda_check.h"
#include "escape.h"
#include "host_info.h"

int report_no_gpu(const char *program, const char *why)
{
    fprintf(stderr, "skipped: %s needs a CUDA GPU and found none (%s)\n", program, why);
    return EXIT_NO_GPU;
}

int session_open(struct session *s, const char *lesson, bool gpu_needed, int min_cc, int device)
{
    s->lesson = lesson;
    s->have_gpu = false;
    const char *emulate = getenv("CONV_EMULATE_GPU");
    const struct gpu_model *emulated = emulate && *emulate ? gpu_model_find(emulate) : NULL;
    if (emulate && *emulate && !emulated) {
        print_error("CONV_EMULATE_GPU=%s: not a GPU model the harness knows (%s)", emulate,
                    gpu_model_keys());
        return EXIT_USAGE;
    }
    const char *why = NULL;
    int count = gpu_count(&why);
    if (count == 0) {
        if (gpu_needed)
            return report_no_gpu(lesson, why);
        s->no_gpu_reason = why;
        return EXIT_PASS;
    }
    if (device >= count) {
        print_error("--device %d: this machine has %d CUDA device%s (0..%d)", device, count,
                    count == 1 ? "" : "s", count - 1);
        return EXIT_USAGE;
    }
    gpu_query(device, &s->gpu);
    if (gpu_needed && s->gpu.code_cc == 0) {
        print_error("this build holds no code %s (sm_%d%d) can run: it was built for sm_%s "
                    "(rebuild: make ARCH=%d%d)", s->gpu.name, s->gpu.cc_major, s->gpu.cc_minor,
                    build_cuda_architectures, s->gpu.cc_major, s->gpu.cc_minor);
        return EXIT_USAGE;
    }
    if (emulated)
        gpu_emulate(&s->gpu, emulated);
    int cc = s->gpu.cc_major * 10 + s->gpu.cc_minor;
    if (gpu_needed && cc < min_cc) {
        fprintf(stderr, "skipped: %s needs compute capability %d.%d; %s is %d.%d\n", lesson,
                min_cc / 10, min_cc % 10, s->gpu.name, s->gpu.cc_major, s->gpu.cc_minor);
        return EXIT_NO_GPU;
    }
    s->have_gpu = true;
    CUDA_CHECK(cudaStreamCreateWithFlags(&s->stream, cudaStreamNonBlocking));
    gpu_measure_copy_bandwidth(&s->gpu);
    return EXIT_PASS;
}

void session_close(struct session *s)
{
    if (s->have_gpu)
        CUDA_CHECK(cudaStreamDestroy(s->stream));
    s->have_gpu = false;
}

void session_print_header(const struct session *s, bool cpu_rows)
{
    char cpu[320];
    cpu_description(omp_get_max_threads(), cpu, sizeof cpu);
    printf("lesson %s | ", s->lesson);
    if (cpu_rows)
        printf("CPU %s | ", cpu);
    if (s->have_gpu) {
        const struct gpu_info *g = &s->gpu;
        const double *peak = g->peak_gflops;
        printf("%s | cc %d.%d | %d SMs | L2 %.0f MB | copy %.0f GB/s | peak TFLOP/s: fp32 %.1f",
               g->name, g->cc_major, g->cc_minor, g->sm_count, g->l2_bytes / 1e6, g->copy_gbps,
               peak[UNIT_FP32_FMA] / 1e3);
        for (int u = UNIT_TF32_TC; u < UNIT_COUNT; u++)
            if (peak[u] > 0)
                printf(", %s %.0f", unit_name((enum compute_unit)u), peak[u] / 1e3);
        if (g->geforce)
            printf(" (GeForce: tensor cores at half rate with fp32 accumulation)");
    } else {
        printf("no GPU (%s): GPU rows skipped", s->no_gpu_reason);
    }
    printf("\n");
    if (s->have_gpu && s->gpu.emulated)
        printf("emulating: %s's limits and peaks (CONV_EMULATE_GPU=%s); the kernels and their "
               "times are this GPU's\n", s->gpu.emulated->name, s->gpu.emulated->key);
    if (s->have_gpu && !s->gpu.emulated &&
        binary_runs_jit(build_cuda_architectures, s->gpu.cc_major, s->gpu.cc_minor))
        printf("warning: built for sm_%s, not for this GPU's sm_%d%d: running JIT-compiled PTX, "
               "so the numbers are not representative (rebuild: cmake -S . -B build)\n",
               build_cuda_architectures, s->gpu.cc_major, s->gpu.cc_minor);
}

struct roofline session_roofline(const struct session *s, double bytes, double flops,
                                 enum dtype d)
{
    struct roofline roof = {bytes, flops * unit_work_factor(d), s->gpu.copy_gbps,
                            s->gpu.peak_gflops[unit_of(d)]};
    return roof;
}

void session_fill_rates(const struct session *s, struct result_row *row, double bytes,
                        double flops, bool gpu_row)
{
    row->gbps = achieved_gbps(bytes, row->time.median_ms);
    row->gflops = achieved_gflops(flops, row->time.median_ms);
    struct roofline roof = session_roofline(s, bytes, flops, row->dtype);
    row->roofline_pct = gpu_row ? roofline_percent(&roof, row->time.median_ms) : NAN;
    row->roof_unit = !gpu_row               ? "-"
                     : roof.peak_gflops > 0 ? unit_name(unit_of(row->dtype))
                                            : "memory";
}
