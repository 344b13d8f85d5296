#include "unit.h"

int unit_failures = 0;

int unit_main(const struct unit_case *cases, int count, int argc, char **argv)
{
    int ran = 0;
    for (int i = 0; i < count; i++) {
        if (argc > 1 && strcmp(argv[1], cases[i].name) != 0)
            continue;
        int before = unit_failures;
        cases[i].run();
        printf("%s: %s\n", cases[i].name, unit_failures == before ? "ok" : "FAILED");
        ran++;
    }
    if (ran == 0) {
        fprintf(stderr, "error: no test case named '%s'\n", argc > 1 ? argv[1] : "");
        return 2;
    }
    return unit_failures == 0 ? 0 : 1;
}
