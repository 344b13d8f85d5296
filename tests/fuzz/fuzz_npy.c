/* libFuzzer target for the .npy reader: any bytes must give an array or one error
 * line, never a crash, leak or undefined behaviour. An array that is read must
 * survive a write and a second read unchanged. */
#include <string.h>

#include "fuzz_support.h"
#include "npy.h"
#include "npy_round_trip.h"

#define ERR_SIZE 512

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char err[ERR_SIZE];
    struct npy_array a;
    const char *in = fuzz_input_file(data, size, "npy", ".npy");
    if (!npy_read(in, &a, err, sizeof err)) {
        fuzz_require(strchr(err, '\n') == NULL && a.data == NULL);
        return 0;
    }
    fuzz_npy_round_trip(&a, "npy");
    npy_free(&a);
    return 0;
}
