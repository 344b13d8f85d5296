/* The registers of every m16n8 mma.sync in the course: d (4 accumulators) += a (4
 * registers of A) x b (2 of B), d read and written in place. acc is the accumulators'
 * asm constraint, "f" for fp32 (lesson 08) or "r" for s32 (lesson 09's bit products);
 * only the instruction's name differs otherwise. The caller guards the architecture.
 * For the kernels (.cu) only. */
#ifndef MMA_M16N8_CUH
#define MMA_M16N8_CUH

#define MMA_M16N8(instruction, acc, d, a, b)                                                       \
    asm volatile(instruction " {%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, {%0, %1, %2, %3};\n"  \
                 : "+" acc(d[0]), "+" acc(d[1]), "+" acc(d[2]), "+" acc(d[3])                      \
                 : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]))

#endif
