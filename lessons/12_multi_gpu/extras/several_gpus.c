#include "several_gpus.h"

#include <stdio.h>

#include "escape.h"
#include "gpu_info.h"
#include "int_flags.h"

int several_gpus(const char *program, int asked, int *gpus)
{
    const char *why = NULL;
    const int count = gpu_count(&why);
    if (count < 2) {
        fprintf(stderr, "skipped: %s needs 2 GPUs and found %d%s%s%s\n", program, count,
                count ? "" : " (", count ? "" : why, count ? "" : ")");
        return EXIT_SKIP;
    }
    *gpus = asked ? asked : count;
    if (*gpus > count || *gpus < 2) {
        print_error("--gpus %d: this machine has %d CUDA devices, and %s needs 2", *gpus, count,
                    program);
        return EXIT_USAGE;
    }
    return 0;
}
