#!/bin/sh
# Tests lessons/11_delta/mask_picture (the picture of lesson 11's idea) on small crops of
# the vtest frames: its files have the frame's size and hold the counts it prints; the
# changed tiles are those holding an active pixel, the recomputed tiles those a changed
# tile reaches (checked here from the files, tile by tile); the printed mean is the
# executable's `params` share; a 1x1 filter reaches no neighbour; a threshold nothing
# passes changes nothing; bad flags are refused with one error line. Its files follow
# docs/file_safety.md: a symlink, a FIFO, a folder or a hard-linked pair among them is
# refused before any work (a FIFO without hanging), and a disk that fills up after the
# small files are written leaves none of the four (and old ones as they were), no
# temporary file either.
#
#   tests/test_mask_picture.sh MASK_PICTURE
set -eu

if [ $# -ne 1 ]; then
    echo "usage: $0 MASK_PICTURE" >&2
    exit 2
fi
program=$1
here=$(cd "$(dirname "$0")" && pwd)
export LC_ALL=C

work=$(mktemp -d "${TMPDIR:-/tmp}/test_mask_picture.XXXXXX")
trap 'rm -rf "$work"' EXIT

fail() {
    echo "FAIL: $*" >&2
    exit 1
}

info() { # info PREFIX KEY
    sed -n "s/^$2=//p" "$1_info.txt"
}

# pgm PATH WIDTH HEIGHT: the header is the one image_write writes, the pixels follow.
pgm() {
    header=$(printf 'P5\n%d %d\n255\n' "$2" "$3")
    [ "$(head -c ${#header} "$1")" = "$header" ] || fail "$1: not a ${2}x$3 PGM"
    [ "$(wc -c <"$1")" -eq $((${#header} + 1 + $2 * $3)) ] || fail "$1: not ${2}x$3 pixels"
}

# count PATH PIXELS VALUE: how many of the last PIXELS bytes of PATH are VALUE.
count() {
    tail -c "$2" "$1" | od -An -v -tu1 | tr -s ' ' '\n' | grep -c "^$3\$" || true
}

# check PREFIX H W TILE REACH: the files against each other and against the info.
check() {
    p=$1 h=$2 w=$3 tile=$4 reach=$5
    th=$(((h + tile - 1) / tile)) tw=$(((w + tile - 1) / tile))
    pgm "$p"_grey.pgm "$w" "$h"
    pgm "$p"_active.pgm "$w" "$h"
    pgm "$p"_tiles.pgm "$tw" "$th"
    [ "$(info "$p" pixels)" = $((h * w)) ] || fail "$p: pixels $(info "$p" pixels)"
    [ "$(info "$p" tiles)" = $((th * tw)) ] || fail "$p: tiles $(info "$p" tiles)"
    [ "$(info "$p" reach)" = "$reach" ] || fail "$p: reach $(info "$p" reach), expected $reach"
    active=$(count "$p"_active.pgm $((h * w)) 255)
    idle=$(count "$p"_active.pgm $((h * w)) 0)
    [ $((active + idle)) = $((h * w)) ] || fail "$p: the change mask is not 0/255"
    [ "$active" = "$(info "$p" active_pixels)" ] || fail "$p: $active active pixels in the mask"
    changed=$(count "$p"_tiles.pgm $((th * tw)) 255)
    only=$(count "$p"_tiles.pgm $((th * tw)) 128)
    [ "$changed" = "$(info "$p" changed_tiles)" ] || fail "$p: $changed changed tiles in the map"
    [ $((changed + only)) = "$(info "$p" recomputed_tiles)" ] ||
        fail "$p: $((changed + only)) recomputed tiles in the map"
    # A changed tile holds an active pixel; one holds at most tile^2 of them.
    [ "$changed" -le "$active" ] && [ "$active" -le $((changed * tile * tile)) ] ||
        fail "$p: $active active pixels in $changed changed tiles"
    # Tile by tile: changed exactly where an active pixel lies; recomputed exactly where a
    # changed tile is within the reach.
    { tail -c $((h * w)) "$p"_active.pgm | od -An -v -tu1
      echo "--"
      tail -c $((th * tw)) "$p"_tiles.pgm | od -An -v -tu1; } |
        awk -v h="$h" -v w="$w" -v tile="$tile" -v th="$th" -v tw="$tw" -v reach="$reach" '
        $1 == "--" { part = 1; next }
        { for (i = 1; i <= NF; i++) if (part) t[n2++] = $i; else a[n1++] = $i }
        END {
            for (p = 0; p < h * w; p++)
                if (a[p] == 255) holds[int(int(p / w) / tile) * tw + int((p % w) / tile)] = 1
            for (ty = 0; ty < th; ty++) for (tx = 0; tx < tw; tx++) {
                k = ty * tw + tx
                if ((t[k] == 255) != (k in holds)) { print "tile " ty "," tx ": changed " t[k]; bad = 1 }
                near = 0
                for (sy = ty - reach; sy <= ty + reach; sy++)
                    for (sx = tx - reach; sx <= tx + reach; sx++)
                        if (sy >= 0 && sy < th && sx >= 0 && sx < tw && t[sy * tw + sx] == 255) near = 1
                if ((t[k] > 0) != near) { print "tile " ty "," tx ": recomputed " t[k] " reached " near; bad = 1 }
            }
            exit bad
        }' >"$work/awk.log" || fail "$p: $(head -n 3 "$work/awk.log")"
}

# The default threshold on a 64x96 crop: the chosen frame is the one nearest the mean,
# and the mean is the executable's `params` share.
"$program" --size 64x96 --cin 4 --out "$work/a" >"$work/a.log" 2>&1 || fail "exit $?: $(tail -n 3 "$work/a.log")"
check "$work/a" 64 96 8 1
[ "$(info "$work/a" chosen)" = 1 ] || fail "no frame chosen"
mean=$(sed -n 's/^mean recomputed over frames 1..23: \([0-9.]*\) | .*recomputed=\([0-9.]*\)$/\1 \2/p' "$work/a.log")
set -- $mean
[ $# = 2 ] && [ "$1" = "$2" ] || fail "the mean and the executable's share differ: '$mean'"
[ "$(info "$work/a" mean_recomputed)" = "$1" ] || fail "the info's mean is not the printed one"
frame=$(info "$work/a" frame)
nearest=$(awk -v m="$1" '$1 ~ /^[0-9]+$/ && NF == 5 { sub("%", "", $5); d = $5 / 100 - m; d = d < 0 ? -d : d;
    if (best == "" || d <= best) { best = d; f = $1 } } END { print f }' "$work/a.log")
[ "$frame" = "$nearest" ] || fail "frame $frame chosen, $nearest is nearest the mean"
row=$(awk -v f="$frame" '$1 == f && NF == 5 { print $3, $4, $5 }' "$work/a.log")
expect=$(awk -v a="$(info "$work/a" active_pixels)" -v c="$(info "$work/a" changed_tiles)" \
    -v r="$(info "$work/a" recomputed_tiles)" 'BEGIN { printf "%.2f%% %.2f%% %.2f%%", 100 * a / 6144, 100 * c / 96, 100 * r / 96 }')
[ "$row" = "$expect" ] || fail "frame $frame's row '$row', its files give '$expect'"
[ "$(info "$work/a" changed_tiles)" -gt 0 ] || fail "nothing changed on the chosen frame"

# A 1x1 filter reaches no other tile: recomputed = changed. A panning camera with 16-pixel
# tiles on a frame given by --frame.
"$program" --size 40x48 --cin 4 --ksize 1 --threshold 0.005 --out "$work/b" >"$work/b.log" 2>&1 || fail "k1: exit $?"
check "$work/b" 40 48 8 0
[ "$(info "$work/b" changed_tiles)" = "$(info "$work/b" recomputed_tiles)" ] || fail "k1: a neighbour recomputed"
"$program" --size 40x48 --cin 4 --pan 3 --tile 16 --frame 5 --out "$work/c" >"$work/c.log" 2>&1 || fail "pan: exit $?"
check "$work/c" 40 48 16 1
[ "$(info "$work/c" frame)" = 5 ] && [ "$(info "$work/c" chosen)" = 0 ] || fail "pan: not frame 5 as asked"
# A threshold no change passes: nothing active, nothing recomputed.
"$program" --size 40x48 --cin 4 --threshold 1000 --out "$work/d" >"$work/d.log" 2>&1 || fail "still: exit $?"
check "$work/d" 40 48 8 1
[ "$(info "$work/d" recomputed_tiles)" = 0 ] || fail "still: tiles recomputed"

# Bad flags: exit 2, one error line, nothing written.
for flags in "--tile 12" "--frame 0" "--frame 24" "--size 600x800" "--threshold -1" "--ksize 2"; do
    rc=0
    # shellcheck disable=SC2086
    "$program" $flags --out "$work/bad" >/dev/null 2>"$work/err" || rc=$?
    [ $rc = 2 ] || fail "$flags: exit $rc, expected 2"
    [ "$(wc -l <"$work/err")" = 1 ] && grep -q '^error: ' "$work/err" || fail "$flags: $(cat "$work/err")"
    [ -z "$(ls "$work" | grep '^bad')" ] || fail "$flags: wrote $(ls "$work" | grep '^bad')"
done
rc=0
"$program" --size 40x48 >/dev/null 2>&1 || rc=$?
[ $rc = 2 ] || fail "no --out: exit $rc, expected 2"
# refused NAME PATTERN PREFIX FLAGS...: exit 2 before any work (nothing on standard
# output, where the work prints its table), one error line matching PATTERN, no file of
# PREFIX but those the case made, and no temporary file. A run that hangs (a FIFO opened
# for writing waits for a reader) is stopped after 60 s and fails the case.
refused() {
    name=$1 pattern=$2 prefix=$3
    shift 3
    before=$(ls -R "$work")
    rc=0
    timeout 60 "$program" "$@" --out "$prefix" >"$logs/out" 2>"$logs/err" || rc=$?
    [ $rc != 124 ] || fail "$name: hangs (stopped after 60 s)"
    [ $rc = 2 ] || fail "$name: exit $rc, expected 2: $(cat "$logs/err")"
    [ "$(wc -l <"$logs/err")" = 1 ] && grep -q "^error: $pattern" "$logs/err" ||
        fail "$name: '$(cat "$logs/err")', expected 'error: $pattern'"
    [ ! -s "$logs/out" ] || fail "$name: refused only after the work: $(head -n 1 "$logs/out")"
    [ "$(ls -R "$work")" = "$before" ] || fail "$name: files changed: $(ls -R "$work" | tr '\n' ' ')"
}
logs=$(mktemp -d "${TMPDIR:-/tmp}/test_mask_picture_logs.XXXXXX")
trap 'rm -rf "$work" "$logs"' EXIT

small="--size 40x48 --cin 4"
# A symlink planted at PREFIX_info.txt: refused, its target untouched (the old tool
# wrote through it).
echo keep >"$work/target"
ln -s "$work/target" "$work/sym_info.txt"
# shellcheck disable=SC2086
refused symlink "--out $work/sym_info.txt: is a symbolic link" "$work/sym" $small
[ "$(cat "$work/target")" = keep ] || fail "symlink: its target was written"
# A FIFO there: refused at once, not opened (the old tool waited for a reader forever).
mkfifo "$work/fifo_info.txt"
# shellcheck disable=SC2086
refused fifo "--out $work/fifo_info.txt: is a FIFO" "$work/fifo" $small
# A folder at PREFIX_tiles.pgm, and two of the files one file (a hard link).
mkdir "$work/dir_tiles.pgm"
# shellcheck disable=SC2086
refused folder "--out $work/dir_tiles.pgm: is a directory" "$work/dir" $small
echo old >"$work/h_grey.pgm"
ln "$work/h_grey.pgm" "$work/h_active.pgm"
# shellcheck disable=SC2086
refused hard_link "--out $work/h_active.pgm: is the same file as $work/h_grey.pgm" "$work/h" $small
# A prefix in a folder that does not exist.
# shellcheck disable=SC2086
refused no_folder "--out $work/none/p_grey.pgm: folder $work/none: does not exist" "$work/none/p" $small

# A disk that fills up part-way: files of at most 1 KiB (tests/limited.sh) take the info
# and the tile map (written first) but not the 40x48 frames. The run fails after its
# work (exit 1, one error line) and leaves none of the four, nor a temporary file; a
# picture written before stays as it was.
"$program" $small --out "$work/k" >/dev/null 2>&1 || fail "keep: exit $?"
for suffix in _grey.pgm _active.pgm _tiles.pgm _info.txt; do cp "$work/k$suffix" "$work/saved$suffix"; done
for prefix in k full; do
    rc=0
    # shellcheck disable=SC2086
    "$here/limited.sh" file-blocks 1 "$program" $small --threshold 0.5 --out "$work/$prefix" \
        >"$logs/out" 2>"$logs/err" || rc=$?
    [ $rc = 1 ] || fail "full disk ($prefix): exit $rc, expected 1: $(cat "$logs/err")"
    [ "$(wc -l <"$logs/err")" = 1 ] && grep -q "^error: --out $work/${prefix}_[a-z]*\.pgm: cannot write" "$logs/err" ||
        fail "full disk ($prefix): $(cat "$logs/err")"
    [ -z "$(ls "$work" | grep '\.tmp\.')" ] || fail "full disk ($prefix): left $(ls "$work" | grep '\.tmp\.')"
done
[ -z "$(ls "$work" | grep '^full')" ] || fail "full disk: left $(ls "$work" | grep '^full')"
for suffix in _grey.pgm _active.pgm _tiles.pgm _info.txt; do
    cmp -s "$work/k$suffix" "$work/saved$suffix" || fail "full disk: k$suffix was changed"
done

echo "mask_picture: files match the printed fractions, tiles changed and reached as the lesson's rule says, the mean is the executable's share; its outputs are checked before any work and written all or none"
