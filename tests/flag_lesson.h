/* A lesson with the convolution's flags (conv_flags.h) and two variants that do
 * nothing, for the flag parser's tests and fuzz target: its default preset is big3,
 * its image variant "first". */
#ifndef FLAG_LESSON_H
#define FLAG_LESSON_H

#include "lesson.h"

const struct lesson *flag_lesson(void);

#endif
