#include "roofline.h"

double roofline_time_ms(const struct roofline *r)
{
    double memory_ms = r->bytes / (r->bandwidth_gbps * 1e9) * 1e3;
    double compute_ms = r->flops / (r->peak_gflops * 1e9) * 1e3;
    return memory_ms > compute_ms ? memory_ms : compute_ms;
}

bool roofline_memory_bound(const struct roofline *r)
{
    return r->bytes / r->bandwidth_gbps >= r->flops / r->peak_gflops;
}

double roofline_percent(const struct roofline *r, double measured_ms)
{
    return 100.0 * roofline_time_ms(r) / measured_ms;
}

double achieved_gbps(double bytes, double ms)
{
    return bytes / (ms * 1e-3) / 1e9;
}

double achieved_gflops(double flops, double ms)
{
    return flops / (ms * 1e-3) / 1e9;
}
