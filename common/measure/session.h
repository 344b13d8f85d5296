/* What every run of a lesson shares, whatever its problem: the exit codes, the GPU it
 * runs on (or why there is none), and the header line that names both machines. */
#ifndef SESSION_H
#define SESSION_H

#include <stdbool.h>

#include <cuda_runtime_api.h>

#include "gpu_info.h"
#include "report.h"
#include "roofline.h"
#include "tensor_format.h"

#ifdef __cplusplus
extern "C" {
#endif

#define EXIT_PASS 0
#define EXIT_FAIL 1
#define EXIT_USAGE 2
#define EXIT_NO_GPU 77

struct session {
    const char *lesson;   /* the folder name */
    bool have_gpu;
    const char *no_gpu_reason; /* when there is none */
    struct gpu_info gpu;
    cudaStream_t stream;  /* non-blocking; every launch and copy of the run goes on it */
};

/* What a lesson or tool that needs a GPU does when gpu_count finds none: prints
 * "skipped: <program> needs a CUDA GPU and found none (<why>)", returns EXIT_NO_GPU. */
int report_no_gpu(const char *program, const char *why);
/* Picks GPU `device`, creates the stream and measures the copy bandwidth. Without a
 * usable GPU: EXIT_NO_GPU with one line on stderr when gpu_needed, else EXIT_PASS with
 * have_gpu false. EXIT_USAGE for a device number past the last one. */
int session_open(struct session *s, const char *lesson, bool gpu_needed, int min_cc, int device);
void session_close(struct session *s);
/* The header line: lesson, the CPU when cpu_rows, the GPU with its peaks, and a
 * warning line when the binary runs JIT-compiled PTX on this GPU. */
void session_print_header(const struct session *s, bool cpu_rows);
/* The roofline of `bytes` and `flops` on this GPU, at the peak of the unit dtype d
 * runs on (tensor-core work counted as unit_work_factor says). */
struct roofline session_roofline(const struct session *s, double bytes, double flops,
                                 enum dtype d);
/* A timed row's GB/s, GFLOP/s and % of the roofline from the minimum bytes and the
 * FLOPs of its algorithm; rows that ran on the CPU get no roofline. */
void session_fill_rates(const struct session *s, struct result_row *row, double bytes,
                        double flops, bool gpu_row);

#ifdef __cplusplus
}
#endif

#endif
