/* libFuzzer target for filter text files: any bytes must give a square, odd-sized
 * filter of finite taps or one error line, never a crash, leak or undefined
 * behaviour. */
#include <math.h>
#include <string.h>

#include "conv_problem.h"
#include "filters.h"
#include "fuzz_support.h"

#define ERR_SIZE 512
#define ANY_KSIZE 3 /* a file sets the size itself */

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char err[ERR_SIZE];
    float taps[MAX_KSIZE * MAX_KSIZE];
    int ksize = ANY_KSIZE;
    const char *in = fuzz_input_file(data, size, "filter", ".txt");
    if (!filter_from_spec(in, &ksize, taps, err, sizeof err)) {
        fuzz_require(strchr(err, '\n') == NULL && ksize == ANY_KSIZE);
        return 0;
    }
    fuzz_require(ksize >= 1 && ksize <= MAX_KSIZE && ksize % 2 == 1);
    for (int i = 0; i < ksize * ksize; i++)
        fuzz_require(isfinite(taps[i]));
    return 0;
}
