/* The one rule for running out of memory: a problem too large for the host's or
 * the GPU's memory is bad input, like a size that overflows 32-bit indexing. The
 * allocation that fails prints one line naming the memory, what it was for and its
 * size, and the run exits with 2 (--help says so). Where the size is known up
 * front it is checked before any work: the GPU's free memory against the problem
 * (op_run.c), the host arrays of the problem as the run is set up. */
#ifndef ALLOC_H
#define ALLOC_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

#define EXIT_OUT_OF_MEMORY 2

/* Prints "error: out of <memory> memory: <what> needs <size>" and exits. */
_Noreturn void exit_out_of_memory(const char *memory, const char *what, size_t bytes);
/* malloc (at least one byte), or exit_out_of_memory("host", what, bytes). */
void *host_alloc(size_t bytes, const char *what);
/* cudaMalloc, or exit_out_of_memory("GPU", what, bytes) when the GPU has no room;
 * other CUDA errors are runtime errors (CUDA_CHECK, exit 1). */
void *gpu_alloc(size_t bytes, const char *what);

#ifdef __cplusplus
}
#endif

#endif
