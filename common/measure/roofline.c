#include "roofline.h"

enum compute_unit unit_of(enum dtype d)
{
    switch (d) {
    case DTYPE_TF32:
    case DTYPE_3XTF32: return UNIT_TF32_TC;
    case DTYPE_FP16:
    case DTYPE_BF16: return UNIT_FP16_TC;
    case DTYPE_BINARY: return UNIT_BINARY_TC;
    case DTYPE_FP32: break;
    }
    return UNIT_FP32_FMA;
}

const char *unit_name(enum compute_unit u)
{
    static const char *const names[UNIT_COUNT] = {"fp32", "tf32-tc", "fp16-tc", "b1-tc"};
    return (int)u >= 0 && u < UNIT_COUNT ? names[u] : "?";
}

double unit_work_factor(enum dtype d)
{
    return d == DTYPE_3XTF32 ? 3.0 : 1.0;
}

/* Per SM per clock, dense, 2 FLOPs per multiply-add, fp32 accumulation:
 *   sm_75 (T4):            FP16 1024
 *   sm_80 (A100):          TF32 1024, FP16/BF16 2048, binary 32768 (4992 TOPS)
 *   sm_86/87/89 (A10, L4): TF32 512, FP16/BF16 1024
 *   sm_90 (H100, H200):    TF32 2048, FP16/BF16 4096; no datasheet rate for binary
 * GeForce cards (RTX 20/30/40) run fp16, bf16 and TF32 with fp32 accumulation at half
 * these rates: an RTX 4090's 165 fp16 TFLOP/s, not 330. */
int tensor_flops_per_clock(enum compute_unit u, int cc_major, int cc_minor, bool geforce)
{
    const int cc = cc_major * 10 + cc_minor;
    const int half = geforce ? 2 : 1;
    switch (u) {
    case UNIT_TF32_TC:
        return (cc == 80 ? 1024 : cc >= 86 && cc <= 89 ? 512 : cc == 90 ? 2048 : 0) / half;
    case UNIT_FP16_TC:
        return (cc == 75               ? 1024
                : cc == 80             ? 2048
                : cc >= 86 && cc <= 89 ? 1024
                : cc == 90             ? 4096
                                       : 0) /
               half;
    case UNIT_BINARY_TC: return cc == 80 ? 32768 : 0;
    default: return 0;
    }
}

double roofline_time_ms(const struct roofline *r)
{
    double memory_ms = r->bytes / (r->bandwidth_gbps * 1e9) * 1e3;
    double compute_ms = r->peak_gflops > 0 ? r->flops / (r->peak_gflops * 1e9) * 1e3 : 0.0;
    return memory_ms > compute_ms ? memory_ms : compute_ms;
}

bool roofline_memory_bound(const struct roofline *r)
{
    return r->peak_gflops <= 0 || r->bytes / r->bandwidth_gbps >= r->flops / r->peak_gflops;
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
