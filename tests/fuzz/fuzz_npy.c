/* libFuzzer target for the .npy reader: any bytes must give an array or one error
 * line, never a crash, leak or undefined behaviour. An array that is read must
 * survive a write and a second read unchanged. */
#include <string.h>

#include "fuzz_support.h"
#include "npy.h"

#define ERR_SIZE 512

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char err[ERR_SIZE];
    struct npy_array a, b;
    const char *in = fuzz_input_file(data, size, "npy", ".npy");
    if (!npy_read(in, &a, err, sizeof err)) {
        fuzz_require(strchr(err, '\n') == NULL && a.data == NULL);
        return 0;
    }
    const char *out = fuzz_output_path("npy", ".npy");
    fuzz_require(npy_write(out, a.data, a.ndim, a.shape, err, sizeof err));
    fuzz_require(npy_read(out, &b, err, sizeof err));
    fuzz_require(a.ndim == b.ndim && a.count == b.count);
    fuzz_require(memcmp(a.shape, b.shape, sizeof a.shape[0] * (size_t)a.ndim) == 0);
    fuzz_require(a.count == 0 || memcmp(a.data, b.data, a.count * sizeof(float)) == 0);
    npy_free(&a);
    npy_free(&b);
    return 0;
}
