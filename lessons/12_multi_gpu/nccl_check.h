/* NCCL's calls checked as CUDA_CHECK checks CUDA's: the expression, the file, the line and
 * NCCL's reason on one line, then exit 1. */
#ifndef NCCL_CHECK_H
#define NCCL_CHECK_H

#include <nccl.h>

#include "cuda_check.h"

#define NCCL_CHECK(expr)                                                                           \
    CHECK_CALL("NCCL", ncclResult_t, ncclSuccess, ncclGetErrorString, expr, #expr)

#endif
