/* Text from files and arguments in one-line errors: every byte that is not
 * printable ASCII is shown as an escape, so a newline cannot split the line and an
 * ESC cannot drive the terminal. */
#ifndef ESCAPE_H
#define ESCAPE_H

#include <stdarg.h>
#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Copies text into out with \n, \r, \t and \xHH for bytes below 0x20 and from 0x7f
 * up (UTF-8 too: a terminal would read its C1 range as controls). Printable text,
 * the backslash included, is copied as is, so escaping twice changes nothing.
 * Stops before an escape that would not fit. out_size must be at least 1; returns out. */
char *escape_text(char *out, size_t out_size, const char *text);
/* Formats like vsnprintf, then escapes the result into out. */
void escape_vformat(char *out, size_t out_size, const char *format, va_list args);
/* Prints "error: <the formatted text, escaped>" and one newline to stderr. */
void print_error(const char *format, ...);
void vprint_error(const char *format, va_list args);

#ifdef __cplusplus
}
#endif

#endif
