/* What the flag parser's fuzz targets share: the input as a command line, the parser
 * run on it with its output caught, and the contract of its answer. */
#ifndef FUZZ_COMMAND_LINE_H
#define FUZZ_COMMAND_LINE_H

#include <stddef.h>
#include <stdint.h>

#include "cli.h"
#include "lesson.h"

/* Splits data at its NUL bytes into the arguments after the lesson's name (a last one
 * without a NUL counts too), runs parse_options on them and requires: exactly one
 * "error: " line on stderr when the flags are refused, nothing on stderr otherwise,
 * and check(o) to hold when the run would go on. */
void fuzz_command_line(const struct lesson *lesson, const uint8_t *data, size_t size,
                       void (*check)(const struct options *o));

#endif
