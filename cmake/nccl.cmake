# NCCL, for lesson 12 (several GPUs): looked up in the CUDA toolkit the build uses,
# then in the system's folders. Without it lesson 12 is not built.
set(CONV_HAVE_NCCL OFF)
find_path(NCCL_INCLUDE_DIR nccl.h HINTS ${CUDAToolkit_INCLUDE_DIRS} NO_DEFAULT_PATH)
find_path(NCCL_INCLUDE_DIR nccl.h HINTS /usr/include/x86_64-linux-gnu /usr/include)
find_library(NCCL_LIBRARY nccl HINTS ${CUDAToolkit_LIBRARY_DIR} ${CUDAToolkit_LIBRARY_ROOT}
  PATH_SUFFIXES lib lib64 NO_DEFAULT_PATH)
find_library(NCCL_LIBRARY nccl HINTS /usr/lib/x86_64-linux-gnu /usr/lib64)
if(NCCL_INCLUDE_DIR AND NCCL_LIBRARY)
  set(CONV_HAVE_NCCL ON)
  message(STATUS "NCCL: ON (${NCCL_LIBRARY}): lesson 12 is built")
  get_filename_component(nccl_dir "${NCCL_LIBRARY}" DIRECTORY)
  list(APPEND CMAKE_BUILD_RPATH ${nccl_dir})
else()
  message(STATUS "NCCL: OFF (nccl.h or libnccl not found): lesson 12 is not built")
endif()
