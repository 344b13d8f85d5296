/* ldmatrix.x4 (sm_75 and newer): a warp loads four 8x8 matrices of 16-bit elements,
 * 8 rows of 16 bytes each, from shared memory straight into the fragment registers of
 * the tensor-core mma instructions. For the kernels (.cu) only. */
#ifndef LDMATRIX_CUH
#define LDMATRIX_CUH

#include <stdint.h>

/* Lane l gives the address of row l % 8 of matrix l / 8 and receives one 32-bit
 * register of each matrix: row l / 4, bytes 4 (l % 4) to 4 (l % 4) + 3. That is
 * elements 2(l % 4) and 2(l % 4) + 1 of 16-bit data, element l % 4 of 32-bit data
 * (the tf32 fragment), or 32 bits of packed b1 data (lesson 09). */
static __device__ __forceinline__ void ldmatrix_x4(uint32_t r[4], const void *smem_row)
{
#if __CUDA_ARCH__ >= 750
    asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0, %1, %2, %3}, [%4];\n"
                 : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
                 : "r"((unsigned)__cvta_generic_to_shared(smem_row)));
#else
    __trap();
#endif
}

#endif
