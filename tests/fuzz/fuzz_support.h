/* What the fuzz targets share: the parsers read paths, so each input is written to
 * a scratch file first; a property that does not hold aborts, which libFuzzer
 * reports as a crash with the input that caused it. */
#ifndef FUZZ_SUPPORT_H
#define FUZZ_SUPPORT_H

#include <stddef.h>
#include <stdint.h>

/* Writes data to this process's scratch file "fuzz_<stem>_in.<pid><ext>" under
 * $TMPDIR (default /tmp) and returns its path; aborts when it cannot, as a harness
 * that reads nothing would pass silently. */
const char *fuzz_input_file(const uint8_t *data, size_t size, const char *stem, const char *ext);
/* A second scratch path beside it, for a parser's output in round trips. */
const char *fuzz_output_path(const char *stem, const char *ext);
/* Aborts when ok is false. */
void fuzz_require(int ok);

#endif
