/* Files the file tests write and look for: a text file to read back, and the temporary
 * files an atomic write may leave behind. Also the check of an error line that the
 * file readers' tests share. */
#ifndef TEMP_FILES_H
#define TEMP_FILES_H

/* How many files named "<path>.tmp.*" exist beside path (in its folder). */
int temp_files_left(const char *path);
/* Writes text to path (a failed open is a failed check). */
void write_text(const char *path, const char *text);

/* err must start with prefix (the file or flag it is about), say what, and be one line;
 * a mismatch shows the line. */
void check_error_line(const char *err, const char *prefix, const char *what);

#endif
