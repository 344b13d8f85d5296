/* Files the file tests write and look for: a text file to read back, and the temporary
 * files an atomic write may leave behind. */
#ifndef TEMP_FILES_H
#define TEMP_FILES_H

/* How many files named "<path>.tmp.*" exist beside path (in its folder). */
int temp_files_left(const char *path);
/* Writes text to path (a failed open is a failed check). */
void write_text(const char *path, const char *text);

#endif
