/* For tests of atomic writes: the temporary files a write may leave behind. */
#ifndef TEMP_FILES_H
#define TEMP_FILES_H

/* How many files named "<path>.tmp.*" exist beside path (in its folder). */
int temp_files_left(const char *path);

#endif
