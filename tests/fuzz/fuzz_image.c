/* libFuzzer target for the PGM/PPM reader: any bytes must give an image or one
 * error line, never a crash, leak or undefined behaviour. An image that is read
 * must survive a write and a second read unchanged (its pixels are whole bytes). */
#include <string.h>

#include "fuzz_support.h"
#include "image.h"

#define ERR_SIZE 512

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char err[ERR_SIZE];
    struct image a, b;
    const char *in = fuzz_input_file(data, size, "image", ".pnm");
    if (!image_read(in, &a, err, sizeof err)) {
        fuzz_require(strchr(err, '\n') == NULL && a.data == NULL);
        return 0;
    }
    const char *out = fuzz_output_path("image", a.planes == 1 ? ".pgm" : ".ppm");
    fuzz_require(image_write(out, &a, err, sizeof err));
    fuzz_require(image_read(out, &b, err, sizeof err));
    size_t count = (size_t)a.width * (size_t)a.height * (size_t)a.planes;
    fuzz_require(a.width == b.width && a.height == b.height && a.planes == b.planes);
    fuzz_require(memcmp(a.data, b.data, count * sizeof(float)) == 0);
    image_free(&a);
    image_free(&b);
    return 0;
}
