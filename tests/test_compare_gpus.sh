#!/bin/sh
# Tests plots/compare_gpus.py: GPU B's CSV is made from the sample (GPU A) with the device
# renamed, a few vs_cudnn values changed by known amounts and one row FAIL; the script
# must draw one PNG per lesson with matched rows and list exactly the rows whose ratio
# changes beyond the threshold, and refuse a bad CSV or --out with one line, writing
# nothing.
#
#   tests/test_compare_gpus.sh PYTHON COMPARE_PY SAMPLE_CSV   (exit 77: PYTHON has no matplotlib)
set -eu

usage="PYTHON COMPARE_PY SAMPLE_CSV"
. "$(dirname "$0")/plot_test_setup.sh"
sample=$third

# GPU B: the sample renamed, with these changes (field 18 is vs_cudnn, 21 status):
#   02 fast big3            x1.5   +50 %  listed
#   02 naive custom 4096^2  x0.8   -20 %  listed (a custom problem, matched by its shape)
#   08 mma_fp16 unet-64x64  x0.3   -70 %  listed; wmma_fp16 becomes B's fastest fp16 kernel
#   02 naive seed000        x1.05   +5 %  under the threshold
#   04 tile_in big3, the first of its two rows  x3  superseded by the second: not compared
#   04 tile_out big5        FAIL, x2       not compared
#   02 cudnn big3           vs_cudnn 2     cuDNN's own row: not compared
b_csv=$work/gpu_b.csv
awk -F, -v OFS=, '
NR > 1 && $4 !~ /threads?\)$/ {
    $4 = "NVIDIA H100 80GB HBM3"
    if ($1 == "02_gpu_naive" && $2 == "fast" && $3 == "big3") $18 = sprintf("%.4f", $18 * 1.5)
    if ($1 == "02_gpu_naive" && $2 == "naive" && $3 == "custom" && $8 == 4096) $18 = sprintf("%.4f", $18 * 0.8)
    if ($1 == "08_tensor_cores" && $2 == "mma_fp16") $18 = sprintf("%.4f", $18 * 0.3)
    if ($1 == "02_gpu_naive" && $2 == "naive" && $3 == "seed000") $18 = sprintf("%.4f", $18 * 1.05)
    if ($1 == "04_shared_tiling" && $2 == "tile_in" && !seen++) $18 = sprintf("%.4f", $18 * 3)
    if ($1 == "04_shared_tiling" && $2 == "tile_out") { $18 = sprintf("%.4f", $18 * 2); $21 = "FAIL" }
    if ($1 == "02_gpu_naive" && $2 == "cudnn" && $3 == "big3") $18 = "2.0000"
}
{ print }' "$sample" >"$b_csv"
[ "$(grep -c 'NVIDIA H100 80GB HBM3' "$b_csv")" -gt 0 ] || fail "could not build GPU B's CSV"

stem=compare_nvidia-h200_nvidia-h100-80gb-hbm3
out=$work/out
run_plot "$sample" "$b_csv" --out "$out"
[ "$rc" -eq 0 ] || fail "exited $rc: $(cat "$work/stderr")"

# One PNG per lesson with rows matched on both GPUs: not 01 (CPU), not 10 (no ratio).
count=0
for lesson in 02_gpu_naive 04_shared_tiling 08_tensor_cores; do
    count=$((count + 1))
    name=${stem}_$lesson.png
    is_png "$out/$name" || fail "$name missing, empty or not a PNG"
    grep -q "^wrote .*/$name\$" "$work/stdout" || fail "no stdout line for $name"
done
md=$out/$stem.md
[ -s "$md" ] || fail "$stem.md missing or empty"
grep -q "^wrote .*/$stem.md\$" "$work/stdout" || fail "no stdout line for $stem.md"
[ "$(grep -c '^wrote ' "$work/stdout")" -eq $((count + 1)) ] || fail "expected $((count + 1)) 'wrote' lines"
[ "$(ls -A "$out" | wc -l | tr -d ' ')" -eq $((count + 1)) ] || fail "unexpected files in --out: $(ls -A "$out")"

# The table: exactly the rows beyond 10 %, in order (lesson, then size of change), the
# same on stdout as in the file. Cells: lesson, variant, problem, dtype/layout, A, B, change.
table_rows() {
    grep '^| [0-9]' "$1" | awk -F' [|] ' '{ sub(/^[|] /, "", $1); sub(/ [|]$/, "", $7); print $1 ";" $2 ";" $3 ";" $4 ";" $5 ";" $6 ";" $7 }'
}
expected="02_gpu_naive;fast;big3;fp32/nchw;1.200;1.800;+50.0 %
02_gpu_naive;naive;4096x4096 k=9;fp32/nchw;1.300;1.040;-20.0 %
08_tensor_cores;mma_fp16;unet-64x64;fp16/nhwc;0.5000;0.1500;-70.0 %"
got=$(table_rows "$md")
[ "$got" = "$expected" ] || fail "Markdown rows beyond 10 %:
$got
expected:
$expected"
[ "$(table_rows "$work/stdout")" = "$expected" ] || fail "stdout does not hold the same table"
for line in "02_gpu_naive: 6 rows matched, 2 beyond 10 %" \
    "04_shared_tiling: 1 row matched, 0 beyond 10 % (1 with a ratio only on A)" \
    "08_tensor_cores: 3 rows matched, 1 beyond 10 %" \
    "10_covariance: 0 rows matched, 0 beyond 10 %"; do
    grep -qF -- "- $line" "$md" || fail "no summary line '$line'"
done
if grep -q '^- 01_cpu_direct' "$md"; then fail "lesson 01 is compared"; fi

# A higher threshold keeps only the larger changes.
run_plot "$sample" "$b_csv" --out "$work/out30" --threshold 0.3
[ "$rc" -eq 0 ] || fail "--threshold 0.3: exited $rc: $(cat "$work/stderr")"
got=$(table_rows "$work/out30/$stem.md" | cut -d';' -f1-3)
[ "$got" = "02_gpu_naive;fast;big3
08_tensor_cores;mma_fp16;unet-64x64" ] || fail "--threshold 0.3 lists: $got"

# A file against itself: nothing beyond the threshold, the two GPUs told apart.
run_plot "$sample" "$sample" --out "$work/same"
[ "$rc" -eq 0 ] || fail "same file twice: exited $rc: $(cat "$work/stderr")"
grep -q "No matched row changes" "$work/same/compare_nvidia-h200_nvidia-h200.md" ||
    fail "same file twice: rows listed"

# Refusals (expect_refusal): a missing or bad CSV, an --out that cannot be written.
expect_refusal "missing CSV" no_such.csv "$work/out_missing" \
    "$sample" "$work/no_such.csv" --out "$work/out_missing"
[ ! -e "$work/out_missing" ] || fail "missing CSV: --out was created"
bad=$work/bad_header.csv
sed '1s/median_ms/median_us/' "$b_csv" >"$bad"
expect_refusal "wrong header" bad_header.csv "$work/out_bad" "$bad" "$sample" --out "$work/out_bad"
[ ! -e "$work/out_bad" ] || fail "wrong header: --out was created"
echo "not a folder" >"$work/a_file"
expect_refusal "--out is a file" a_file "$work/none" "$sample" "$b_csv" --out "$work/a_file"
[ "$(cat "$work/a_file")" = "not a folder" ] || fail "--out is a file: the file was changed"
expect_refusal "--out under a file" a_file/sub "$work/none" \
    "$sample" "$b_csv" --out "$work/a_file/sub"
if [ "$(id -u)" -ne 0 ]; then # root writes into a read-only folder anyway
    mkdir "$work/read_only"
    chmod 555 "$work/read_only"
    expect_refusal "read-only --out" read_only "$work/read_only" \
        "$sample" "$b_csv" --out "$work/read_only"
    chmod 755 "$work/read_only"
fi

echo "test_compare_gpus: PASS ($count charts, 3 rows beyond the threshold)"
