/* CUDA error handling: every runtime call and every launch goes through CUDA_CHECK,
 * which names the failing expression, the file and the line, then exits with 1. */
#ifndef CUDA_CHECK_H
#define CUDA_CHECK_H

#include <cuda_runtime_api.h>
#include <stdio.h>
#include <stdlib.h>

#define CUDA_CHECK(expr)                                                              \
    do {                                                                              \
        cudaError_t cuda_check_err_ = (expr);                                         \
        if (cuda_check_err_ != cudaSuccess) {                                         \
            fprintf(stderr, "error: CUDA: %s failed at %s:%d: %s\n", #expr, __FILE__, \
                    __LINE__, cudaGetErrorString(cuda_check_err_));                   \
            exit(1);                                                                  \
        }                                                                             \
    } while (0)

/* After a kernel launch: reports bad launch configurations at the launch site. */
#define CUDA_CHECK_LAUNCH() CUDA_CHECK(cudaGetLastError())

#endif
