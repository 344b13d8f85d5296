/* The CPU's name for the device column of CPU rows. */
#ifndef HOST_INFO_H
#define HOST_INFO_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

/* "<model name> (<threads> threads)", from /proc/cpuinfo where it exists. */
void cpu_description(int threads, char *out, size_t size);

#ifdef __cplusplus
}
#endif

#endif
