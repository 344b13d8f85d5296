#!/usr/bin/env bash
# run_sanitizer.sh SANITIZER TOOL COMMAND...
# Runs COMMAND under compute-sanitizer's TOOL (memcheck, racecheck, synccheck) and
# passes when the sanitizer reports no error and the command passes; memcheck also
# checks for leaked device memory. Exit 77 (ctest: Skipped) when there is no GPU.
# SANITIZER_OPTIONS: more options for the sanitizer (a test's environment).
set -u
sanitizer=$1 tool=$2
shift 2
if ! nvidia-smi -L >/dev/null 2>&1; then
    echo "skipped: no GPU (nvidia-smi lists none)"
    exit 77
fi
read -r -a extra <<<"${SANITIZER_OPTIONS:-}"
[ "$tool" = memcheck ] && extra+=(--leak-check full)
exec "$sanitizer" --tool "$tool" "${extra[@]}" --error-exitcode 3 "$@"
