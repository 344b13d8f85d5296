/* Which of this library's code runs on the current GPU. */
#ifndef BUILD_CODE_H
#define BUILD_CODE_H

#ifdef __cplusplus
extern "C" {
#endif

/* The compute capability x 10 of the code the driver runs for this library's kernels on
 * the current device (their __CUDA_ARCH__ / 10): the GPU's own, or older PTX compiled at
 * load; 0 when the build holds nothing this GPU runs (gpu_info.code_cc). */
int build_code_cc(void);

#ifdef __cplusplus
}
#endif

#endif
