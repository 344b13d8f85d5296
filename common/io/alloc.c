#include "alloc.h"

#include <stdlib.h>

#include <cuda_runtime_api.h>

#include "cuda_check.h"
#include "escape.h"

void exit_out_of_memory(const char *memory, const char *what, size_t bytes)
{
    print_error("out of %s memory: %s needs %.1f MB; a smaller problem needs less", memory,
                what, bytes / 1e6);
    exit(EXIT_OUT_OF_MEMORY);
}

void *gpu_alloc(size_t bytes, const char *what)
{
    void *p = NULL;
    cudaError_t err = cudaMalloc(&p, bytes);
    if (err == cudaErrorMemoryAllocation)
        exit_out_of_memory("GPU", what, bytes);
    CUDA_CHECK(err);
    return p;
}
