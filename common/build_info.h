/* Filled in at build time (cmake/build_info.cmake): which commit built this binary. */
#ifndef BUILD_INFO_H
#define BUILD_INFO_H

extern const char build_commit[]; /* short hash, "-dirty" when the tree had changes */

#endif
