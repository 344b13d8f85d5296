/* Escaping for error lines. Escaped text is pure printable ASCII, which is why a
 * second pass is harmless: readers escape their messages, and the line printer may
 * escape the whole line again. */
#include "escape.h"

#include <stdio.h>
#include <string.h>

#define FIRST_PRINTABLE 0x20
#define DELETE 0x7f
/* Room for the longest escape, "\xHH", and its terminating NUL. */
#define ESCAPE_MAX 5
/* Longest formatted text escaped at once; error lines are far shorter. */
#define RAW_TEXT_MAX 4096
#define ERROR_LINE_MAX 4096

static void escape_byte(unsigned char c, char *seq)
{
    switch (c) {
    case '\n': strcpy(seq, "\\n"); break;
    case '\r': strcpy(seq, "\\r"); break;
    case '\t': strcpy(seq, "\\t"); break;
    default: snprintf(seq, ESCAPE_MAX, "\\x%02x", c); break;
    }
}

char *escape_text(char *out, size_t out_size, const char *text)
{
    size_t n = 0;
    for (const unsigned char *p = (const unsigned char *)text; *p; p++) {
        char seq[ESCAPE_MAX] = {(char)*p, '\0'};
        if (*p < FIRST_PRINTABLE || *p >= DELETE)
            escape_byte(*p, seq);
        size_t len = strlen(seq);
        if (n + len >= out_size)
            break;
        memcpy(out + n, seq, len);
        n += len;
    }
    out[n] = '\0';
    return out;
}

void escape_vformat(char *out, size_t out_size, const char *format, va_list args)
{
    char raw[RAW_TEXT_MAX];
    vsnprintf(raw, sizeof raw, format, args);
    escape_text(out, out_size, raw);
}

void vprint_error(const char *format, va_list args)
{
    char line[ERROR_LINE_MAX];
    escape_vformat(line, sizeof line, format, args);
    fprintf(stderr, "error: %s\n", line);
}

void print_error(const char *format, ...)
{
    va_list args;
    va_start(args, format);
    vprint_error(format, args);
    va_end(args);
}
