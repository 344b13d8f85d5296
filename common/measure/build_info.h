/* Filled in at build time (cmake/build_info.cmake): which commit built this binary,
 * and for which GPUs. */
#ifndef BUILD_INFO_H
#define BUILD_INFO_H

#ifdef __cplusplus
extern "C" {
#endif

extern const char build_commit[]; /* short hash, "-dirty" when the tree had changes */
/* CMAKE_CUDA_ARCHITECTURES as configured, e.g. "90" or "75;86-real" */
extern const char build_cuda_architectures[];

#ifdef __cplusplus
}
#endif

#endif
