#!/bin/sh
# Tests plots/plot_change_mask.py on mask_picture's files for a 96x128 crop of the vtest
# frames: the one PNG it must write, and how it refuses files that disagree with their
# info, a missing file and a close-up outside the frame.
#
#   tests/test_plot_change_mask.sh PYTHON PLOT_CHANGE_MASK_PY MASK_PICTURE   (exit 77: no matplotlib)
set -eu

usage="PYTHON PLOT_CHANGE_MASK_PY MASK_PICTURE"
. "$(dirname "$0")/plot_test_setup.sh"
program=$third

"$program" --size 96x128 --cin 4 --out "$work/m" >"$work/m.log" 2>&1 || fail "mask_picture: exit $?"
"$python" "$plot" "$work/m" --out "$work/img/mask.png" >"$work/log" || fail "exit $? on the files"
png="$work/img/mask.png"
[ -s "$png" ] || fail "no picture $png (wrote: $(cat "$work/log"))"
[ "$(head -c 4 "$png" | od -An -c | tr -d ' ')" = '211PNG' ] || fail "$png is not a PNG"
[ "$(ls "$work/img" | wc -l)" = 1 ] || fail "expected one picture, found: $(ls "$work/img")"
"$python" "$plot" "$work/m" --zoom 3,4 --out "$work/img/zoom.png" >/dev/null || fail "exit $? with --zoom 3,4"

refused() { # refused WHAT NAME_IN_ERROR ARGS...: exit 2, the error names the file, no PNG
    what=$1 name=$2
    shift 2
    rc=0
    "$python" "$plot" "$@" --out "$work/no/x.png" 2>"$work/err" || rc=$?
    [ $rc = 2 ] || fail "$what: exit $rc, expected 2"
    grep -q "$name" "$work/err" || fail "$what: the error does not name $name: $(cat "$work/err")"
    [ ! -e "$work/no" ] || fail "$what: left $work/no behind"
}

# An info whose count the change mask does not hold.
for f in grey active tiles; do cp "$work/m_$f.pgm" "$work/n_$f.pgm"; done
sed 's/^active_pixels=.*/active_pixels=1/' "$work/m_info.txt" >"$work/n_info.txt"
refused "a wrong count" "active_pixels" "$work/n"
refused "a missing file" "missing_info.txt" "$work/missing"
refused "a close-up outside the frame" "zoom" "$work/m" --zoom 4,0
echo "plot_change_mask.py: picture written, files that disagree, a missing file and a bad close-up refused"
