# add_lesson(<folder> [CPU] [MULTICHANNEL] SOURCES <files>... [CASES "<name>=<flags>"...]
#            [SANITIZE_ARGS <flags>...] [EMULATE_ARGS <flags>...]
#            [EMULATE_SKIPS "<model>:<variant>=<reason>"...])
# add_lesson(<folder> OP SOURCES <files>... CASES ... [CPU_VARIANTS <names>...]
#            [SANITIZE_ARGS <flags>...] [BAD_CASES "<name>=<flags>"...] [EMULATE_...])
#
# Builds a lesson's executable (bin/<folder>) and registers its checks with ctest:
#   <folder>.<case>        every variant on an awkward size, checked against gold
#                          (label gpu, or cpu for a CPU lesson; exit 77 = Skipped)
#   <folder>.bad.<case>    bad flags rejected with exit 2 and one error line (label cpu:
#                          validation happens before any GPU work); a case written
#                          "<flags> => <text>" also needs text in that line
#   <folder>.memcheck ...  compute-sanitizer memcheck, racecheck and synccheck at a
#                          small size (label sanitize), for GPU lessons; with
#                          SANITIZE_ARGS also <folder>.memcheck.own ... on those flags
#   <folder>.emulate.<model>  the lesson under a T4's, an A100's and an RTX 4090's
#                          limits (CONV_EMULATE_GPU; label gpu) on EMULATE_ARGS (else the
#                          sanitizers' problem): exactly the EMULATE_SKIPS of that model
#                          are skipped with their reason ("*" for the whole run), every
#                          other variant passes
# MULTICHANNEL lessons also get batched multi-channel cases; CASES adds a lesson's own
# awkward sizes, run like the others. An OP lesson (its problem is not the convolution,
# common/ops/op.h) gets only its own CASES, each run with every variant (label gpu) and
# with each of its CPU_VARIANTS alone (<folder>.<case>.<variant>, label cpu), the bad
# flag cases plus its BAD_CASES, and the sanitizers on SANITIZE_ARGS.

set(CONV_LESSON_CASES
  "one_pixel=--size 1x1 --ksize 3"
  "one_row=--size 1x37 --ksize 5"
  "one_column=--size 41x1 --ksize 3"
  "primes=--size 97x101 --ksize 7"
  "not_tile_multiple=--batch 3 --size 33x65 --ksize 5"
  "filter_larger_than_image=--size 5x6 --ksize 15"
  "largest_filter=--size 40x50 --ksize 31"
  "filter_1x1=--size 17x19 --ksize 1"
  "wide_odd=--size 7x1031 --ksize 9"
  "aligned_width=--batch 2 --size 37x64 --ksize 7"
  "aligned_tiny=--size 3x4 --ksize 15")
set(CONV_MULTICHANNEL_CASES
  "multichannel=--batch 3 --cin 5 --cout 7 --size 13x17 --ksize 3"
  "multichannel_5x5=--batch 1 --cin 3 --cout 67 --size 23x29 --ksize 5"
  "multichannel_1x1=--batch 2 --cin 33 --cout 9 --size 8x9 --ksize 1"
  "multichannel_tiny=--batch 3 --cin 2 --cout 3 --size 2x3 --ksize 3")
set(CONV_BAD_INPUT_CASES
  "even_ksize=--ksize 4"
  "zero_ksize=--ksize 0"
  "negative_ksize=--ksize -3"
  "huge_ksize=--ksize 33"
  "zero_size=--size 0x5"
  "negative_size=--size -5x5"
  "half_size=--size 5x"
  "text_size=--size axb"
  "overflow_size=--size 65536x65536"
  "overflow_channels=--size 4096x4096 --cin 200"
  "unknown_preset=--preset nope"
  "unknown_variant=--variant nope"
  "preset_and_size=--preset big3 --size 5x5"
  "zero_reps=--reps 0"
  "text_seed=--seed x12"
  "unknown_flag=--frobnicate"
  "unwritable_csv=--size 5x5 --csv /nonexistent-dir/out.csv")
# The convolution's data modes time nothing, so they write no CSV row.
set(CONV_DATA_BAD_INPUT_CASES
  "csv_with_image=--image ${CMAKE_SOURCE_DIR}/data/camera.pgm --out bad-csv-image.pgm --csv bad-csv-image.csv => --csv with --image"
  "csv_with_input=--input ${CMAKE_SOURCE_DIR}/tests/data/input_5x7.npy --weights ${CMAKE_SOURCE_DIR}/tests/data/weights_3x3.npy --csv bad-csv-input.csv => --csv with --input")
set(CONV_SANITIZE_ARGS --size 37x41 --ksize 5 --batch 2 --reps 1 --warmup 0 --no-cudnn)
set(CONV_SANITIZE_MULTICHANNEL_ARGS
  --batch 2 --cin 3 --cout 5 --size 19x23 --ksize 3 --reps 1 --warmup 0 --no-cudnn)

find_program(COMPUTE_SANITIZER compute-sanitizer
  HINTS ${CUDAToolkit_BIN_DIR} ${CUDAToolkit_BIN_DIR}/../compute-sanitizer)

function(_conv_add_cases target label prefix)
  foreach(entry IN LISTS ARGN)
    string(FIND "${entry}" "=" eq)
    string(SUBSTRING "${entry}" 0 ${eq} case)
    math(EXPR rest "${eq} + 1")
    string(SUBSTRING "${entry}" ${rest} -1 args)
    separate_arguments(args UNIX_COMMAND "${args}")
    if(label STREQUAL "bad")
      # "<flags> => <text>": the error line must also hold text.
      set(expect "")
      list(FIND args "=>" arrow)
      if(arrow GREATER -1)
        list(SUBLIST args ${arrow} -1 text)
        list(SUBLIST args 0 ${arrow} args)
        list(POP_FRONT text)
        list(JOIN text " " text)
        set(expect --error "${text}")
      endif()
      add_test(NAME ${target}.bad.${case}
        COMMAND ${CMAKE_SOURCE_DIR}/tests/expect_exit.sh ${expect} 2 - $<TARGET_FILE:${target}>
                ${args})
      set_tests_properties(${target}.bad.${case} PROPERTIES LABELS cpu)
    else()
      add_test(NAME ${target}.${case}
        COMMAND ${target} ${args} --reps 2 --warmup 1 --no-cudnn)
      set_tests_properties(${target}.${case} PROPERTIES LABELS ${label} SKIP_RETURN_CODE 77)
    endif()
  endforeach()
endfunction()

# The three tools on one problem; suffix tells a lesson's own problem from the shared one.
function(_conv_add_sanitizers target suffix)
  if(COMPUTE_SANITIZER)
    foreach(tool memcheck racecheck synccheck)
      add_test(NAME ${target}.${tool}${suffix}
        COMMAND ${CMAKE_SOURCE_DIR}/tests/run_sanitizer.sh ${COMPUTE_SANITIZER} ${tool}
                $<TARGET_FILE:${target}> ${ARGN})
      set_tests_properties(${target}.${tool}${suffix} PROPERTIES LABELS sanitize
                           SKIP_RETURN_CODE 77)
    endforeach()
  endif()
endfunction()

# The GPU models the emulation tests impose, and the lesson's expected skips on each.
set(CONV_EMULATED_MODELS t4 a100 rtx4090)
function(_conv_add_emulation target skips)
  foreach(model IN LISTS CONV_EMULATED_MODELS)
    set(expected "")
    foreach(entry IN LISTS skips)
      if(entry MATCHES "^${model}:(.*)$")
        list(APPEND expected "${CMAKE_MATCH_1}")
      endif()
    endforeach()
    string(REPLACE ";" "\\;" expected "${expected}")
    add_test(NAME ${target}.emulate.${model}
      COMMAND ${CMAKE_SOURCE_DIR}/tests/expect_emulated.sh ${model} "${expected}"
              $<TARGET_FILE:${target}> ${ARGN})
    set_tests_properties(${target}.emulate.${model} PROPERTIES LABELS gpu SKIP_RETURN_CODE 77)
  endforeach()
endfunction()

function(_conv_add_op_lesson target)
  cmake_parse_arguments(L "" ""
    "CASES;CPU_VARIANTS;SANITIZE_ARGS;BAD_CASES;EMULATE_ARGS;EMULATE_SKIPS" ${ARGN})
  _conv_add_cases(${target} gpu "" ${L_CASES})
  foreach(variant IN LISTS L_CPU_VARIANTS)
    foreach(entry IN LISTS L_CASES)
      string(REGEX REPLACE "=.*" "" case "${entry}")
      string(REGEX REPLACE "^[^=]*=" "" args "${entry}")
      separate_arguments(args UNIX_COMMAND "${args}")
      add_test(NAME ${target}.${case}.${variant}
        COMMAND ${target} ${args} --variant ${variant} --reps 1 --warmup 0)
      set_tests_properties(${target}.${case}.${variant} PROPERTIES LABELS cpu)
    endforeach()
  endforeach()
  _conv_add_cases(${target} bad "" ${CONV_BAD_INPUT_CASES} ${L_BAD_CASES})
  _conv_add_sanitizers(${target} "" ${L_SANITIZE_ARGS})
  if(L_EMULATE_ARGS)
    _conv_add_emulation(${target} "${L_EMULATE_SKIPS}" ${L_EMULATE_ARGS})
  else()
    _conv_add_emulation(${target} "${L_EMULATE_SKIPS}" ${L_SANITIZE_ARGS})
  endif()
endfunction()

function(add_lesson target)
  cmake_parse_arguments(L "CPU;MULTICHANNEL;OP" ""
    "SOURCES;CASES;CPU_VARIANTS;SANITIZE_ARGS;BAD_CASES;EMULATE_ARGS;EMULATE_SKIPS" ${ARGN})
  # The kernels (.cu) compile apart, seeing only common/device/, the convolution's
  # kernel ABI (conv_kernel) and the lesson's own folder: nothing of the harness.
  set(host_sources ${L_SOURCES})
  set(kernel_sources ${L_SOURCES})
  list(FILTER host_sources EXCLUDE REGEX "\\.cu$")
  list(FILTER kernel_sources INCLUDE REGEX "\\.cu$")
  add_executable(${target} ${host_sources})
  if(kernel_sources)
    add_library(${target}_kernels OBJECT ${kernel_sources})
    target_link_libraries(${target}_kernels PRIVATE conv_kernel)
    target_link_libraries(${target} PRIVATE ${target}_kernels)
  endif()
  target_link_libraries(${target} PRIVATE conv_harness conv_op)
  set_target_properties(${target} PROPERTIES RUNTIME_OUTPUT_DIRECTORY ${CMAKE_BINARY_DIR}/bin)
  if(L_OP)
    _conv_add_op_lesson(${target} CASES ${L_CASES} CPU_VARIANTS ${L_CPU_VARIANTS}
      SANITIZE_ARGS ${L_SANITIZE_ARGS} BAD_CASES ${L_BAD_CASES}
      EMULATE_ARGS ${L_EMULATE_ARGS} EMULATE_SKIPS ${L_EMULATE_SKIPS})
    return()
  endif()

  if(L_CPU)
    set(label cpu)
  else()
    set(label gpu)
  endif()
  _conv_add_cases(${target} ${label} "" ${CONV_LESSON_CASES})
  if(L_MULTICHANNEL)
    _conv_add_cases(${target} ${label} "" ${CONV_MULTICHANNEL_CASES})
  endif()
  _conv_add_cases(${target} ${label} "" ${L_CASES})
  _conv_add_cases(${target} bad "" ${CONV_BAD_INPUT_CASES} ${CONV_DATA_BAD_INPUT_CASES})

  add_test(NAME ${target}.image
    COMMAND ${CMAKE_SOURCE_DIR}/tests/expect_exit.sh 0 ${CMAKE_BINARY_DIR}/${target}-camera.pgm
            $<TARGET_FILE:${target}> --image ${CMAKE_SOURCE_DIR}/data/camera.pgm
            --filter gaussian --ksize 5 --out ${CMAKE_BINARY_DIR}/${target}-camera.pgm)
  set_tests_properties(${target}.image PROPERTIES LABELS ${label} SKIP_RETURN_CODE 77)

  if(NOT L_CPU)
    if(L_MULTICHANNEL)
      set(small ${CONV_SANITIZE_MULTICHANNEL_ARGS})
    else()
      set(small ${CONV_SANITIZE_ARGS})
    endif()
    _conv_add_sanitizers(${target} "" ${small})
    if(L_EMULATE_ARGS)
      set(small ${L_EMULATE_ARGS})
    endif()
    _conv_add_emulation(${target} "${L_EMULATE_SKIPS}" ${small})
    if(L_SANITIZE_ARGS) # a path of the lesson's that the shared problem does not reach
      _conv_add_sanitizers(${target} ".own" ${L_SANITIZE_ARGS})
    endif()
  endif()
endfunction()

# add_wgmma_objects(<target> <library> <files>...)
# A lesson's wgmma steps: wgmma exists only in the architecture-specific sm_90a code,
# which runs on 9.0 GPUs alone. Where the build targets 90 these files alone are compiled
# for 90a (with CONV_WGMMA_BUILT defined), the rest of the lesson keeping the portable
# code; elsewhere their variants report that they were not built.
function(add_wgmma_objects target library)
  add_library(${library} OBJECT ${ARGN})
  target_link_libraries(${library} PRIVATE conv_kernel)
  if(CMAKE_CUDA_ARCHITECTURES MATCHES "(^|;)90a?(-real|-virtual)?(;|$)")
    set_target_properties(${library} PROPERTIES CUDA_ARCHITECTURES 90a-real)
    target_compile_definitions(${library} PRIVATE CONV_WGMMA_BUILT)
  endif()
  target_link_libraries(${target} PRIVATE ${library})
endfunction()
