# The two commands of the course: `make bench` and `make test`. Both configure,
# build and set up the plotting Python themselves.
BUILD ?= build
JOBS ?= $(shell nproc)
# CMake builds for the GPU nvidia-smi sees (sm_75 without one); `make ARCH=86` overrides.
ARCH ?=
LESSON ?= 05
SIZE_ARGS ?= --size 37x41 --ksize 5 --batch 2 --reps 1 --warmup 0 --no-cudnn
# `make fuzz`: seconds per fuzz target (tests/fuzz/run.sh) and where it builds them.
FUZZ_SECONDS ?= 60
FUZZ_BUILD ?= build-fuzz
ASAN_BUILD ?= build-asan
ASAN_FLAGS := -fsanitize=address,undefined -fno-sanitize-recover=undefined -fno-omit-frame-pointer

CMAKE_ARGS := $(if $(ARCH),-DCMAKE_CUDA_ARCHITECTURES=$(ARCH))
PYTHON = $(shell scripts/python-env.sh)
LESSON_BIN = $(firstword $(wildcard $(BUILD)/bin/$(LESSON)_*))
LESSON_DIR = $(notdir $(firstword $(wildcard lessons/$(LESSON)_*)))

# Every architecture the course promises, compiled only (no GPU needed): sm_75 (T4) to
# sm_120 (RTX 50); lesson 08's wgmma file is built for sm_90a where 90 is in the list.
ALL_ARCHS ?= 75;80;86;89;90;100;120
ALL_ARCHS_BUILD ?= build-allarch

.PHONY: all build lesson test bench plots gpu-check profile sanitize clean fuzz asan compile-all \
	cuda12-check

all: build

build:
	cmake -S . -B $(BUILD) $(CMAKE_ARGS) -DCONV_PYTHON=$(PYTHON)
	cmake --build $(BUILD) -j $(JOBS)

# One lesson alone (`make lesson LESSON=07`): its executable and what it links.
lesson:
	@test -n "$(LESSON_DIR)" || { echo "make lesson: no folder lessons/$(LESSON)_* (LESSON=NN)" >&2; exit 2; }
	cmake -S . -B $(BUILD) $(CMAKE_ARGS) -DCONV_PYTHON=$(PYTHON)
	cmake --build $(BUILD) -j $(JOBS) --target $(LESSON_DIR)

test: build
	ctest --test-dir $(BUILD) --output-on-failure -j $(JOBS)

bench: build
	scripts/bench.sh $(BUILD) $(BUILD)/bench

# Plots of the committed reference results, for the docs: every results chart a page of
# docs/ shows (--shown-in docs: no chart that no page shows), each recording the CSV rows
# it drew; tests/check_plots_fresh.py fails when one no longer matches its CSV.
plots:
	$(PYTHON) plots/plot.py results/*/bench.csv --out docs/img --shown-in docs
	$(PYTHON) plots/course_at_a_glance.py results/h200/bench.csv --out docs/img
	$(PYTHON) plots/04_crossover.py results/h200/bench.csv
	$(PYTHON) plots/12_efficiency.py results/h200x2/bench.csv
	$(PYTHON) plots/timeline.py results/h200x4/timeline_rows_overlap_g2.csv \
	    docs/img/12_timeline_rows_overlap.png --title "rows_overlap, unet-64x64, 2 of 4 H200s"
	$(PYTHON) plots/ladder.py 08
	$(PYTHON) plots/ladder.py 09
	$(PYTHON) plots/plot_frames.py results/h200/11_frames.csv --out docs/img --shown-in docs
	$(PYTHON) plots/compare_gpus.py results/h100/bench.csv results/h200/bench.csv \
	    --out docs/img --shown-in docs --no-table
	python3 tests/check_plots_fresh.py .

gpu-check:
	scripts/gpu-check.sh

profile: build
	ncu --clock-control none --set full -o $(BUILD)/profile-$(LESSON) -f $(LESSON_BIN) --reps 3 --warmup 1 --no-cudnn

sanitize: build
	compute-sanitizer --tool memcheck $(LESSON_BIN) $(SIZE_ARGS)
	compute-sanitizer --tool racecheck $(LESSON_BIN) $(SIZE_ARGS)
	compute-sanitizer --tool synccheck $(LESSON_BIN) $(SIZE_ARGS)

# Each parser's libFuzzer target for FUZZ_SECONDS; a machine without clang's
# libFuzzer skips it with a message (exit 77 of the script) instead of failing.
fuzz:
	tests/fuzz/run.sh $(FUZZ_SECONDS) $(FUZZ_BUILD) || [ $$? -eq 77 ]

# The cpu-labelled tests (unit tests, lesson 01, every lesson's flag and file checks,
# so every lesson is built: about 3 minutes on 2 cores) with AddressSanitizer and
# UndefinedBehaviorSanitizer in the host C code; nvcc builds the kernels as usual.
# protect_shadow_gap=0: the CUDA driver maps memory where ASan would otherwise
# reserve its shadow gap.
asan:
	cmake -S . -B $(ASAN_BUILD) $(CMAKE_ARGS) -DCMAKE_BUILD_TYPE=RelWithDebInfo \
	    -DCONV_NATIVE_CPU=OFF -DCMAKE_C_FLAGS="$(ASAN_FLAGS)" \
	    -DCMAKE_EXE_LINKER_FLAGS="-fsanitize=address,undefined"
	cmake --build $(ASAN_BUILD) -j $(JOBS)
	ASAN_OPTIONS=protect_shadow_gap=0 ctest --test-dir $(ASAN_BUILD) -L cpu --output-on-failure -j $(JOBS)

compile-all:
	cmake -S . -B $(ALL_ARCHS_BUILD) "-DCMAKE_CUDA_ARCHITECTURES=$(ALL_ARCHS)" -DCONV_PYTHON=$(PYTHON)
	cmake --build $(ALL_ARCHS_BUILD) -j $(JOBS)

# The oldest toolkit the course supports, CUDA 12.4, from Debian's packages (fetched
# once into build-cuda12/, 1.3 GB): every lesson built without warnings, the CPU tests.
cuda12-check:
	scripts/cuda12-check.sh build-cuda12

clean:
	rm -rf $(BUILD)
