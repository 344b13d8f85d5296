/* A minimal unit-test runner: each test executable holds a table of named cases;
 * ctest runs one case per test (`test_npy round_trip`), so a failure names its case. */
#ifndef UNIT_H
#define UNIT_H

#include <stdio.h>
#include <string.h>

extern int unit_failures;

#define CHECK(cond)                                                                  \
    do {                                                                             \
        if (!(cond)) {                                                               \
            fprintf(stderr, "%s:%d: check failed: %s\n", __FILE__, __LINE__, #cond); \
            unit_failures++;                                                         \
        }                                                                            \
    } while (0)

struct unit_case {
    const char *name;
    void (*run)(void);
};

/* Runs the case named by argv[1] (every case when none is named); exit code 0 when
 * all its checks passed. */
int unit_main(const struct unit_case *cases, int count, int argc, char **argv);

#define UNIT_MAIN(cases)                                                   \
    int main(int argc, char **argv)                                        \
    {                                                                      \
        return unit_main(cases, (int)(sizeof cases / sizeof cases[0]), argc, argv); \
    }

#endif
