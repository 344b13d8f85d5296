#define _POSIX_C_SOURCE 200809L

#include "output_capture.h"

#include <unistd.h>

void output_capture_begin(struct output_capture *c, FILE *stream)
{
    snprintf(c->path, sizeof c->path, "output_capture.%ld.%d.txt", (long)getpid(),
             fileno(stream));
    c->stream = stream;
    c->text[0] = '\0';
    fflush(stream);
    c->saved_fd = dup(fileno(stream));
    if (!freopen(c->path, "w", stream))
        perror(c->path);
}

const char *output_capture_end(struct output_capture *c)
{
    fflush(c->stream);
    dup2(c->saved_fd, fileno(c->stream));
    close(c->saved_fd);
    FILE *f = fopen(c->path, "r");
    if (f) {
        size_t n = fread(c->text, 1, sizeof c->text - 1, f);
        c->text[n] = '\0';
        fclose(f);
    }
    remove(c->path);
    return c->text;
}
