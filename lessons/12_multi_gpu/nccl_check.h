/* NCCL's calls checked as CUDA_CHECK checks CUDA's: the expression, the file, the line and
 * NCCL's reason on one line, then exit 1. */
#ifndef NCCL_CHECK_H
#define NCCL_CHECK_H

#include <stdio.h>
#include <stdlib.h>

#include <nccl.h>

#define NCCL_CHECK(expr)                                                              \
    do {                                                                              \
        ncclResult_t nccl_check_err_ = (expr);                                        \
        if (nccl_check_err_ != ncclSuccess) {                                         \
            fprintf(stderr, "error: NCCL: %s failed at %s:%d: %s\n", #expr, __FILE__, \
                    __LINE__, ncclGetErrorString(nccl_check_err_));                   \
            exit(1);                                                                  \
        }                                                                             \
    } while (0)

#endif
