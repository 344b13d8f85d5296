#include "int_flags.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "escape.h"

static struct int_flag *find(struct int_flag *flags, int count, const char *name)
{
    for (int i = 0; i < count; i++)
        if (strcmp(flags[i].name, name) == 0)
            return &flags[i];
    return NULL;
}

static bool read_number(const struct int_flag *f, const char *text, long long *value)
{
    char *end = NULL;
    errno = 0;
    const long long v = strtoll(text, &end, 10);
    if (errno || end == text || *end || v < f->lo || v > f->hi) {
        print_error("%s %s: expected a whole number in %lld..%lld (see --help)", f->name, text,
                    f->lo, f->hi);
        return false;
    }
    *value = v;
    return true;
}

int int_flags_parse(int argc, char **argv, const char *usage, struct int_flag *flags, int count,
                    bool *done)
{
    *done = false;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--help") == 0) {
            printf("%s\n", usage);
            for (int k = 0; k < count; k++)
                printf("  %-12s %s, %lld..%lld (default %lld)\n", flags[k].name, flags[k].help,
                       flags[k].lo, flags[k].hi, flags[k].value);
            *done = true;
            return 0;
        }
        struct int_flag *f = find(flags, count, argv[i]);
        if (!f) {
            print_error("%s: unknown flag (see --help)", argv[i]);
            return EXIT_USAGE;
        }
        if (i + 1 == argc) {
            print_error("%s: needs a value (see --help)", argv[i]);
            return EXIT_USAGE;
        }
        if (!read_number(f, argv[++i], &f->value))
            return EXIT_USAGE;
    }
    return 0;
}
