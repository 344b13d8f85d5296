#define _POSIX_C_SOURCE 200809L

#include "stderr_capture.h"

#include <stdio.h>
#include <unistd.h>

void stderr_capture_begin(struct stderr_capture *c)
{
    snprintf(c->path, sizeof c->path, "stderr_capture.%ld.txt", (long)getpid());
    c->text[0] = '\0';
    fflush(stderr);
    c->saved_fd = dup(fileno(stderr));
    if (!freopen(c->path, "w", stderr))
        perror(c->path);
}

const char *stderr_capture_end(struct stderr_capture *c)
{
    fflush(stderr);
    dup2(c->saved_fd, fileno(stderr));
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
