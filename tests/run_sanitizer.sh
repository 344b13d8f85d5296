#!/usr/bin/env bash
# run_sanitizer.sh SANITIZER TOOL COMMAND...
# Runs COMMAND under compute-sanitizer's TOOL (memcheck, racecheck, synccheck) and
# passes when the sanitizer reports no error and the command passes. Exit 77 (ctest:
# Skipped) when there is no GPU to run on.
set -u
sanitizer=$1 tool=$2
shift 2
if ! nvidia-smi -L >/dev/null 2>&1; then
    echo "skipped: no GPU (nvidia-smi lists none)"
    exit 77
fi
exec "$sanitizer" --tool "$tool" --error-exitcode 3 "$@"
