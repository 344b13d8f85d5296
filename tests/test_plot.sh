#!/bin/sh
# Tests plots/plot.py on tests/data/sample_bench.csv: the charts it must draw and skip,
# the roof it must derive from the rows (the sample was made with a 3000 GB/s copy
# bandwidth and a 60.0 TFLOP/s peak), and how it refuses a bad or missing CSV.
#
#   tests/test_plot.sh PYTHON PLOT_PY SAMPLE_CSV     (exit 77: PYTHON has no matplotlib)
set -eu

usage="PYTHON PLOT_PY SAMPLE_CSV"
. "$(dirname "$0")/plot_test_setup.sh"
sample=$third

png_count() {
    if [ -d "$1" ]; then find "$1" -type f -name '*.png' | wc -l | tr -d ' '; else echo 0; fi
}

slug=nvidia-h100-80gb-hbm3
expected="
${slug}_01_cpu_direct_time.png
${slug}_02_gpu_naive_time.png
${slug}_02_gpu_naive_roofline_pct.png
${slug}_02_gpu_naive_vs_cudnn.png
${slug}_02_gpu_naive_roofline.png
${slug}_04_shared_tiling_time.png
${slug}_04_shared_tiling_roofline_pct.png
${slug}_04_shared_tiling_vs_cudnn.png
${slug}_04_shared_tiling_roofline.png
${slug}_05_register_tiling_time.png
${slug}_05_register_tiling_roofline_pct.png
${slug}_05_register_tiling_vs_cudnn.png
${slug}_05_register_tiling_roofline.png
${slug}_07_multichannel_time.png
${slug}_07_multichannel_roofline_pct.png
${slug}_07_multichannel_vs_cudnn.png
${slug}_07_multichannel_roofline.png
${slug}_single_channel.png
${slug}_roofline_model.png
${slug}_unet.png"

# The sample: every expected chart, nothing more (lesson 01 runs on the CPU: no roofline,
# no cuDNN ratio, so those three charts are skipped), no temporary file left behind.
out=$work/out
run_plot "$sample" --out "$out"
[ "$rc" -eq 0 ] || fail "plot.py exited $rc on $sample: $(cat "$work/stderr")"
count=0
for name in $expected; do
    count=$((count + 1))
    is_png "$out/$name" || fail "$name missing, empty or not a PNG"
    grep -q "^wrote .*/$name" "$work/stdout" || fail "no stdout line for $name"
done
[ "$(png_count "$out")" -eq "$count" ] || fail "expected $count PNG files, found $(ls "$out")"
[ "$(grep -c '^wrote ' "$work/stdout")" -eq "$count" ] || fail "expected $count 'wrote' lines"
for file in "$out"/* "$out"/.[!.]*; do
    case $file in
    *.png | "$out/*" | "$out/.[!.]*") ;;
    *) fail "leftover file $file" ;;
    esac
done

roof_line=$(grep "_roofline_model.png" "$work/stdout")
case $roof_line in
*"copy bandwidth 3000 GB/s"*) ;;
*) fail "derived bandwidth is not 3000 GB/s: $roof_line" ;;
esac
case $roof_line in
*"FP32 peak 60.0 TFLOP/s"*) ;;
*) fail "derived peak is not 60.0 TFLOP/s: $roof_line" ;;
esac

# A CSV with another header is refused (expect_refusal), even when a good CSV comes
# first on the command line; so is a missing CSV.
bad=$work/bad_header.csv
sed '1s/median_ms/median_us/' "$sample" >"$bad"
expect_refusal "wrong header" bad_header.csv "$work/out_bad" "$sample" "$bad" --out "$work/out_bad"
expect_refusal "missing CSV" no_such.csv "$work/out_missing" \
    "$work/no_such.csv" --out "$work/out_missing"

# A lesson of more variants than the palette has colours (lesson 08's ladder: 21) is
# drawn in one panel per precision: 24 variants of one lesson-07 row, 12 fp16 and 12
# fp32, each panel within the palette.
many=$work/many_variants.csv
head -n 1 "$sample" >"$many"
grep -m 1 "^07_multichannel," "$sample" | awk -F, -v OFS=, '{
    for (i = 0; i < 24; i++) {
        $1 = "08_tensor_cores"; $2 = sprintf("step%02d", i); $11 = i < 12 ? "fp16" : "fp32"
        print
    }
}' >>"$many"
run_plot "$many" --out "$work/out_many"
[ "$rc" -eq 0 ] || fail "24 variants: exit $rc: $(cat "$work/stderr")"
is_png "$work/out_many/${slug}_08_tensor_cores_time.png" || fail "24 variants: no time chart"

# A CSV holding only the header: a message, exit 0, no PNG.
empty=$work/header_only.csv
head -n 1 "$sample" >"$empty"
run_plot "$empty" --out "$work/out_empty"
[ "$rc" -eq 0 ] || fail "header-only CSV: exit $rc, expected 0"
grep -q "header_only.csv" "$work/stdout" || fail "header-only CSV: no message naming it"
[ "$(png_count "$work/out_empty")" -eq 0 ] || fail "header-only CSV: PNG files were written"

echo "test_plot: PASS ($count charts)"
