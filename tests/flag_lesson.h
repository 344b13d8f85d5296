/* A lesson of two variants that do nothing, for the flag parser's tests and fuzz
 * target: its default preset is big3, its image variant "first". */
#ifndef FLAG_LESSON_H
#define FLAG_LESSON_H

#include "lesson.h"

extern const struct lesson flag_lesson;

#endif
