/* For tests of error lines: what a call printed to stderr. */
#ifndef STDERR_CAPTURE_H
#define STDERR_CAPTURE_H

#define STDERR_CAPTURE_SIZE 1024

struct stderr_capture {
    int saved_fd;
    char path[64];
    char text[STDERR_CAPTURE_SIZE];
};

/* From here on stderr goes to a scratch file... */
void stderr_capture_begin(struct stderr_capture *c);
/* ...until this puts it back and returns what was written (cut to fit c->text). */
const char *stderr_capture_end(struct stderr_capture *c);

#endif
