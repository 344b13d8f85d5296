/* The roofline: the fastest a problem can run on a machine is limited by moving its
 * minimum bytes at the measured copy bandwidth, or by its FLOPs at the FP32 peak. */
#ifndef ROOFLINE_H
#define ROOFLINE_H

#include <stdbool.h>

struct roofline {
    double bytes;
    double flops;
    double bandwidth_gbps; /* measured device-to-device copy, GB/s (1e9) */
    double peak_gflops;    /* SMs x clock x FP32 lanes x 2 */
};

double roofline_time_ms(const struct roofline *r);
bool roofline_memory_bound(const struct roofline *r);
/* Roofline time over measured time, in percent. */
double roofline_percent(const struct roofline *r, double measured_ms);
double achieved_gbps(double bytes, double ms);
double achieved_gflops(double flops, double ms);

#endif
