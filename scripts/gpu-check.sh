#!/usr/bin/env bash
# gpu-check.sh: everything a GPU machine should run, in one call.
#   1. build for this GPU's own architecture
#   2. the full ctest suite: CPU and GPU tests, compute-sanitizer memcheck, racecheck
#      and synccheck on every GPU lesson at small sizes
#   3. the full benchmark sweep (scripts/bench.sh --full) and its plots
#   4. cuBLAS's SGEMM rate (tools/sgemm_rate.c), which lesson 07 is measured against
# Logs, the CSV and the plots (as one archive) go to $OUT when it is set (the device
# tool's folder), else to build/gpu-check. Commit the CSV as results/<gpu>/bench.csv.
set -u
root=$(cd "$(dirname "$0")/.." && pwd)
out=${OUT:-$root/build/gpu-check}
work=$root/build/gpu-check-work
mkdir -p "$out" "$work"
summary=$out/summary.txt
: >"$summary"

if ! nvidia-smi -L >/dev/null 2>&1; then
    echo "gpu-check: no GPU here (nvidia-smi lists none); run it on a GPU machine" | tee -a "$summary"
    exit 77
fi
arch=$(nvidia-smi --query-gpu=compute_cap --format=csv,noheader | head -n 1 | tr -d '.')
nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.max.sm --format=csv \
    | tee -a "$summary"
nvcc --version | tail -n 1 | tee -a "$summary"

status=0
step() {
    local name=$1
    shift
    local start=$SECONDS
    "$@" >"$out/$name.log" 2>&1
    local rc=$?
    echo "$name: exit $rc in $((SECONDS - start)) s" | tee -a "$summary"
    [ $rc = 0 ] || status=1
}

step build make -C "$root" build ARCH="$arch"
step test make -C "$root" test ARCH="$arch"
grep -E "tests passed|tests failed|Skipped|Failed|\*\*\*" "$out/test.log" | tail -n 40 | tee -a "$summary"
step bench "$root/scripts/bench.sh" --full "$root/build" "$work"
grep -E "^(lesson|problem|==|skipped)|FAIL" "$out/bench.log" | tail -n 60 >>"$summary"
step sgemm "$root/build/bin/sgemm_rate"
cat "$out/sgemm.log" >>"$summary"
cp "$work/bench.csv" "$out/bench.csv" 2>/dev/null
[ -d "$work/img" ] && tar -czf "$out/plots.tgz" -C "$work" img
echo "gpu-check: $([ $status = 0 ] && echo PASSED || echo FAILED)" | tee -a "$summary"
exit $status
