#!/usr/bin/env bash
# bench.sh [--full] BUILD_DIR OUT_DIR
# Runs every lesson built in BUILD_DIR/bin, appending to OUT_DIR/bench.csv (and a
# sequence's rows per frame to OUT_DIR/frames.csv), then plots them into OUT_DIR/img. By default each lesson runs its own default problem;
# --full runs the reference sweep committed under results/<gpu>/ (scripts/gpu-check.sh),
# which adds cuDNN at every precision and layout on the U-Net layers and lesson 11's
# layer (cudnn_baselines), lesson 11's thresholds, tiles and a panning camera in
# OUT_DIR/11_sweep.csv, and keeps the CSVs that are there (gpu-check runs the sweep in
# parts).
# LESSONS="0[1-4]_*" runs only the lessons matching that pattern.
# Lessons that need a GPU report "skipped" on a machine without one (exit 77).
# Exit status: 0 when nothing failed, 1 when any check failed.
set -u
full=0
if [ "${1:-}" = "--full" ]; then full=1; shift; fi
build=${1:?usage: bench.sh [--full] BUILD_DIR OUT_DIR}
out=${2:?usage: bench.sh [--full] BUILD_DIR OUT_DIR}
root=$(cd "$(dirname "$0")/.." && pwd)
mkdir -p "$out"
csv="$out/bench.csv"
frames="$out/frames.csv"
sweep="$out/11_sweep.csv"
[ $full = 1 ] || rm -f "$csv" "$frames"
pattern=${LESSONS:-[0-9][0-9]_*}

single_channel="seed000 big3 big5 big7"
unet="unet-3x64 unet-64x64 unet-64x128 unet-128x128 unet-128x256 unet-256x256 unet-256x512
      unet-512x512 unet-512x1024 unet-1024x1024"
binary="bnn-b16c256s28 bnn-b64c512s14 bnn-b1c1024s32 bnn-b1c1024s16"
covariance="cov-toy cov-b8c16s16 cov-b4c32s18"
video="vtest-c64 vtest-c128"

# The problems of the full sweep, one command line per problem.
problems_of() {
    case "$1" in
    01_*) for p in $single_channel $unet; do echo "--preset $p"; done ;;
    06_*) for p in $single_channel; do echo "--preset $p"; done
          for k in 3 5 7 9 11 13 15; do echo "--size 8192x8192 --ksize $k --filter gaussian"; done ;;
    07_*|cudnn_baselines) for p in $unet $video; do echo "--preset $p"; done ;;
    08_*) for p in $unet; do echo "--preset $p"; done ;;
    09_*) for p in $binary; do echo "--preset $p"; done ;;
    10_*) for p in $covariance; do echo "--preset $p"; done ;;
    11_*) for p in $video; do echo "--preset $p"; done ;;
    12_*) for p in unet-64x64 $video wide-8000x4096; do echo "--preset $p"; done ;;
    *) for p in $single_channel; do echo "--preset $p"; done
       for k in 9 11 13 15; do echo "--size 8192x8192 --ksize $k"; done ;;
    esac
}

failed=0 skipped=()
programs=("$build"/bin/$pattern)
[ $full = 1 ] && [ -z "${LESSONS:-}" ] && programs+=("$build/bin/cudnn_baselines")
for exe in "${programs[@]}"; do
    [ -x "$exe" ] || continue
    lesson=$(basename "$exe")
    if [ $full = 1 ]; then mapfile -t runs < <(problems_of "$lesson"); else runs=(""); fi
    # A sequence also writes its rows per frame.
    per_frame=()
    case "$lesson" in 11_*) per_frame=(--frames-csv "$frames") ;; esac
    for args in "${runs[@]}"; do
        echo "== $lesson $args"
        # shellcheck disable=SC2086 # args is a list of flags
        "$exe" $args --csv "$csv" "${per_frame[@]}"
        rc=$?
        if [ $rc = 77 ]; then skipped+=("$lesson"); break; fi
        [ $rc = 0 ] || failed=1
    done
done

# Lesson 11's trade-off on vtest-c64, beside its default rows: the threshold, the tile,
# a camera that pans (every tile changes) and smaller layers on the same frames (16 and
# 8 channels). Other flags than the presets', so these rows go to their own CSV.
delta="$build/bin/11_delta"
if [ $full = 1 ] && [ -x "$delta" ] && [[ 11_delta == $pattern ]] &&
   [[ ! " ${skipped[*]} " == *" 11_delta "* ]]; then
    for args in "--threshold 0" "--threshold 0.005" "--threshold 0.01" "--threshold 0.04" \
                "--threshold 0.08" "--tile 16" "--tile 32" "--pan 4" \
                "--size 576x768 --cin 16 --cout 16" "--size 576x768 --cin 8 --cout 8"; do
        echo "== 11_delta $args (11_sweep.csv)"
        # shellcheck disable=SC2086 # args is a list of flags
        "$delta" $args --csv "$sweep" --frames-csv "$frames" || failed=1
    done
fi

[ ${#skipped[@]} -gt 0 ] && echo "skipped (no usable GPU): ${skipped[*]}"
if [ -s "$csv" ]; then
    py=$("$root/scripts/python-env.sh") && "$py" "$root/plots/plot.py" "$csv" --out "$out/img" ||
        failed=1
    if [ -s "$frames" ]; then
        "$py" "$root/plots/plot_frames.py" "$frames" --out "$out/img" || failed=1
    fi
    echo "results: $csv, plots: $out/img/"
fi
exit $failed
