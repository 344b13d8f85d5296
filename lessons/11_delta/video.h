/* Lesson 11's input: a video, turned into what a conv layer deep in a network sees.
 *
 * The frames are the 24 grey PGMs of data/vtest.tar.xz (frames 200-223 of OpenCV's
 * vtest.avi, 768x576, unpacked into the build folder by CMake). A fixed, untimed stem
 * turns each grey frame into C channels, NHWC float32:
 *
 *   x[y][x][c] = relu( stem_bias[c] + sum_{i,j} stem_w[c][i][j] * grey[y+i-1][x+j-1] / 255 )
 *
 * a 3x3 "same" convolution 1 -> C with zero padding. Each channel's weights are random
 * from a fixed seed and scaled so that sum_{i,j} |stem_w[c][i][j]| = 1; with ReLU that
 * makes the stem 1-Lipschitz: no layer input changes by more than the largest grey
 * change under its 3x3 window, divided by 255. A threshold t on the layer's input is
 * then at least a change of 255*t grey levels. */
#ifndef VIDEO_H
#define VIDEO_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define VTEST_WIDTH 768
#define VTEST_HEIGHT 576
#define VTEST_FIRST 200 /* file number of the first frame, vtest_200.pgm */
#define VTEST_FRAMES 24
#define STEM_KSIZE 3
#define GREY_MAX 255.0f

/* count grey frames of h x w floats in [0, 255], frame after frame. */
struct frame_seq {
    int count, h, w;
    float *grey;
};

static inline const float *frame_at(const struct frame_seq *s, int f)
{
    return s->grey + (size_t)f * s->h * s->w;
}

/* Reads vtest_200.pgm ... vtest_223.pgm from dir and shrinks each by `downscale` (1 or
 * 2; 2 averages each 2x2 block, exactly in float32). false with a message naming the
 * file when one is missing, unreadable or not a 768x576 grey PGM. */
bool vtest_read(const char *dir, int downscale, struct frame_seq *seq, char *err, size_t err_size);
void frame_seq_free(struct frame_seq *seq);

/* A test sequence with a known pattern of change: a grey pattern of stripes and blobs
 * drifting by `drift` pixels per frame, plus uniform noise of +-noise grey levels. */
void synthetic_sequence(int count, int h, int w, float drift, float noise, uint64_t seed,
                        struct frame_seq *seq);

struct stem {
    int c;
    float *weights; /* c x 3 x 3 */
    float *bias;    /* c */
};

/* The fixed stem for c channels: weights from `seed`, each channel's |w| summing to 1,
 * biases uniform in [-STEM_BIAS, STEM_BIAS). */
#define STEM_BIAS 0.25f
void stem_init(struct stem *st, int c, uint64_t seed);
void stem_free(struct stem *st);
/* x (h x w x c, NHWC) = relu(stem(grey)), float32, on the host. */
void stem_apply(const struct stem *st, const float *grey, int h, int w, float *x);

#endif
