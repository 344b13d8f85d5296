/* CUDA error handling: every runtime call and every launch goes through CUDA_CHECK,
 * which names the failing expression, the file and the line, then exits with 1. */
#ifndef CUDA_CHECK_H
#define CUDA_CHECK_H

#include <cuda_runtime_api.h>
#include <stdio.h>
#include <stdlib.h>

/* A library call checked: a result other than `ok` prints "error: <library>: <text> failed
 * at <file>:<line>: <the library's words for the result>" and exits with 1. `text` is the
 * call as written, stringified by the macro the caller used. CUDA_CHECK is made of it, and
 * so are the checks of NCCL's and cuDNN's calls. */
#define CHECK_CALL(library, result_type, ok, words, expr, text)                                    \
    do {                                                                                           \
        result_type check_call_result_ = (expr);                                                   \
        if (check_call_result_ != (ok)) {                                                          \
            fprintf(stderr, "error: " library ": %s failed at %s:%d: %s\n", text, __FILE__,        \
                    __LINE__, words(check_call_result_));                                          \
            exit(1);                                                                               \
        }                                                                                          \
    } while (0)

#define CUDA_CHECK(expr)                                                                           \
    CHECK_CALL("CUDA", cudaError_t, cudaSuccess, cudaGetErrorString, expr, #expr)

/* After a kernel launch: reports bad launch configurations at the launch site. */
#define CUDA_CHECK_LAUNCH() CUDA_CHECK(cudaGetLastError())

#endif
