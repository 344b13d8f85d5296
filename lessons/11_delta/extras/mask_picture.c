/* Lesson 11's idea as a picture (docs/11_delta.md, "How much changes"): one frame of the
 * video, the pixels whose change passed the threshold, the input tiles that changed and
 * the output tiles a changed input tile reaches. Host only, no GPU.
 *
 * Everything comes from the lesson's own host code: the frames and the stem as the
 * executable draws them (delta_op_draw_from), the threshold step with carry-over
 * (delta_cpu_detect), the reach of a tile (delta_tile_reached, delta_cpu_reached_share)
 * and the share the executable reports in `params` (delta_op_recomputed_share). The
 * program checks that its picture and its numbers agree with those functions and exits
 * 1 when they do not.
 *
 *   mask_picture [--preset NAME] [--size HxW] [--cin C] [--ksize K] [--threshold T]
 *                [--tile N] [--pan P] [--frame F] --out PREFIX
 *
 * Writes PREFIX_grey.pgm (the grey frame the layer's input comes from, h x w),
 * PREFIX_active.pgm (255 where the pixel's change is applied this frame, h x w),
 * PREFIX_tiles.pgm (one pixel per tile: 255 an input tile that changed, 128 an output
 * tile recomputed only because a changed neighbour reaches it, 0 a tile left alone) and
 * PREFIX_info.txt (key=value: the problem, the frame and its three fractions), and prints
 * the three fractions of every frame 1..23. Without --frame the picture is of the frame
 * whose share of recomputed tiles is nearest the mean over frames 1..23, the mean that
 * the executable puts in `params` (recomputed=...): the typical frame of the rows.
 * Its files follow the lessons' rules (docs/file_safety.md, common/io/fileutil.h): all
 * four are checked before any work (a regular file or a new name, never a symlink, FIFO,
 * device or folder, never a vtest frame, no two of them one file), each is written to a
 * temporary file beside it, and only when all four are written and synced are they
 * renamed into place: a run that fails writes none of them (a failure of the renames
 * themselves, the folder changed during the run, can leave those renamed before it).
 * Exit codes: 0 done; 1 a check between the picture and the lesson's functions failed
 * (nothing is written), or a file could not be written at the end (a full disk: none
 * is written); 2 bad usage, a missing frame file or an output refused before any work.
 * It holds every frame's layer input, as the executable does: about 3 GB of host memory
 * on vtest-c64. */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "alloc.h"
#include "escape.h"
#include "fileutil.h"
#include "image.h"
#include "problem.h"
#include "video.h"

#define ERR_BYTES 4352
#define PATH_BYTES FILENAME_MAX
#define INFO_BYTES 1024

/* The files it writes: the --out prefix and these suffixes. */
enum picture_file { FILE_GREY, FILE_ACTIVE, FILE_TILES, FILE_INFO, FILE_COUNT };
static const char *const file_suffix[FILE_COUNT] = {"_grey.pgm", "_active.pgm", "_tiles.pgm",
                                                    "_info.txt"};

static void usage(FILE *to)
{
    fprintf(to,
            "usage: mask_picture [--preset vtest-c64|vtest-c128] [--size HxW] [--cin C] "
            "[--ksize K]\n"
            "                    [--threshold T] [--tile N] [--pan P] [--frame F] --out PREFIX\n"
            "  defaults: --preset vtest-c64, --threshold %g, --tile %d, --pan 0, --frame: the\n"
            "  frame whose share of recomputed tiles is nearest the mean over frames 1..%d\n",
            (double)DELTA_DEFAULT_THRESHOLD, DELTA_DEFAULT_TILE, VTEST_FRAMES - 1);
}

static int bad_usage(const char *what, const char *value)
{
    print_error("%s%s%s (mask_picture --help)", what, value ? ": " : "", value ? value : "");
    return 2;
}

static bool parse_int(const char *text, int *out)
{
    char *end;
    long v = strtol(text, &end, 10);
    if (end == text || *end || v < -1000000 || v > 1000000)
        return false;
    *out = (int)v;
    return true;
}

static bool parse_double(const char *text, double *out)
{
    char *end;
    *out = strtod(text, &end);
    return end != text && !*end;
}

/* The fractions of one frame, after its threshold step. */
struct fractions {
    double pixels, changed, reached;
};

static struct fractions fractions_of(const struct delta_cpu *st)
{
    const struct conv_shape *s = &st->s;
    const size_t pixels = (size_t)s->h * s->w, tiles = (size_t)st->tiles_y * st->tiles_x;
    size_t active = 0, changed = 0;
    for (size_t p = 0; p < pixels; p++)
        active += st->pixel_active[p];
    for (size_t t = 0; t < tiles; t++)
        changed += st->tile_changed[t];
    return (struct fractions){(double)active / pixels, (double)changed / tiles,
                              delta_cpu_reached_share(st)};
}

/* The grey frame f as the op crops and pans it (problem.h: the video shrunk 2x when
 * h x w fits in half of it, cropped about the centre, shifted left by f*pan). The stem
 * of it must be the executable's input of frame f, bit for bit: checked in main. */
static bool grey_frame(const struct conv_shape *s, int pan, int f, float *grey, char *err,
                       size_t err_size)
{
    const int shrink = s->h <= VTEST_HEIGHT / 2 && s->w <= VTEST_WIDTH / 2 ? 2 : 1;
    struct frame_seq seq;
    if (!vtest_read(VTEST_DIR, shrink, &seq, err, err_size))
        return false;
    const int y0 = (seq.h - s->h) / 2, x0 = (seq.w - s->w) / 2;
    const int shift = (int)((long)f * pan % seq.w);
    for (int y = 0; y < s->h; y++)
        for (int x = 0; x < s->w; x++)
            grey[(size_t)y * s->w + x] =
                frame_at(&seq, f)[(size_t)(y0 + y) * seq.w + (x0 + x + shift) % seq.w];
    frame_seq_free(&seq);
    return true;
}

/* The four paths of --out PREFIX, each checked as the lessons check an output, before
 * any work: a regular file or a new name in a writable folder (a symlink, FIFO, device
 * or folder there is refused: the rename would replace it, and a FIFO opened for
 * writing would wait for a reader), not one of the vtest frames it reads, and no two of
 * them one file (hard links). false after one error line. */
static bool outputs_usable(const char *prefix, char (*path)[PATH_BYTES])
{
    static char frame[VTEST_FRAMES][PATH_BYTES];
    struct file_arg frames[VTEST_FRAMES];
    for (int f = 0; f < VTEST_FRAMES; f++) {
        snprintf(frame[f], sizeof frame[f], "%s/vtest_%d.pgm", VTEST_DIR, VTEST_FIRST + f);
        frames[f] = (struct file_arg){"the frame", frame[f]};
    }
    char err[ERR_BYTES];
    for (int i = 0; i < FILE_COUNT; i++) {
        const int n = snprintf(path[i], PATH_BYTES, "%s%s", prefix, file_suffix[i]);
        if (n < 0 || n >= PATH_BYTES) {
            print_error("--out %s: the prefix is too long: %s%s would be over %d bytes", prefix,
                        prefix, file_suffix[i], PATH_BYTES - 1);
            return false;
        }
        if (!output_path_check((struct file_arg){"--out", path[i]}, frames, VTEST_FRAMES, err,
                               sizeof err)) {
            print_error("%s", err);
            return false;
        }
    }
    for (int i = 0; i < FILE_COUNT; i++)
        for (int j = i + 1; j < FILE_COUNT; j++)
            if (same_output(path[i], path[j])) {
                print_error("--out %s: is the same file as %s, written too: give each output a "
                            "file of its own", path[j], path[i]);
                return false;
            }
    return true;
}

/* What the files hold. */
struct picture {
    int h, w, tiles_y, tiles_x;
    const float *image[FILE_INFO]; /* grey, active, tiles */
    const char *info;
};

/* Writes every file to a temporary file beside it and syncs it, then renames them all
 * into place (common/io/fileutil.h): a write that fails (a full disk, a quota) leaves
 * none of them and no temporary file. The small files go first, so that a disk filling
 * up fails on a later, larger one (tests/test_mask_picture.sh). false after one error
 * line naming the file. */
static bool write_picture(char (*path)[PATH_BYTES], const struct picture *pic)
{
    static const int order[FILE_COUNT] = {FILE_INFO, FILE_TILES, FILE_ACTIVE, FILE_GREY};
    FILE *f[FILE_COUNT] = {NULL};
    char tmp[FILE_COUNT][PATH_BYTES];
    bool ok = true;
    for (int k = 0; ok && k < FILE_COUNT; k++) {
        const int i = order[k];
        f[i] = atomic_open(path[i], tmp[i], sizeof tmp[i]);
        if (!f[i]) {
            print_error("--out %s: cannot create: %s", path[i], strerror(errno));
            ok = false;
            break;
        }
        const bool tiles = i == FILE_TILES;
        const bool wrote = i == FILE_INFO
                               ? fputs(pic->info, f[i]) >= 0
                               : image_put(f[i], &(struct image){tiles ? pic->tiles_x : pic->w,
                                                                 tiles ? pic->tiles_y : pic->h, 1,
                                                                 (float *)pic->image[i]});
        if (!wrote || !atomic_sync(f[i])) {
            print_error("--out %s: cannot write: %s", path[i], strerror(errno));
            ok = false;
        }
    }
    for (int i = 0; i < FILE_COUNT; i++) {
        if (!f[i])
            continue;
        if (!ok) {
            atomic_abort(f[i], tmp[i]);
        } else if (!atomic_commit(f[i], tmp[i], path[i])) {
            print_error("--out %s: cannot write: %s", path[i], strerror(errno));
            ok = false;
        }
        f[i] = NULL;
    }
    if (!ok)
        return false;
    for (int i = 0; i < FILE_INFO; i++) {
        const bool tiles = i == FILE_TILES;
        printf("wrote %s (%dx%d)\n", path[i], tiles ? pic->tiles_x : pic->w,
               tiles ? pic->tiles_y : pic->h);
    }
    printf("wrote %s\n", path[FILE_INFO]);
    return true;
}

int main(int argc, char **argv)
{
    const struct conv_preset *preset = &delta_presets[0];
    int size_h = 0, size_w = 0, cin = 0, ksize = 0; /* 0: the preset's */
    double param[DELTA_PARAM_COUNT];
    for (int p = 0; p < DELTA_PARAM_COUNT; p++)
        param[p] = delta_params[p].fallback;
    int frame = 0; /* 0: chosen below */
    const char *out = NULL;
    for (int a = 1; a < argc; a++) {
        const char *flag = argv[a];
        if (!strcmp(flag, "--help") || !strcmp(flag, "-h")) {
            usage(stdout);
            return 0;
        }
        if (a + 1 >= argc)
            return bad_usage("a value is missing after", flag);
        const char *v = argv[++a];
        if (!strcmp(flag, "--preset")) {
            preset = NULL;
            for (int p = 0; p < DELTA_PRESET_COUNT; p++)
                if (!strcmp(v, delta_presets[p].name))
                    preset = &delta_presets[p];
            if (!preset)
                return bad_usage("--preset is vtest-c64 or vtest-c128, not", v);
        } else if (!strcmp(flag, "--size")) {
            int end = 0;
            if (sscanf(v, "%dx%d%n", &size_h, &size_w, &end) != 2 || v[end] || size_h < 1 ||
                size_w < 1)
                return bad_usage("--size is HxW", v);
        } else if (!strcmp(flag, "--cin")) {
            if (!parse_int(v, &cin) || cin < 1)
                return bad_usage("--cin is a channel count", v);
        } else if (!strcmp(flag, "--ksize")) {
            if (!parse_int(v, &ksize) || ksize < 1)
                return bad_usage("--ksize is an odd filter size", v);
        } else if (!strcmp(flag, "--threshold")) {
            if (!parse_double(v, &param[DELTA_THRESHOLD]))
                return bad_usage("--threshold is a number", v);
        } else if (!strcmp(flag, "--tile")) {
            if (!parse_double(v, &param[DELTA_TILE]) ||
                param[DELTA_TILE] != floor(param[DELTA_TILE]))
                return bad_usage("--tile is a whole number of pixels", v);
        } else if (!strcmp(flag, "--pan")) {
            int pan;
            if (!parse_int(v, &pan) || pan < 0 || pan > VTEST_WIDTH)
                return bad_usage("--pan is 0 to 768 pixels a frame", v);
            param[DELTA_PAN] = pan;
        } else if (!strcmp(flag, "--frame")) {
            if (!parse_int(v, &frame) || frame < 1 || frame >= VTEST_FRAMES)
                return bad_usage("--frame is a later frame, 1 to 23 (frame 0 is computed densely)",
                                 v);
        } else if (!strcmp(flag, "--out")) {
            out = v;
        } else {
            return bad_usage("unknown flag", flag);
        }
    }
    if (!out)
        return bad_usage("--out PREFIX is required", NULL);
    struct conv_shape s = preset->shape;
    const bool custom = size_h || cin || ksize;
    if (size_h) {
        s.h = size_h;
        s.w = size_w;
    }
    if (cin)
        s.cin = s.cout = cin;
    if (ksize)
        s.ksize = ksize;
    for (int p = 0; p < DELTA_PARAM_COUNT; p++)
        if (!(param[p] >= delta_params[p].lo && param[p] <= delta_params[p].hi)) {
            char range[128];
            snprintf(range, sizeof range, "--%s is %g to %g", delta_params[p].flag,
                     delta_params[p].lo, delta_params[p].hi);
            return bad_usage(range, NULL);
        }
    const char *why = delta_op_shape_problem(&s, param);
    if (why)
        return bad_usage(why, NULL);
    /* Every file it will write, before any work. */
    static char path[FILE_COUNT][PATH_BYTES];
    if (!outputs_usable(out, path))
        return 2;

    const float threshold = (float)param[DELTA_THRESHOLD];
    const int tile = (int)param[DELTA_TILE], pan = (int)param[DELTA_PAN];
    const int frames = delta_op_frames(&s);
    char err[ERR_BYTES];

    /* The executable's tensors, drawn by its own function (seed 1, the harness's default:
     * only the layer's weights depend on it, and the masks do not depend on them). */
    struct op_tensor t[DELTA_TENSOR_COUNT];
    delta_op_tensors(&s, 0, t);
    void *tensor[DELTA_TENSOR_COUNT];
    for (int i = 0; i < DELTA_TENSOR_COUNT; i++)
        tensor[i] = host_alloc(t[i].bytes, t[i].name);
    if (!delta_op_draw_from(VTEST_DIR, &s, param, 1, tensor, err, sizeof err)) {
        print_error("%s", err);
        return 2;
    }
    const float *x = tensor[DELTA_FRAMES];
    const size_t per_frame = input_count(&s);

    printf("problem %s%s: %dx%d, %d -> %d channels, %dx%d filter | threshold %g, tile %d, "
           "pan %d | %d frames of vtest (files vtest_%d..%d)\n",
           custom ? "custom, from " : "", preset->name, s.h, s.w, s.cin, s.cout, s.ksize, s.ksize,
           (double)threshold, tile, pan, frames, VTEST_FIRST, VTEST_FIRST + frames - 1);
    printf("the threshold step with carry-over (delta_cpu_detect) on frames 1..%d after frame 0\n",
           frames - 1);
    printf("%5s %6s %14s %18s %22s\n", "frame", "file", "active pixels", "input tiles changed",
           "output tiles recomputed");

    /* Pass 1: the three fractions of every later frame, the state carried as the
     * variants carry it (x_ref starts as frame 0, as after delta_cpu_first). */
    struct delta_cpu st;
    delta_cpu_init(&st, &s, tensor[DELTA_WEIGHTS], tensor[DELTA_BIAS], tile, DELTA_RECOMPUTE);
    memcpy(st.x_ref, x, per_frame * sizeof(float));
    struct fractions *fr = host_alloc((size_t)frames * sizeof *fr, "the fractions");
    double mean = 0;
    for (int f = 1; f < frames; f++) {
        delta_cpu_detect(&st, x + (size_t)f * per_frame, threshold);
        fr[f] = fractions_of(&st);
        mean += fr[f].reached / (frames - 1);
        printf("%5d %6d %13.2f%% %17.2f%% %21.2f%%\n", f, VTEST_FIRST + f, 100 * fr[f].pixels,
               100 * fr[f].changed, 100 * fr[f].reached);
    }
    delta_cpu_free(&st);
    char text[64];
    const double lesson_share = delta_op_recomputed_share(&s, param, tensor, text, sizeof text);
    printf("mean recomputed over frames 1..%d: %.4f | the executable's params: %s\n", frames - 1,
           mean, text);
    int status = 0;
    if (fabs(mean - lesson_share) > 1e-12) {
        fprintf(stderr, "FAIL: the mean %.6f is not delta_op_recomputed_share's %.6f\n", mean,
                lesson_share);
        status = 1;
    }

    bool chosen = false;
    if (frame == 0) {
        chosen = true;
        frame = 1;
        for (int f = 2; f < frames; f++) /* the later of two equally near */
            if (fabs(fr[f].reached - mean) <= fabs(fr[frame].reached - mean))
                frame = f;
    }

    /* Pass 2: the state again up to the chosen frame, and its picture. */
    delta_cpu_init(&st, &s, tensor[DELTA_WEIGHTS], tensor[DELTA_BIAS], tile, DELTA_RECOMPUTE);
    memcpy(st.x_ref, x, per_frame * sizeof(float));
    for (int f = 1; f <= frame; f++)
        delta_cpu_detect(&st, x + (size_t)f * per_frame, threshold);
    const struct fractions at = fractions_of(&st);
    if (memcmp(&at, &fr[frame], sizeof at) != 0) {
        fprintf(stderr, "FAIL: frame %d's fractions differ between two runs\n", frame);
        status = 1;
    }

    const size_t pixels = (size_t)s.h * s.w, tiles = (size_t)st.tiles_y * st.tiles_x;
    float *grey = host_alloc(pixels * sizeof *grey, "the grey frame");
    if (!grey_frame(&s, pan, frame, grey, err, sizeof err)) {
        print_error("%s", err);
        return 2;
    }
    /* The grey panel is the frame the layer saw: its stem is the drawn input. */
    struct stem stem;
    stem_init(&stem, s.cin, DELTA_STEM_SEED);
    float *x_check = host_alloc(per_frame * sizeof *x_check, "the stem of the grey frame");
    stem_apply(&stem, grey, s.h, s.w, x_check);
    if (memcmp(x_check, x + (size_t)frame * per_frame, per_frame * sizeof(float)) != 0) {
        fprintf(stderr, "FAIL: the grey frame is not the one the layer's input comes from\n");
        status = 1;
    }
    free(x_check);
    stem_free(&stem);

    float *active = host_alloc(pixels * sizeof *active, "the change mask");
    size_t active_count = 0;
    for (size_t p = 0; p < pixels; p++) {
        active[p] = st.pixel_active[p] ? 255.0f : 0.0f;
        active_count += st.pixel_active[p];
    }
    const int reach = delta_reach(s.ksize, tile);
    float *tile_map = host_alloc(tiles * sizeof *tile_map, "the tile map");
    size_t changed_count = 0, reached_count = 0;
    for (int ty = 0; ty < st.tiles_y; ty++)
        for (int tx = 0; tx < st.tiles_x; tx++) {
            const bool changed = st.tile_changed[ty * st.tiles_x + tx];
            const bool reached =
                delta_tile_reached(st.tile_changed, st.tiles_y, st.tiles_x, reach, ty, tx);
            if (changed && !reached) {
                fprintf(stderr, "FAIL: tile (%d, %d) changed but is not recomputed\n", ty, tx);
                status = 1;
            }
            tile_map[ty * st.tiles_x + tx] = changed ? 255.0f : reached ? 128.0f : 0.0f;
            changed_count += changed;
            reached_count += reached;
        }
    if ((double)active_count / pixels != at.pixels || (double)changed_count / tiles != at.changed ||
        (double)reached_count / tiles != at.reached) {
        fprintf(stderr, "FAIL: the picture's counts are not the frame's fractions\n");
        status = 1;
    }

    printf("frame %d (vtest_%d.pgm)%s: active pixels %zu of %zu (%.2f%%), input tiles changed "
           "%zu of %zu (%.2f%%), output tiles recomputed %zu of %zu (%.2f%%), reach %d tile%s\n",
           frame, VTEST_FIRST + frame,
           chosen ? ", the frame whose recomputed share is nearest the mean" : "", active_count,
           pixels, 100 * at.pixels, changed_count, tiles, 100 * at.changed, reached_count, tiles,
           100 * at.reached, reach, reach == 1 ? "" : "s");

    char info[INFO_BYTES];
    snprintf(info, sizeof info,
             "preset=%s\ncustom=%d\nh=%d\nw=%d\nc=%d\nksize=%d\nthreshold=%g\ntile=%d\npan=%d\n"
             "frame=%d\nfile=vtest_%d.pgm\nchosen=%d\nactive_pixels=%zu\npixels=%zu\n"
             "changed_tiles=%zu\nrecomputed_tiles=%zu\ntiles=%zu\nreach=%d\n"
             "mean_recomputed=%.4f\n",
             preset->name, custom, s.h, s.w, s.cin, s.ksize, (double)threshold, tile, pan, frame,
             VTEST_FIRST + frame, chosen, active_count, pixels, changed_count, reached_count,
             tiles, reach, mean);
    /* A picture that disagrees with the lesson's functions is not written, as a lesson
     * writes no result that failed its check. */
    if (status != 0)
        printf("FAIL: nothing written\n");
    else if (!write_picture(path, &(struct picture){.h = s.h,
                                                    .w = s.w,
                                                    .tiles_y = st.tiles_y,
                                                    .tiles_x = st.tiles_x,
                                                    .image = {grey, active, tile_map},
                                                    .info = info}))
        status = 1;

    delta_cpu_free(&st);
    free(grey);
    free(active);
    free(tile_map);
    free(fr);
    for (int i = 0; i < DELTA_TENSOR_COUNT; i++)
        free(tensor[i]);
    return status;
}
