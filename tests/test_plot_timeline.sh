#!/bin/sh
# Tests plots/timeline.py on tests/data/sample_timeline.csv: two GPUs, four runs of
# 100 us, each an interior kernel beside a 30 us NCCL kernel (GPU 1's interior starts
# 8 us after its NCCL kernel), then an edge kernel, a copy and a memset; on the host, two
# runtime calls (11 us together) and a driver call before each run. The runs it must
# find, the host time and the overlap it must report, the PNG, and its refusals.
#
#   tests/test_plot_timeline.sh PYTHON TIMELINE_PY SAMPLE_CSV   (exit 77: no matplotlib)
set -eu

usage="PYTHON TIMELINE_PY SAMPLE_CSV"
. "$(dirname "$0")/plot_test_setup.sh"
sample=$third

run_plot "$sample" "$work/t.png"
[ "$rc" -eq 0 ] || fail "sample: exit $rc: $(cat "$work/stderr")"
is_png "$work/t.png" || fail "sample: no PNG"
grep -q "^2 runs of 100.0 us (median period), 200.0 us shown$" "$work/stdout" \
    || fail "sample: runs not found: $(cat "$work/stdout")"
grep -q "^host in CUDA runtime calls: 11.0 us per run$" "$work/stdout" \
    || fail "sample: host time: $(cat "$work/stdout")"
[ "$(grep -c "NCCL kernel (2 blocks) 30.0 us, other kernels beside it 30.0 us (100 %)" "$work/stdout")" -eq 2 ] \
    || fail "sample: GPU 0's overlap: $(cat "$work/stdout")"
[ "$(grep -c "^GPU 1 .*beside it 22.0 us (73 %)" "$work/stdout")" -eq 2 ] \
    || fail "sample: GPU 1's overlap: $(cat "$work/stdout")"

run_plot "$sample" "$work/t3.png" --runs 3
if [ "$rc" -ne 0 ] || ! grep -q "^3 runs of" "$work/stdout"; then
    fail "--runs 3: exit $rc: $(cat "$work/stdout")"
fi

mkdir "$work/out"
expect_refusal "missing CSV" "no_such.csv" "$work/out" "$work/no_such.csv" "$work/out/t.png"
printf 'a,b\n1,2\n' >"$work/bad.csv"
expect_refusal "not a trace" "bad.csv" "$work/out" "$work/bad.csv" "$work/out/t.png"
expect_refusal "too few runs" "4 runs" "$work/out" "$sample" "$work/out/t.png" --runs 4
expect_refusal "no folder" "no_dir" "$work/out" "$sample" "$work/no_dir/t.png"
echo "timeline plot: runs, overlap, PNG and refusals as expected"
