# cuDNN is optional: it is the baseline every table compares against. It is looked
# up first in the CUDA toolkit the build uses (a cuDNN built for another CUDA
# version elsewhere on the machine may not load beside it), then in the
# distribution's folders. -DCONV_CUDNN=OFF builds without it.
set(CONV_HAVE_CUDNN OFF)
if(CONV_CUDNN)
  find_path(CUDNN_INCLUDE_DIR cudnn.h
    HINTS ${CUDAToolkit_INCLUDE_DIRS} NO_DEFAULT_PATH)
  find_path(CUDNN_INCLUDE_DIR cudnn.h HINTS /usr/include/x86_64-linux-gnu /usr/include)
  find_library(CUDNN_LIBRARY cudnn
    HINTS ${CUDAToolkit_LIBRARY_DIR} ${CUDAToolkit_LIBRARY_ROOT}
    PATH_SUFFIXES lib lib64 NO_DEFAULT_PATH)
  find_library(CUDNN_LIBRARY cudnn HINTS /usr/lib/x86_64-linux-gnu /usr/lib64)
  if(CUDNN_INCLUDE_DIR AND CUDNN_LIBRARY)
    set(CONV_HAVE_CUDNN ON)
  endif()
endif()

if(CONV_HAVE_CUDNN)
  message(STATUS "cuDNN baseline: ON (${CUDNN_LIBRARY})")
  get_filename_component(cudnn_dir "${CUDNN_LIBRARY}" DIRECTORY)
  list(APPEND CMAKE_BUILD_RPATH ${cudnn_dir})
elseif(CONV_CUDNN)
  message(STATUS "cuDNN baseline: OFF (cudnn.h or libcudnn not found); tables show no cuDNN row")
else()
  message(STATUS "cuDNN baseline: OFF (CONV_CUDNN=OFF); tables show no cuDNN row")
endif()
