/* common/io/alloc.c's host side for the lessons' fuzz targets, which link no CUDA
 * runtime: the host allocations they reach (lesson 10's and 11's problem.c) abort
 * instead of exiting, so libFuzzer reports a problem too large for the fuzzer's memory
 * limit as a crash with its input. */
#include "alloc.h"

#include <stdio.h>
#include <stdlib.h>

void exit_out_of_memory(const char *memory, const char *what, size_t bytes)
{
    fprintf(stderr, "out of %s memory: %s needs %zu bytes\n", memory, what, bytes);
    abort();
}

void *host_alloc(size_t bytes, const char *what)
{
    void *p = malloc(bytes ? bytes : 1);
    if (!p)
        exit_out_of_memory("host", what, bytes);
    return p;
}

void *gpu_alloc(size_t bytes, const char *what)
{
    exit_out_of_memory("GPU", what, bytes);
}
