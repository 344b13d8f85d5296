/* The batched convolution of lessons 01-09 as an op (op.h), built from a lesson's
 * conv_variant list. Its layouts are the formats the variants and their cuDNN rows
 * store tensors in (dtype, layout, what the output holds); each buffer set holds the
 * input, the weights, the output, the bias and the binary scale, the last three and
 * the weights shared by every set. The inputs are rounded to each dtype before the
 * float64 gold; its library rows are cuDNN's at the precision and layout of the
 * variants they are compared with. */
#ifndef CONV_OP_H
#define CONV_OP_H

#include "cli.h"
#include "lesson.h"
#include "op.h"

/* The tensors of a format, in the order op_args.tensor holds them. */
enum conv_tensor { CONV_INPUT, CONV_WEIGHTS, CONV_OUTPUT, CONV_BIAS, CONV_SCALE, CONV_TENSORS };

/* The problem the flags ask for (files, an image, a named filter or the seed; o->shape
 * gets its shape) and the op over the lesson's variants; NULL after one error line
 * (bad input: exit 2). */
const struct op *conv_op_create(const struct lesson *lesson, struct options *o);
void conv_op_free(const struct op *op);

/* The convolution's library row in a dtype and layout (op_baseline.id is the layout). */
struct op_baseline conv_baseline(enum dtype d, enum layout l);

/* cuDNN's row for a convolution of shape s, on inputs drawn from the run's seed, timed
 * and checked as the convolution's own rows are: the library row of an op whose work is
 * a convolution (lesson 11's layer on one frame). */
void conv_cudnn_row(const struct conv_shape *s, const struct op_baseline *b,
                    const struct op_bench *bench, struct result_row *row);

#endif
