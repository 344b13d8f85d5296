# Run at every build (cmake -P): writes build_info.c with the current commit and the
# CUDA architectures the build targets, and touches it only when they changed, so
# nothing rebuilds needlessly. A copy sent to a GPU machine may have no .git, or a
# stale one: there the commit comes from the .commit file that
# scripts/stamp-commit.sh wrote beside the sources before the copy (delete it to go
# back to git's answer).
if(EXISTS "${SOURCE_DIR}/.commit")
  # Written for this copy on purpose: it wins over a .git that may be stale.
  file(STRINGS "${SOURCE_DIR}/.commit" commit LIMIT_COUNT 1)
else()
  execute_process(COMMAND git rev-parse --short HEAD
    WORKING_DIRECTORY "${SOURCE_DIR}" OUTPUT_VARIABLE commit
    OUTPUT_STRIP_TRAILING_WHITESPACE ERROR_QUIET RESULT_VARIABLE failed)
  if(failed OR commit STREQUAL "")
    set(commit "none")
    message(WARNING "no git repository and no .commit file: the CSV's commit column says "
                    "'none' (run scripts/stamp-commit.sh in a git checkout before copying)")
  else()
    execute_process(COMMAND git status --porcelain --untracked-files=no
      WORKING_DIRECTORY "${SOURCE_DIR}" OUTPUT_VARIABLE changes ERROR_QUIET)
    if(NOT changes STREQUAL "")
      string(APPEND commit "-dirty")
    endif()
  endif()
endif()
set(text "#include \"build_info.h\"\nconst char build_commit[] = \"${commit}\";\n")
string(APPEND text "const char build_cuda_architectures[] = \"${ARCHITECTURES}\";\n")
if(EXISTS "${OUTPUT}")
  file(READ "${OUTPUT}" old)
endif()
if(NOT old STREQUAL text)
  file(WRITE "${OUTPUT}" "${text}")
endif()
