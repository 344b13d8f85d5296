/* What every function of libconv_torch.so's C ABI returns (conv_torch.h and its siblings,
 * one header per op): CONV_TORCH_OK, or a status with one line in the caller's err
 * buffer that says what was wrong. None exits the process on a bad argument or a GPU
 * that cannot run the problem. */
#ifndef CONV_TORCH_STATUS_H
#define CONV_TORCH_STATUS_H

enum conv_torch_status {
    CONV_TORCH_OK = 0,
    CONV_TORCH_BAD_ARGUMENT = 1, /* a size, code or pointer this ABI does not take */
    CONV_TORCH_UNSUPPORTED = 2,  /* a valid problem that no kernel of the course runs here */
    CONV_TORCH_CUDA_ERROR = 3,   /* the CUDA runtime failed (no driver, a sticky error, ...) */
};

#endif
