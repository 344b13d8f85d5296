/* Lesson 11's frames and stem (video.h). */
#include "video.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "alloc.h"
#include "image.h"
#include "rng.h"

#define PATH_BYTES 4096
#define MESSAGE_BYTES (PATH_BYTES + 256) /* a path and what is wrong with it */
#define TWO_PI 6.283185307179586

static void *video_alloc(size_t bytes)
{
    return host_alloc(bytes, "the lesson 11 frames");
}

/* dst (h/f x w/f) = the mean of each f x f block of src (h x w): sums of at most four
 * integers up to 255, divided by a power of two, so exact in float32. */
static void shrink(const float *src, int h, int w, int f, float *dst)
{
    const int ho = h / f, wo = w / f;
    for (int y = 0; y < ho; y++)
        for (int x = 0; x < wo; x++) {
            float sum = 0;
            for (int i = 0; i < f; i++)
                for (int j = 0; j < f; j++)
                    sum += src[(size_t)(y * f + i) * w + x * f + j];
            dst[(size_t)y * wo + x] = sum / (float)(f * f);
        }
}

bool vtest_read(const char *dir, int downscale, struct frame_seq *seq, char *err, size_t err_size)
{
    if (downscale != 1 && downscale != 2) {
        snprintf(err, err_size, "the vtest frames can be shrunk by 1 or 2, not %d", downscale);
        return false;
    }
    seq->count = VTEST_FRAMES;
    seq->h = VTEST_HEIGHT / downscale;
    seq->w = VTEST_WIDTH / downscale;
    seq->grey = video_alloc((size_t)VTEST_FRAMES * seq->h * seq->w * sizeof(float));
    for (int f = 0; f < VTEST_FRAMES; f++) {
        char path[PATH_BYTES], why[MESSAGE_BYTES];
        snprintf(path, sizeof path, "%s/vtest_%d.pgm", dir, VTEST_FIRST + f);
        struct image img;
        bool ok = image_read(path, &img, why, sizeof why);
        if (ok && (img.planes != 1 || img.width != VTEST_WIDTH || img.height != VTEST_HEIGHT)) {
            snprintf(why, sizeof why, "%s: expected a %dx%d grey PGM, found %dx%d with %d planes",
                     path, VTEST_WIDTH, VTEST_HEIGHT, img.width, img.height, img.planes);
            image_free(&img);
            ok = false;
        }
        if (!ok) {
            snprintf(err, err_size,
                     "%s (CMake unpacks data/vtest.tar.xz into <build>/data/vtest when it "
                     "configures)",
                     why);
            frame_seq_free(seq);
            return false;
        }
        shrink(img.data, VTEST_HEIGHT, VTEST_WIDTH, downscale,
               seq->grey + (size_t)f * seq->h * seq->w);
        image_free(&img);
    }
    return true;
}

void frame_seq_free(struct frame_seq *seq)
{
    free(seq->grey);
    seq->grey = NULL;
}

void synthetic_sequence(int count, int h, int w, float drift, float noise, uint64_t seed,
                        struct frame_seq *seq)
{
    struct rng r = rng_seeded(seed);
    seq->count = count;
    seq->h = h;
    seq->w = w;
    seq->grey = video_alloc((size_t)count * h * w * sizeof(float));
    for (int f = 0; f < count; f++) {
        const double shift = (double)drift * f;
        for (int y = 0; y < h; y++)
            for (int x = 0; x < w; x++) {
                /* Two stripe patterns of different period and direction: every pixel
                 * changes a little on every frame, none by much. */
                const double blobs =
                    60 * sin(TWO_PI * (x - shift) / 37) * cos(TWO_PI * (y - 0.5 * shift) / 23);
                const double stripes = 30 * sin(TWO_PI * (x + y + shift) / 53);
                const double jitter = noise * (2 * rng_uniform(&r) - 1);
                seq->grey[((size_t)f * h + y) * w + x] = (float)(128 + blobs + stripes + jitter);
            }
    }
}

void stem_init(struct stem *st, int c, uint64_t seed)
{
    const int taps = STEM_KSIZE * STEM_KSIZE;
    struct rng r = rng_seeded(seed);
    st->c = c;
    st->weights = video_alloc((size_t)c * taps * sizeof(float));
    st->bias = video_alloc((size_t)c * sizeof(float));
    fill_uniform(st->weights, (size_t)c * taps, -1, 1, &r);
    fill_uniform(st->bias, (size_t)c, -STEM_BIAS, STEM_BIAS, &r);
    for (int ch = 0; ch < c; ch++) {
        float *w = st->weights + (size_t)ch * taps;
        float l1 = 0;
        for (int t = 0; t < taps; t++)
            l1 += fabsf(w[t]);
        for (int t = 0; t < taps; t++)
            w[t] /= l1;
    }
}

void stem_free(struct stem *st)
{
    free(st->weights);
    free(st->bias);
}

void stem_apply(const struct stem *st, const float *grey, int h, int w, float *x)
{
    const int r = STEM_KSIZE / 2;
#pragma omp parallel for schedule(static)
    for (int y = 0; y < h; y++)
        for (int xx = 0; xx < w; xx++) {
            float *out = x + ((size_t)y * w + xx) * st->c;
            for (int ch = 0; ch < st->c; ch++) {
                const float *wt = st->weights + (size_t)ch * STEM_KSIZE * STEM_KSIZE;
                float acc = st->bias[ch];
                for (int i = 0; i < STEM_KSIZE; i++) {
                    const int yy = y + i - r;
                    if (yy < 0 || yy >= h)
                        continue;
                    for (int j = 0; j < STEM_KSIZE; j++) {
                        const int xj = xx + j - r;
                        if (xj >= 0 && xj < w)
                            acc += wt[i * STEM_KSIZE + j] * (grey[(size_t)yy * w + xj] / GREY_MAX);
                    }
                }
                out[ch] = acc > 0 ? acc : 0;
            }
        }
}
