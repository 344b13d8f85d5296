#include "host_info.h"

#include <stdio.h>
#include <string.h>

void cpu_description(int threads, char *out, size_t size)
{
    char model[256] = "unknown CPU";
    FILE *f = fopen("/proc/cpuinfo", "r");
    if (f) {
        char line[512];
        while (fgets(line, sizeof line, f)) {
            char *colon = strchr(line, ':');
            if (strncmp(line, "model name", 10) == 0 && colon) {
                snprintf(model, sizeof model, "%s", colon + 2);
                model[strcspn(model, "\n")] = '\0';
                break;
            }
        }
        fclose(f);
    }
    snprintf(out, size, "%s (%d thread%s)", model, threads, threads == 1 ? "" : "s");
}
