#!/usr/bin/env bash
# gpu-check.sh [STAGE...]: everything a GPU machine should run.
#   test    build for this GPU's own architecture (CMake detects it), then the full
#           ctest suite: CPU and GPU tests, compute-sanitizer memcheck (with leak
#           checking), racecheck and synccheck on every GPU lesson at small sizes
#   ptx     builds for 75-virtual and 80-virtual (PTX only: the driver compiles it for
#           this GPU at load, so the T4's and the A100's code paths run here) and runs
#           the GPU tests on each, the emulation tests left out (their expectations are
#           the normal build's)
#   python  the PyTorch package (python/) installed into this machine's Python, its
#           tests, GPU ones included (pytest python/tests), and its benchmarks
#           (python/bench: a call's cost above its kernel, seeds 000 and 004)
#   bench   the full benchmark sweep (scripts/bench.sh --full); LESSONS="0[1-4]_*"
#           limits it to some lessons, for machines that cap one command's time
#   extras  PyTorch's rows (scripts/pytorch_rows.py, and scripts/pytorch_covariance.py
#           for lesson 10), the cross-lesson agreement of the cuDNN rows
#           (scripts/cudnn_spread.py), cuBLAS's SGEMM rate, the mma.sync rates, what the
#           timing protocol adds to a kernel (launch_floor), the plots
#   multi   lesson 12 on a machine of several GPUs: its tests (the splits checked bit for
#           bit against one GPU, the sanitizers), its sweep over 2, 4, ... GPUs into
#           multi.csv (commit it as results/<gpu>xN/bench.csv) and the interconnect
#           sweep (exchange_sweep), a timeline of rows_blocking and rows_overlap
#           (scripts/timeline.sh), and a layer larger than one GPU's memory
#           (big_layer, 107 GB over every GPU); one line on one GPU. MULTI="test timeline"
#           runs only those of its parts (test, sweep, timeline, exchange, big), for
#           machines that cap one command's time (the sweep alone takes minutes)
# No stage: all six, starting the sweep's CSVs afresh (bench.csv, multi.csv, and lesson
# 11's frames.csv and 11_sweep.csv). Logs, the CSV and the plots go to $OUT when it is
# set (the device tool's folder), else to build/gpu-check; in $OUT, as summary.txt and
# one archive, gpu-check.tgz, since the tool brings back 8 files at most. Commit the
# CSV as results/<gpu>/bench.csv. A copy of the tree without .git needs the .commit
# file scripts/stamp-commit.sh writes.
set -u
root=$(cd "$(dirname "$0")/.." && pwd)
out=${OUT:-$root/build/gpu-check}
work=$root/build/gpu-check-work
csv=$work/bench.csv
mkdir -p "$out" "$work"
summary=$out/summary.txt
stages=("$@")
multi_csv=$work/multi.csv
[ ${#stages[@]} -gt 0 ] || {
    stages=(test ptx python bench extras multi)
    rm -f "$csv" "$multi_csv" "$work/frames.csv" "$work/11_sweep.csv"
}

if ! nvidia-smi -L >/dev/null 2>&1; then
    echo "gpu-check: no GPU here (nvidia-smi lists none); run it on a GPU machine" | tee -a "$summary"
    exit 77
fi
nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.max.sm --format=csv \
    | tee -a "$summary"
nvcc --version | tail -n 1 | tee -a "$summary"

gpus=$(nvidia-smi -L | wc -l)

# Lesson 12's problems on 2, 4, ... of this machine's GPUs: its presets, then one image
# of 64 -> 64 channels from 256x256 to 4096x4096, where the crossover lies.
# shellcheck disable=SC2317 # called through step
multi_sweep() {
    local n p side rc=0
    for ((n = 2; n <= gpus; n *= 2)); do
        for p in unet-64x64 vtest-c64 wide-8000x4096; do
            echo "== 12_multi_gpu --preset $p --gpus $n"
            "$root/build/bin/12_multi_gpu" --preset "$p" --gpus "$n" --csv "$multi_csv" || rc=1
        done
        for side in 256 384 512 768 1024 2048 4096; do
            echo "== 12_multi_gpu --size ${side}x$side --cin 64 --cout 64 --gpus $n"
            "$root/build/bin/12_multi_gpu" --size "${side}x$side" --cin 64 --cout 64 \
                --gpus "$n" --csv "$multi_csv" || rc=1
        done
    done
    return "$rc"
}

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

step build make -C "$root" build
grep -E "CUDA architectures|cuDNN baseline" "$out/build.log" | tee -a "$summary"
for stage in "${stages[@]}"; do
    case $stage in
    test)
        step test make -C "$root" test
        grep -E "tests passed|tests failed|Failed|\*\*\*" "$out/test.log" | tail -n 40 \
            | tee -a "$summary" ;;
    ptx)
        # The JIT's cache keeps each kernel compiled once for all the tests' processes.
        export CUDA_CACHE_MAXSIZE=4294967296
        for arch in 75 80; do
            step "ptx$arch-build" make -C "$root" build BUILD="build-ptx$arch" \
                ARCH="$arch-virtual"
            step "ptx$arch-test" ctest --test-dir "$root/build-ptx$arch" -L gpu -E "\.emulate\." \
                --output-on-failure -j "$(nproc)"
            grep -E "tests passed|tests failed|Failed|\*\*\*" "$out/ptx$arch-test.log" \
                | tail -n 40 | tee -a "$summary"
        done ;;
    python)
        step python-install python3 -m pip install --no-build-isolation --no-deps "$root/python"
        step python-test python3 -m pytest "$root/python/tests" -v -rs
        tail -n 3 "$out/python-test.log" | tee -a "$summary"
        # What a call costs above its kernel, and the seeds' problems from PyTorch.
        for bench in overhead seed000 seed004_unet; do
            step "python-$bench" python3 "$root/python/bench/$bench.py" --csv "$out/$bench.csv"
            cat "$out/python-$bench.log" >>"$summary"
        done ;;
    bench)
        step "bench${LESSONS:+-part}" "$root/scripts/bench.sh" --full "$root/build" "$work"
        grep -hE "^(==|skipped)|FAIL|warning" "$out"/bench*.log | tail -n 80 >>"$summary" ;;
    extras)
        py=$("$root/scripts/python-env.sh")
        unet="unet-3x64 unet-64x64 unet-64x128 unet-128x128 unet-128x256 unet-256x256
              unet-256x512 unet-512x512 unet-512x1024 unet-1024x1024"
        # shellcheck disable=SC2086 # the presets are a list
        step pytorch python3 "$root/scripts/pytorch_rows.py" --csv "$csv" \
            --lesson-bin "$root/build/bin/07_multichannel" --presets seed000 big3 big5 big7 $unet
        cat "$out/pytorch.log" >>"$summary"
        # Lesson 11's layer, in its own NHWC layout too (torch.channels_last).
        step pytorch_vtest python3 "$root/scripts/pytorch_rows.py" --csv "$csv" \
            --lesson-bin "$root/build/bin/07_multichannel" --presets vtest-c64 vtest-c128 \
            --layouts nchw nhwc
        cat "$out/pytorch_vtest.log" >>"$summary"
        step pytorch_covariance python3 "$root/scripts/pytorch_covariance.py" --csv "$csv" \
            --lesson-bin "$root/build/bin/10_covariance" --presets cov-toy cov-b8c16s16 cov-b4c32s18
        cat "$out/pytorch_covariance.log" >>"$summary"
        step cudnn_spread "$py" "$root/scripts/cudnn_spread.py" "$csv"
        cat "$out/cudnn_spread.log" >>"$summary"
        step sgemm "$root/build/bin/sgemm_rate"
        cat "$out/sgemm.log" >>"$summary"
        step mma_rate "$root/build/bin/mma_rate"
        cat "$out/mma_rate.log" >>"$summary"
        step launch_floor "$root/build/bin/launch_floor"
        cat "$out/launch_floor.log" >>"$summary"
        step plots "$py" "$root/plots/plot.py" "$csv" --out "$work/img"
        [ -s "$work/frames.csv" ] &&
            step plot_frames "$py" "$root/plots/plot_frames.py" "$work/frames.csv" --out "$work/img"
        [ -d "$work/img" ] && tar -czf "$out/plots.tgz" -C "$work" img ;;
    multi)
        if [ "$gpus" -lt 2 ]; then
            echo "multi: one GPU here; lesson 12's splits need two or more" | tee -a "$summary"
            continue
        fi
        parts=" ${MULTI:-test sweep timeline exchange big} "
        if [[ $parts == *" test "* ]]; then
            step multi-test ctest --test-dir "$root/build" -R "^12_multi_gpu\." --output-on-failure
            grep -E "tests passed|tests failed|Failed|\*\*\*" "$out/multi-test.log" | tail -n 20 \
                | tee -a "$summary"
        fi
        if [[ $parts == *" sweep "* ]]; then
            step multi-bench multi_sweep
            grep -E "^(==|skipped)|FAIL" "$out/multi-bench.log" >>"$summary"
        fi
        # The exchange beside the interior: rows_blocking and rows_overlap of the U-Net
        # layer on two GPUs, every kernel traced (scripts/timeline.sh) and drawn.
        if [[ $parts == *" timeline "* ]]; then
            py=$("$root/scripts/python-env.sh")
            for v in rows_blocking rows_overlap; do
                step "timeline-$v" "$root/scripts/timeline.sh" "$work/timeline_$v.csv" \
                    "$root/build/bin/12_multi_gpu" --preset unet-64x64 --gpus 2 --variant "$v" \
                    --reps 5 --warmup 2
                step "timeline-$v-plot" "$py" "$root/plots/timeline.py" "$work/timeline_$v.csv" \
                    "$out/timeline_$v.png"
                cat "$out/timeline-$v-plot.log" >>"$summary"
                cp "$work/timeline_$v.csv" "$out/" 2>/dev/null
            done
        fi
        if [[ $parts == *" exchange "* ]]; then
            step exchange_sweep "$root/build/bin/exchange_sweep"
            cat "$out/exchange_sweep.log" >>"$summary"
        fi
        if [[ $parts == *" big "* ]]; then
            step big_layer "$root/build/bin/big_layer"
            cat "$out/big_layer.log" >>"$summary"
        fi ;;
    *) echo "gpu-check: unknown stage '$stage' (test, ptx, python, bench, extras, multi)"; exit 2 ;;
    esac
done
cp "$csv" "$out/bench.csv" 2>/dev/null
cp "$multi_csv" "$out/multi.csv" 2>/dev/null
cp "$work/frames.csv" "$work/11_sweep.csv" "$out/" 2>/dev/null
echo "gpu-check: $([ $status = 0 ] && echo PASSED || echo FAILED)" | tee -a "$summary"
if [ -n "${OUT:-}" ]; then
    tar -czf "$work/gpu-check.tgz" -C "$out" --exclude=summary.txt . &&
        find "$out" -mindepth 1 ! -name summary.txt -delete &&
        mv "$work/gpu-check.tgz" "$out/"
fi
exit $status
