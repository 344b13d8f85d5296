/* The roofline: the fastest a problem can run on a machine is limited by moving its
 * minimum bytes at the measured copy bandwidth, or by its FLOPs at the peak of the
 * unit the variant runs on (FP32 FMA lanes, or the tensor cores of its dtype). */
#ifndef ROOFLINE_H
#define ROOFLINE_H

#include <stdbool.h>

#include "tensor_format.h"

#ifdef __cplusplus
extern "C" {
#endif

enum compute_unit { UNIT_FP32_FMA, UNIT_TF32_TC, UNIT_FP16_TC, UNIT_BINARY_TC, UNIT_COUNT };

struct roofline {
    double bytes;
    double flops;
    double bandwidth_gbps; /* measured device-to-device copy, GB/s (1e9) */
    double peak_gflops;    /* of the unit the variant runs on */
};

/* The unit a dtype's arithmetic runs on: fp32 on the FMA lanes, tf32 and 3xtf32 on
 * the TF32 tensor cores, fp16 and bf16 on the FP16/BF16 tensor cores, binary on the
 * bit tensor cores. */
enum compute_unit unit_of(enum dtype d);
const char *unit_name(enum compute_unit u);
/* Tensor-core operations per multiply-add of the problem: 3 for 3xtf32, else 1. */
double unit_work_factor(enum dtype d);
/* Dense FLOPs per clock per SM of a tensor-core unit with fp32 accumulation (what
 * every kernel of the course does), from NVIDIA's datasheets: the data-centre and
 * workstation rate, halved for fp16, bf16 and TF32 on a GeForce card; 0 where no
 * rate is known (the roofline then has no compute roof for that unit). */
int tensor_flops_per_clock(enum compute_unit u, int cc_major, int cc_minor, bool geforce);

double roofline_time_ms(const struct roofline *r);
bool roofline_memory_bound(const struct roofline *r);
/* Roofline time over measured time, in percent. */
double roofline_percent(const struct roofline *r, double measured_ms);
double achieved_gbps(double bytes, double ms);
double achieved_gflops(double flops, double ms);

#ifdef __cplusplus
}
#endif

#endif
