/* For tests of what a call prints: its error lines on stderr, its table on stdout. */
#ifndef OUTPUT_CAPTURE_H
#define OUTPUT_CAPTURE_H

#include <stdio.h>

#define OUTPUT_CAPTURE_SIZE 4096

struct output_capture {
    FILE *stream;
    int saved_fd;
    char path[64];
    char text[OUTPUT_CAPTURE_SIZE];
};

/* From here on stream (stderr or stdout) goes to a scratch file... */
void output_capture_begin(struct output_capture *c, FILE *stream);
/* ...until this puts it back and returns what was written (cut to fit c->text). */
const char *output_capture_end(struct output_capture *c);

#endif
