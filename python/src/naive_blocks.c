#include "naive_blocks.h"

#include "lessons/02_gpu_naive/kernels.h"

void run_naive_block16x16(const struct conv_args *a)
{
    launch_conv2d_naive(a, 16, 16);
}

void run_naive_block32x8(const struct conv_args *a)
{
    launch_conv2d_naive(a, 32, 8);
}
