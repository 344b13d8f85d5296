#!/usr/bin/env bash
# expect_leak.sh SANITIZER COMMAND...
# Passes when compute-sanitizer's memcheck, with leak checking on, reports a leak in
# COMMAND: proof that a leaked allocation fails the sanitizer runs of gpu-check.
# Exit 77 (ctest: Skipped) when there is no GPU to run on.
set -u
sanitizer=$1
shift
if ! nvidia-smi -L >/dev/null 2>&1; then
    echo "skipped: no GPU (nvidia-smi lists none)"
    exit 77
fi
log=$("$sanitizer" --tool memcheck --leak-check full --error-exitcode 3 "$@" 2>&1)
rc=$?
if [ $rc -eq 3 ] && grep -q "Leaked" <<<"$log"; then
    echo "leak reported as expected"
    exit 0
fi
echo "FAIL: expected memcheck to report a leak (exit 3), got exit $rc"
echo "$log" | tail -n 20
exit 1
