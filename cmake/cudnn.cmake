# cuDNN is optional: it is the baseline every table compares against. It may live
# in the CUDA toolkit's folders or in the distribution's multiarch folders.
find_path(CUDNN_INCLUDE_DIR cudnn.h
  HINTS ${CUDAToolkit_INCLUDE_DIRS} /usr/include/x86_64-linux-gnu /usr/include)
find_library(CUDNN_LIBRARY cudnn
  HINTS ${CUDAToolkit_LIBRARY_DIR} ${CUDAToolkit_LIBRARY_ROOT}
        /usr/lib/x86_64-linux-gnu /usr/lib64
  PATH_SUFFIXES lib lib64)

if(CUDNN_INCLUDE_DIR AND CUDNN_LIBRARY)
  set(CONV_HAVE_CUDNN ON)
  message(STATUS "cuDNN baseline: ON (${CUDNN_LIBRARY})")
else()
  set(CONV_HAVE_CUDNN OFF)
  message(STATUS "cuDNN baseline: OFF (cudnn.h or libcudnn not found); tables show no cuDNN row")
endif()
