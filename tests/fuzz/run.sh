#!/usr/bin/env bash
# tests/fuzz/run.sh SECONDS OUT_DIR [TARGET...]
# Builds the libFuzzer targets (npy, image, filter, cli, and the lessons' own: cov_gamma
# and cov_files for lesson 10's .npy files, delta_cli for lesson 11's flags; all by
# default) with clang,
# AddressSanitizer and UndefinedBehaviorSanitizer, and runs each for SECONDS from its
# committed seeds (tests/fuzz/corpus/TARGET and the test data; inputs it finds go to
# OUT_DIR/corpus_TARGET, so the seeds stay as committed). Exit 77 (ctest: Skipped)
# when no compiler here supports -fsanitize=fuzzer, 1 when a target crashes (the
# input is kept as OUT_DIR/TARGET-crash-*), 0 otherwise. Outside the CMake build, so
# the project itself never needs clang. FUZZ_CC picks the compiler.
set -euo pipefail
seconds=$1 out=$2
shift 2
targets=("$@")
[ ${#targets[@]} -eq 0 ] && targets=(npy image filter cli cov_gamma cov_files delta_cli)
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
common=$root/common
cc=${FUZZ_CC:-clang}
# Each target's parser and what it calls besides common/io/fileutil.c and escape.c.
# Lesson 10's problem.c brings its float64 check (reference.c, verify.c); lesson 11's
# its layer and frames (video.c, image.c) and the convolution's gold (gold.c); both
# allocate through host_alloc.c and fuzz_alloc.c, alloc.c without CUDA (no runtime to
# link). The .npy targets share their round trip (npy_round_trip.c).
no_cuda_alloc="tests/fuzz/fuzz_alloc.c common/io/host_alloc.c"
cov_problem="lessons/10_covariance/problem.c common/io/npy.c tests/fuzz/npy_round_trip.c
    $no_cuda_alloc common/io/rng.c common/measure/reference.c common/measure/verify.c
    common/tensor/conv_problem.c"
declare -A parser=([npy]="common/io/npy.c tests/fuzz/npy_round_trip.c"
    [image]=common/io/image.c [filter]=common/io/filters.c
    [cli]="common/harness/cli.c common/tensor/conv_problem.c common/io/filters.c
    common/ops/op_files.c common/ops/op_params.c common/ops/conv/conv_flags.c common/io/npy.c
    tests/flag_lesson.c tests/fuzz/fuzz_command_line.c"
    [cov_gamma]="$cov_problem" [cov_files]="$cov_problem common/ops/op_files.c"
    [delta_cli]="common/harness/cli.c common/tensor/conv_problem.c common/ops/op_files.c
    common/ops/op_params.c common/io/npy.c lessons/11_delta/problem.c lessons/11_delta/video.c
    common/io/image.c $no_cuda_alloc common/io/rng.c common/ops/conv/gold.c
    common/measure/reference.c common/measure/verify.c common/tensor/tensor_format.c
    tests/fuzz/fuzz_command_line.c")
# A lesson's target also sees the lesson's headers (each has its own problem.h).
declare -A lesson=([cov_gamma]=lessons/10_covariance [cov_files]=lessons/10_covariance
    [delta_cli]=lessons/11_delta)
# Seeds besides tests/fuzz/corpus/TARGET: the test and sample files already committed.
declare -A more_seeds=([npy]=tests/data [image]=tests/data [filter]=data/filters [cli]=
    [cov_gamma]= [cov_files]= [delta_cli]=)
# The flag parser's headers include cuda_runtime_api.h: from CUDA_INCLUDE, else the
# toolkit of the nvcc on PATH, else /usr/local/cuda.
nvcc=$(command -v nvcc || echo /usr/local/cuda/bin/nvcc)
cuda_include=${CUDA_INCLUDE:-$(dirname "$(dirname "$nvcc")")/include}
# Largest input tried: every parser's header and a small payload fit in 4 KiB.
max_len=4096

mkdir -p "$out"
# Scratch files of the targets: tmpfs where there is one, as every run writes them.
scratch=$(mktemp -d /dev/shm/conv-fuzz.XXXXXX 2>/dev/null || mktemp -d)
trap 'rm -rf "$scratch"' EXIT
echo 'int LLVMFuzzerTestOneInput(const char *d, unsigned long n) { return (void)d, (int)(n & 0); }' \
    >"$scratch/probe.c"
if ! command -v "$cc" >/dev/null 2>&1 ||
    ! "$cc" -fsanitize=fuzzer "$scratch/probe.c" -o "$scratch/probe" >/dev/null 2>&1; then
    echo "skipped: no $cc with -fsanitize=fuzzer (libFuzzer) here; install clang to fuzz"
    exit 77
fi

includes=()
for d in device tensor io measure ops ops/conv ops/conv/kernel harness; do includes+=(-I"$common/$d"); done
flags=(-std=c11 -g -O1 -Wall -Wextra -fsanitize=fuzzer,address,undefined
    -fno-sanitize-recover=all -I"$here" -I"$root/tests"
    "${includes[@]}" -I"$cuda_include")
status=0
for t in "${targets[@]}"; do
    if [ -z "${parser[$t]:-}" ]; then
        echo "FAIL: unknown fuzz target '$t' (npy, image, filter, cli, cov_gamma, cov_files, delta_cli)"
        exit 1
    fi
    sources=()
    for f in ${parser[$t]}; do sources+=("$root/$f"); done
    lesson_include=()
    [ -n "${lesson[$t]:-}" ] && lesson_include=(-I"$root/${lesson[$t]}")
    "$cc" "${flags[@]}" "${lesson_include[@]}" "$here/fuzz_$t.c" "$here/fuzz_support.c" "${sources[@]}" \
        "$common/io/fileutil.c" "$common/io/escape.c" -lm -o "$out/fuzz_$t"
    args=(-max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 -max_len=$max_len
        -artifact_prefix="$out/$t-" -print_final_stats=1)
    [ -f "$here/$t.dict" ] && args+=(-dict="$here/$t.dict")
    mkdir -p "$out/corpus_$t"
    log="$out/fuzz_$t.log"
    seeds=("$here/corpus/$t")
    [ -n "${more_seeds[$t]}" ] && seeds+=("$root/${more_seeds[$t]}")
    if TMPDIR="$scratch" "$out/fuzz_$t" "${args[@]}" "$out/corpus_$t" "${seeds[@]}" \
        >"$log" 2>&1; then
        runs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log")
        echo "fuzz_$t: ${runs:-?} inputs in ${seconds} s, no crash"
    else
        tail -n 40 "$log"
        echo "FAIL: fuzz_$t: see $log; the input is kept as $out/$t-crash-*"
        status=1
    fi
done
exit $status
