#include "gpu_models.h"

#include <stdio.h>
#include <string.h>

#define KB 1024
#define MB (1024 * 1024)

/* From NVIDIA's datasheets and the CUDA programming guide's table of limits per
 * compute capability (shared memory: the opt-in maximum per block, and per SM). */
const struct gpu_model gpu_models[] = {
    {"t4", "Tesla T4", 75, 40, 1590, 64 * KB, 64 * KB, 4 * MB, 320, false},
    {"a100", "NVIDIA A100-SXM4-80GB", 80, 108, 1410, 163 * KB, 164 * KB, 40 * MB, 2039, false},
    {"rtx3090", "NVIDIA GeForce RTX 3090", 86, 82, 1695, 99 * KB, 100 * KB, 6 * MB, 936, true},
    {"rtx4090", "NVIDIA GeForce RTX 4090", 89, 128, 2520, 99 * KB, 100 * KB, 72 * MB, 1008, true},
    {"h100", "NVIDIA H100 80GB HBM3", 90, 132, 1980, 227 * KB, 228 * KB, 50 * MB, 3350, false},
    {"h200", "NVIDIA H200", 90, 132, 1980, 227 * KB, 228 * KB, 60 * MB, 4800, false},
};
const int gpu_model_count = (int)(sizeof gpu_models / sizeof gpu_models[0]);

const struct gpu_model *gpu_model_find(const char *key)
{
    for (int i = 0; i < gpu_model_count; i++)
        if (strcmp(gpu_models[i].key, key) == 0)
            return &gpu_models[i];
    return NULL;
}

const char *gpu_model_keys(void)
{
    static char keys[128];
    size_t used = 0;
    for (int i = 0; i < gpu_model_count && used < sizeof keys; i++)
        used += (size_t)snprintf(keys + used, sizeof keys - used, "%s%s", i ? ", " : "",
                                 gpu_models[i].key);
    return keys;
}
