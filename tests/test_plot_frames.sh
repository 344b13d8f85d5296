#!/bin/sh
# Tests plots/plot_frames.py on tests/data/sample_frames.csv (lesson 11's rows per frame,
# two variants over frames 0-3 on an H200): the one chart it must write, and how it
# refuses a CSV with another header or a missing file.
#
#   tests/test_plot_frames.sh PYTHON PLOT_FRAMES_PY SAMPLE_CSV   (exit 77: no matplotlib)
set -eu

usage="PYTHON PLOT_FRAMES_PY SAMPLE_CSV"
. "$(dirname "$0")/plot_test_setup.sh"
sample=$third

"$python" "$plot" "$sample" --out "$work/img" >"$work/log" || fail "exit $? on the sample"
png="$work/img/nvidia-h200_11_delta_vtest-c64_threshold-0-02-tile-8-pan-0_frames.png"
[ -s "$png" ] || fail "no chart $png (wrote: $(cat "$work/log"))"
[ "$(ls "$work/img" | wc -l)" = 1 ] || fail "expected one chart, found: $(ls "$work/img")"

sed 1s/frame/frames/ "$sample" >"$work/bad.csv"
rc=0
"$python" "$plot" "$work/bad.csv" --out "$work/img2" 2>"$work/err" || rc=$?
[ $rc = 2 ] || fail "another header: exit $rc, expected 2"
grep -q "bad.csv" "$work/err" || fail "the error does not name the file: $(cat "$work/err")"
[ ! -e "$work/img2" ] || fail "a refused CSV left $work/img2 behind"

rc=0
"$python" "$plot" "$work/missing.csv" --out "$work/img3" 2>"$work/err" || rc=$?
[ $rc = 2 ] || fail "a missing CSV: exit $rc, expected 2"
echo "plot_frames.py: chart written, bad header and missing file refused"
