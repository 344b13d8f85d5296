/* common/io/alloc.c for the lessons' fuzz targets, which link no CUDA runtime (they
 * link host_alloc.c as it is): the host allocations they reach (lesson 10's and 11's
 * problem.c) abort instead of exiting, so libFuzzer reports a problem too large for the
 * fuzzer's memory limit as a crash with its input. */
#include "alloc.h"

#include <stdio.h>
#include <stdlib.h>

void exit_out_of_memory(const char *memory, const char *what, size_t bytes)
{
    fprintf(stderr, "out of %s memory: %s needs %zu bytes\n", memory, what, bytes);
    abort();
}

void *gpu_alloc(size_t bytes, const char *what)
{
    exit_out_of_memory("GPU", what, bytes);
}
