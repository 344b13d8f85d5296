/* Binary PGM/PPM reading and writing: round trips, rounding and clamping, header
 * comments, and a clear error naming the file for each bad header. Files are
 * created in the working directory under names carrying the process id.
 * DATA_DIR (set by CMake) is the folder of the sample images. */
#define _POSIX_C_SOURCE 200809L

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include "bad_files.h"
#include "image.h"
#include "temp_files.h"
#include "unit.h"

#define NAME_SIZE 256
#define HANG_SECONDS 5 /* alarm() turns a blocking open into a failed test */
#define ERR_SIZE 512
#define SAMPLE_SIZE 512 /* both sample images are 512x512 */

static void temp_name(char *name, const char *stem, const char *ext)
{
    snprintf(name, NAME_SIZE, "test_image_%s.%ld%s", stem, (long)getpid(), ext);
}

static bool exists(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0;
}

static void write_bytes(const char *path, const void *bytes, size_t n)
{
    FILE *f = fopen(path, "wb");
    CHECK(f != NULL);
    if (f) {
        fwrite(bytes, 1, n, f);
        fclose(f);
    }
}

/* Reads the whole file into buf; returns its length. */
static size_t read_bytes(const char *path, unsigned char *buf, size_t size)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return 0;
    size_t n = fread(buf, 1, size, f);
    fclose(f);
    return n;
}

/* A header followed by n pixel bytes 0, 1, 2, ... */
static void write_image(const char *path, const char *header, size_t pixel_bytes)
{
    size_t len = strlen(header);
    unsigned char *buf = malloc(len + pixel_bytes + 1);
    memcpy(buf, header, len);
    for (size_t i = 0; i < pixel_bytes; i++)
        buf[len + i] = (unsigned char)i;
    write_bytes(path, buf, len + pixel_bytes);
    free(buf);
}

/* image_read must fail with one error line that names the file and says `what`, and
 * leave no data behind. */
static void check_rejected(const char *path, const char *what)
{
    struct image img;
    char err[ERR_SIZE] = "";
    const bool ok = image_read(path, &img, err, sizeof err);
    check_refused(ok, err, path, what, img.data);
}

/* Writes img to name and reads it back: the same size, holding expected (img's own
 * pixels where they are whole numbers from 0 to 255). */
static void check_round_trip(const char *name, const struct image *img, const float *expected)
{
    char err[ERR_SIZE];
    CHECK(image_write(name, img, err, sizeof err));
    struct image back;
    CHECK(image_read(name, &back, err, sizeof err));
    CHECK(back.width == img->width && back.height == img->height && back.planes == img->planes);
    size_t count = (size_t)img->width * img->height * img->planes;
    CHECK(back.data && memcmp(back.data, expected, count * sizeof(float)) == 0);
    image_free(&back);
    CHECK(back.data == NULL);
}

/* A 3x2 PGM made by hand, the header then six pixel bytes, must read as those pixels. */
static void check_reads_3x2(const char *name, const char *header, const unsigned char pixels[6])
{
    char err[ERR_SIZE];
    unsigned char file[128];
    size_t len = strlen(header);
    CHECK(len + 6 <= sizeof file);
    memcpy(file, header, len);
    memcpy(file + len, pixels, 6);
    write_bytes(name, file, len + 6);
    struct image img;
    CHECK(image_read(name, &img, err, sizeof err));
    CHECK(img.width == 3 && img.height == 2 && img.planes == 1);
    for (int i = 0; i < 6 && img.data; i++)
        CHECK(img.data[i] == pixels[i]);
    image_free(&img);
}

static void pgm_round_trip(void)
{
    char name[NAME_SIZE];
    temp_name(name, "grey", ".pgm");
    float pixels[6] = {0, 10, 32, 128, 254, 255};
    struct image img = {3, 2, 1, pixels};
    check_round_trip(name, &img, pixels);
    unsigned char bytes[64];
    const char *header = "P5\n3 2\n255\n";
    CHECK(read_bytes(name, bytes, sizeof bytes) == strlen(header) + 6);
    CHECK(memcmp(bytes, header, strlen(header)) == 0);
    remove(name);
}

static void ppm_round_trip(void)
{
    char name[NAME_SIZE];
    temp_name(name, "rgb", ".ppm");
    enum { W = 4, H = 3, PLANE = W * H };
    float pixels[3 * PLANE];
    for (int p = 0; p < 3; p++)
        for (int i = 0; i < PLANE; i++)
            pixels[p * PLANE + i] = (float)(p * 80 + i);
    struct image img = {W, H, 3, pixels};
    check_round_trip(name, &img, pixels);
    /* On disk the planes are interleaved: R, G, B of pixel 0, then pixel 1... */
    unsigned char bytes[128];
    const char *header = "P6\n4 3\n255\n";
    size_t hl = strlen(header);
    CHECK(read_bytes(name, bytes, sizeof bytes) == hl + 3 * PLANE);
    CHECK(memcmp(bytes, header, hl) == 0);
    CHECK(bytes[hl] == 0 && bytes[hl + 1] == 80 && bytes[hl + 2] == 160 && bytes[hl + 3] == 1);
    remove(name);
}

static void rounds_and_clamps(void)
{
    char name[NAME_SIZE];
    temp_name(name, "clamp", ".pgm");
    float pixels[8] = {-5.0f, 0.49f, 0.5f, 1.5f, 127.4f, 254.6f, 300.0f, NAN};
    const float expected[8] = {0, 0, 1, 2, 127, 255, 255, 0};
    struct image img = {8, 1, 1, pixels};
    check_round_trip(name, &img, expected);
    remove(name);
}

static void header_comments(void)
{
    char name[NAME_SIZE];
    temp_name(name, "comments", ".pgm");
    /* Comments and mixed whitespace between fields; the first pixel bytes are a
     * newline (10) and a space (32), which must be read as pixels. */
    const unsigned char pixels[6] = {10, 32, 35, 9, 200, 0};
    check_reads_3x2(name, "P5 # made by hand\n# a whole comment line\n3\t2 #width height\n255\n",
                    pixels);
    remove(name);
}

/* Bad headers the reader must refuse, grouped by the case that writes them (the group
 * names the file): the header, how many pixel bytes 0, 1, 2, ... follow it, and a part
 * of the error line. */
static const struct bad_image {
    const char *group, *header;
    size_t pixel_bytes;
    const char *what;
} bad_images[] = {
    {"magic", "P7\n2 2\n255\n", 4, "bad magic"},
    {"magic", "GIF89a", 16, "bad magic"},
    {"magic", "", 0, "bad magic"},
    {"ascii", "P2\n2 2\n255\n1 2 3 4\n", 0, "ASCII PGM/PPM not supported"},
    {"ascii", "P3\n1 1\n255\n1 2 3\n", 0, "ASCII PGM/PPM not supported"},
    {"maxval", "P5\n2 2\n65535\n", 8, "maxval is 65535"},
    {"maxval", "P5\n2 2\n0\n", 4, "maxval is 0"},
    {"maxval", "P5\n2 2\n255x\n", 4, "maxval is not a number"},
    {"short", "P6\n4 4\n255\n", 4 * 4 * 3 - 1,
     "pixel data is 47 bytes, the header needs 48 (truncated)"},
    {"short", "P6\n4 4\n255\n", 0, "pixel data is 0 bytes"},
    {"short", "P6\n4 4\n255", 0, "no pixel data"},
    {"short", "P6\n4 4", 0, "header ends before the maxval"},
    {"short", "P6\n4 4\n255\n", 4 * 4 * 3 + 5, "5 bytes after the pixel data"},
    {"dims", "P5\n0 4\n255\n", 4, "width and height must be positive"},
    {"dims", "P5\n4 0\n255\n", 4, "width and height must be positive"},
    {"dims", "P5\n-3 4\n255\n", 12, "width must be a positive number"},
    {"dims", "P5\nabc 4\n255\n", 12, "width is not a number"},
    {"dims", "P5\n4 4x\n255\n", 16, "height is not a number"},
    {"dims", "P5\n99999999999 1\n255\n", 16, "width is too large"},
    {"dims", "P5\n65536 65536\n255\n", 16, "more than 2147483647 pixels"},
};

static void check_bad_image(const char *name, size_t row)
{
    write_image(name, bad_images[row].header, bad_images[row].pixel_bytes);
    check_rejected(name, bad_images[row].what);
}

/* Writes the group's bad files in turn to one name (extension ext); each is rejected. */
static void check_bad_images(const char *group, const char *ext)
{
    char name[NAME_SIZE];
    temp_name(name, group, ext);
    CHECK_BAD_FILES(name, bad_images, group, check_bad_image);
}

static void rejects_bad_magic(void)
{
    check_bad_images("magic", ".pgm");
}

static void rejects_ascii(void)
{
    check_bad_images("ascii", ".pgm");
}

static void rejects_maxval_65535(void)
{
    check_bad_images("maxval", ".pgm");
}

static void rejects_truncated_pixels(void)
{
    check_bad_images("short", ".ppm");
}

static void rejects_bad_dimensions(void)
{
    check_bad_images("dims", ".pgm");
}

static void rejects_missing_file(void)
{
    check_rejected("no-such-file-for-test_image.pgm", "cannot open");
}

static void rejects_extension_mismatch(void)
{
    char err[ERR_SIZE] = "";
    float pixels[3] = {1, 2, 3};
    struct image grey = {1, 1, 1, pixels}, rgb = {1, 1, 3, pixels};
    char name[NAME_SIZE];
    temp_name(name, "grey", ".ppm");
    CHECK(!image_write(name, &grey, err, sizeof err));
    CHECK(strstr(err, name) == err && strstr(err, ".pgm") != NULL);
    CHECK(!exists(name));
    temp_name(name, "rgb", ".pgm");
    CHECK(!image_write(name, &rgb, err, sizeof err));
    CHECK(strstr(err, name) == err && strstr(err, ".ppm") != NULL);
    CHECK(!exists(name));
    temp_name(name, "png", ".png");
    CHECK(!image_write(name, &grey, err, sizeof err));
    CHECK(!exists(name));
    /* The extension is matched without regard to case. */
    temp_name(name, "upper", ".PGM");
    CHECK(image_write(name, &grey, err, sizeof err));
    CHECK(exists(name));
    remove(name);
}

static void reads_sample_images(void)
{
    char err[ERR_SIZE] = "";
    struct image img;
    CHECK(image_read(DATA_DIR "/camera.pgm", &img, err, sizeof err));
    CHECK(img.width == SAMPLE_SIZE && img.height == SAMPLE_SIZE && img.planes == 1);
    image_free(&img);
    CHECK(image_read(DATA_DIR "/astronaut.ppm", &img, err, sizeof err));
    CHECK(img.width == SAMPLE_SIZE && img.height == SAMPLE_SIZE && img.planes == 3);
    /* A colour photograph: the red and blue planes differ. */
    size_t plane = (size_t)SAMPLE_SIZE * SAMPLE_SIZE;
    CHECK(img.data && memcmp(img.data, img.data + 2 * plane, plane * sizeof(float)) != 0);
    image_free(&img);
}

/* A control byte in the path is shown escaped: the error stays one line. */
static void errors_are_escaped(void)
{
    char name[NAME_SIZE], err[ERR_SIZE] = "";
    snprintf(name, sizeof name, "test_image_esc\n\x1b[2J.%ld.pgm", (long)getpid());
    write_image(name, "GIF89a", 16);
    struct image img;
    CHECK(!image_read(name, &img, err, sizeof err));
    CHECK(strstr(err, "test_image_esc\\n\\x1b[2J.") == err);
    CHECK(strstr(err, "bad magic") != NULL);
    CHECK(strchr(err, '\n') == NULL && strchr(err, '\x1b') == NULL);
    remove(name);
}

/* A folder given as an image is "a directory", not "bad magic"; a FIFO is refused
 * at once (alarm: a hang fails the test). */
static void rejects_folder_and_fifo(void)
{
    char name[NAME_SIZE];
    temp_name(name, "folder", ".pgm");
    CHECK(mkdir(name, 0700) == 0);
    check_rejected(name, "is a directory, not a regular file");
    rmdir(name);
    temp_name(name, "fifo", ".pgm");
    CHECK(mkfifo(name, 0600) == 0);
    alarm(HANG_SECONDS);
    check_rejected(name, "is a FIFO (named pipe), not a regular file");
    alarm(0);
    remove(name);
}

/* A comment right after maxval's digits is legal Netpbm: the end of its line is
 * the one whitespace byte before the pixels, which may themselves be '#' or '\n'. */
static void comment_right_after_maxval(void)
{
    static const char *const headers[] = {"P5\n3 2\n255#c\n", "P5 3 2 255# made by hand\r",
                                          "P5\n3 2\n255#\n"};
    const unsigned char pixels[6] = {'#', '\n', 32, 9, 200, 0};
    char name[NAME_SIZE];
    temp_name(name, "maxval_comment", ".pgm");
    for (size_t h = 0; h < sizeof headers / sizeof headers[0]; h++)
        check_reads_3x2(name, headers[h], pixels);
    write_image(name, "P5\n3 2\n255#c", 0);
    check_rejected(name, "no pixel data");
    remove(name);
}

static const struct unit_case cases[] = {
    {"pgm_round_trip", pgm_round_trip},
    {"ppm_round_trip", ppm_round_trip},
    {"rounds_and_clamps", rounds_and_clamps},
    {"header_comments", header_comments},
    {"rejects_bad_magic", rejects_bad_magic},
    {"rejects_ascii", rejects_ascii},
    {"rejects_maxval_65535", rejects_maxval_65535},
    {"rejects_truncated_pixels", rejects_truncated_pixels},
    {"rejects_bad_dimensions", rejects_bad_dimensions},
    {"rejects_missing_file", rejects_missing_file},
    {"rejects_extension_mismatch", rejects_extension_mismatch},
    {"reads_sample_images", reads_sample_images},
    {"errors_are_escaped", errors_are_escaped},
    {"rejects_folder_and_fifo", rejects_folder_and_fifo},
    {"comment_right_after_maxval", comment_right_after_maxval},
};

UNIT_MAIN(cases)
