# poslab's front door. On a fresh Debian machine:
#   make test          install what is missing, build (Release), run every test
#   make gradcheck     gradient-check each encoding: one table per encoding, non-zero on failure
#   make experiments   install what is missing, build, run the whole study -> results/REPORT.md
#   make demo          build, then train the small Chinese models of the guide (docs/guide.zh.md)
# Also: make experiments-quick, make bench, make test-portable, make debug, make sanitize,
# make format, make clean,
# make gpu-bundle (the binaries scripts/gpu_check.sh runs on a GPU machine), make cuda-emu (the
# GPU tests on a CPU emulator of CUDA).
# Overrides: STEPS=n DEVICE=cpu|cuda JOBS=n (build) STUDY_JOBS=n (runs of the study made at once)
# SCALE=large (make experiments: the same study trained to convergence, for a GPU or many
# cores, into results-large/; its expected time is printed first)
JOBS    ?= $(shell nproc)
BUILD   ?= build/release
CMAKE   ?= cmake
STEPS   ?=
DEVICE  ?= cpu
STUDY_JOBS ?=
SCALE   ?=
# OpenMP's idle threads spin 1,000 turns of libgomp's wait loop, then sleep (GOMP_SPINCOUNT;
# libgomp's default is 300,000, OMP_WAIT_POLICY=PASSIVE sleeps at once). bench/wait_policy.sh,
# 2 threads on 2 cores: with the cores idle, 0.93-0.98x the default's tokens/s and 1.14-1.48x
# PASSIVE's (a step is hundreds of parallel regions, and PASSIVE pays a wake-up in each); with
# one core busy, 1.5-1.6x the default's (whose spinning threads take the core the other
# program needs) and 0.82-1.0x PASSIVE's. Either variable set in the environment wins.
# ctest runs several test programs at once, each with a thread per core: a busy machine, so
# the tests keep PASSIVE (TEST_ENV).
ifeq ($(origin OMP_WAIT_POLICY)$(origin GOMP_SPINCOUNT),undefinedundefined)
export GOMP_SPINCOUNT = 1000
TEST_ENV = env -u GOMP_SPINCOUNT OMP_WAIT_POLICY=PASSIVE
endif

FUZZ_SECONDS ?= 60
.PHONY: all deps deps-torch build test gradcheck test-portable demo experiments experiments-quick bench \
	debug sanitize fuzz format clean gpu-bundle cuda-emu

all: build

deps:
	@scripts/deps.sh

# PyTorch too: the reference the tests check our evaluation against, the benchmark's baseline.
deps-torch:
	@POSLAB_TORCH=1 scripts/deps.sh

$(BUILD)/CMakeCache.txt: | deps
	$(CMAKE) -S . -B $(BUILD) -DCMAKE_BUILD_TYPE=Release

build: deps $(BUILD)/CMakeCache.txt
	$(CMAKE) --build $(BUILD) -j $(JOBS)

test: build deps-torch
	cd $(BUILD) && $(TEST_ENV) ctest --output-on-failure -j $(JOBS)

# Gradient-checks every encoding (and the ops below them) against central finite differences
# in f64, and prints one table per encoding; exits non-zero on a failure.
gradcheck: deps $(BUILD)/CMakeCache.txt
	$(CMAKE) --build $(BUILD) -j $(JOBS) --target gradcheck
	$(BUILD)/tests/gradcheck

# The portable build: plain x86-64 (SSE2, no -march=native) with POSLAB_ISA=generic (no
# hand-written vector kernel: OpenBLAS multiplies, every loop as the compiler made it for any
# x86-64 CPU). Then, on a CPU with AVX-512, the AVX2 code path that `make test` runs on an AVX2
# machine but an AVX-512 one would otherwise never run: a build for AVX2 (x86-64-v3, as
# -march=native compiles on an AVX2 CPU, so the compiler's own loops are AVX2 code too) with
# POSLAB_ISA=avx2 (the AVX2 sgemm kernel). The PyTorch reference check and the study's tests,
# minutes long, run in the first pass only. Each build makes only what its tests run (the
# portable one: poslab_tests, every test program and no benchmark), as does make sanitize.
PORTABLE_BUILD ?= build/portable
AVX2_BUILD ?= build/avx2
AVX2_FLAGS = -DCMAKE_BUILD_TYPE=Release -DPOSLAB_NATIVE=OFF -DPOSLAB_CUDA=OFF \
  "-DCMAKE_CXX_FLAGS=-march=x86-64-v3 -mtune=native"
test-portable: deps-torch
	$(CMAKE) -S . -B $(PORTABLE_BUILD) -DCMAKE_BUILD_TYPE=Release -DPOSLAB_NATIVE=OFF \
	  -DPOSLAB_CUDA=OFF -DCMAKE_CXX_FLAGS=-march=x86-64
	$(CMAKE) --build $(PORTABLE_BUILD) -j $(JOBS) --target poslab_tests
	cd $(PORTABLE_BUILD) && $(TEST_ENV) POSLAB_ISA=generic ctest --output-on-failure -j $(JOBS)
	@if grep -qw avx512f /proc/cpuinfo; then \
	  echo "== an AVX2 build with POSLAB_ISA=avx2 (this CPU has AVX-512, so make test did not run them)"; \
	  $(CMAKE) -S . -B $(AVX2_BUILD) $(AVX2_FLAGS) && \
	  $(CMAKE) --build $(AVX2_BUILD) -j $(JOBS) --target poslab test_tensor test_autograd \
	    test_posenc test_nn test_train && \
	  cd $(AVX2_BUILD) && $(TEST_ENV) POSLAB_ISA=avx2 ctest --output-on-failure -j $(JOBS) \
	    -R 'test_(tensor|autograd|posenc|nn|train)'; \
	else echo "== no AVX-512 here: make test already ran the AVX2 code path"; fi

experiments: build
	$(BUILD)/train/poslab experiments $(if $(SCALE),--scale $(SCALE)) --device $(DEVICE) \
	  $(if $(STEPS),--steps $(STEPS)) $(if $(STUDY_JOBS),--jobs $(STUDY_JOBS))

# The guide's models (scripts/demo.sh): fortunes-zh, four runs of d = 64, 2 layers, under a
# minute on 2 cores. DEMO_STEPS=n trains them longer or shorter.
DEMO_STEPS ?= 200
demo: build
	scripts/demo.sh $(BUILD)/train/poslab $(DEMO_STEPS)

experiments-quick: demo
	$(BUILD)/train/poslab experiments --quick --out results-quick --device $(DEVICE) $(if $(STEPS),--steps $(STEPS)) \
	  $(if $(STUDY_JOBS),--jobs $(STUDY_JOBS))

# BENCH_ISA=avx2 emulates an AVX2-only machine on an AVX-512 one: a build compiled for AVX2
# (x86-64-v3, tuned for this CPU), as -march=native compiles on an AVX2 machine, so that every
# loop the compiler vectorises runs AVX2 code too, not only the sgemm kernel POSLAB_ISA picks.
BENCH_ISA ?= native
ifeq ($(BENCH_ISA),avx2)
bench: deps-torch
	$(CMAKE) -S . -B $(AVX2_BUILD) $(AVX2_FLAGS)
	$(CMAKE) --build $(AVX2_BUILD) -j $(JOBS)
	BENCH_ISA=avx2 scripts/bench.sh $(AVX2_BUILD)
else
bench: build deps-torch
	scripts/bench.sh $(BUILD)
endif

debug: deps
	$(CMAKE) -S . -B build/debug -DCMAKE_BUILD_TYPE=Debug
	$(CMAKE) --build build/debug -j $(JOBS)
	cd build/debug && $(TEST_ENV) ctest --output-on-failure -j $(JOBS)

# Sanitizers are built without CUDA: ASan protects the "shadow gap", an address range the CUDA
# driver maps memory into (it would need ASAN_OPTIONS=protect_shadow_gap=0), and LeakSanitizer
# reports the driver's own allocations as leaks. The CPU code is what they check. The PyTorch
# reference check (Python driving poslab eval for minutes) runs in make test and make
# test-portable; under the sanitizers every C++ test binary runs.
sanitize: deps
	$(CMAKE) -S . -B build/sanitize -DCMAKE_BUILD_TYPE=RelWithDebInfo -DPOSLAB_SANITIZE=ON -DPOSLAB_CUDA=OFF
	$(CMAKE) --build build/sanitize -j $(JOBS) --target poslab_tests
	cd build/sanitize && $(TEST_ENV) ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=print_stacktrace=1 ctest --output-on-failure -j $(JOBS) \
	  -E reference_pytorch

# libFuzzer (clang) on the file readers and the flag parser, FUZZ_SECONDS each; crashes land
# in build/fuzz/crash-* and become regression inputs in tests/fuzz/regressions/.
fuzz:
	@POSLAB_FUZZ=1 scripts/deps.sh
	$(CMAKE) -S . -B build/fuzz -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCMAKE_C_COMPILER=clang \
	  -DCMAKE_CXX_COMPILER=clang++ -DPOSLAB_FUZZ=ON -DPOSLAB_NATIVE=OFF -DPOSLAB_CUDA=OFF
	$(CMAKE) --build build/fuzz -j $(JOBS) --target fuzz_safetensors fuzz_json fuzz_corpus fuzz_args
	scripts/fuzz.sh build/fuzz $(FUZZ_SECONDS)

# The GPU check (scripts/gpu_check.sh) runs on a machine with a GPU but without our Debian
# packages: build the CUDA binaries here (Release, sm_80 + sm_90, a portable CPU target rather
# than -march=native) and pack them, their libraries and the prepared corpus into
# .gpu/bundle.tar.xz; with them the CPU benchmarks built for AVX-512 (x86-64-v4), with which
# `gpu_check.sh cpu` measures the GPU machine's host CPU against PyTorch.
GPU_BUILD ?= build/gpu
GPU_CPU_BUILD ?= build/cpu-v4
gpu-bundle: deps
	$(CMAKE) -S . -B $(GPU_BUILD) -DCMAKE_BUILD_TYPE=Release -DPOSLAB_CUDA=ON -DPOSLAB_NATIVE=OFF \
	  -DCMAKE_CXX_FLAGS=-march=x86-64-v3 -DCMAKE_CUDA_ARCHITECTURES="80-real;90"
	$(CMAKE) --build $(GPU_BUILD) -j $(JOBS) --target poslab test_cuda bench_train_step bench_eval_long bench_fma_peak
	$(CMAKE) -S . -B $(GPU_CPU_BUILD) -DCMAKE_BUILD_TYPE=Release -DPOSLAB_CUDA=OFF -DPOSLAB_NATIVE=OFF \
	  -DCMAKE_CXX_FLAGS=-march=x86-64-v4
	$(CMAKE) --build $(GPU_CPU_BUILD) -j $(JOBS) --target bench_train_step bench_eval_long bench_fma_peak
	CPU_BUILD=$(GPU_CPU_BUILD) scripts/gpu_bundle.sh $(GPU_BUILD) .gpu

# The [cuda] tests without a GPU: the .cu files compiled with g++ against a CPU emulator of the
# CUDA runtime (tests/cuda/emu/run.sh; minutes). EMU_TESTS selects tests, e.g. "~[slow]".
EMU_TESTS ?=
cuda-emu: deps
	tests/cuda/emu/run.sh $(EMU_TESTS)

format:
	git ls-files '*.cpp' '*.h' '*.cu' '*.cuh' | xargs clang-format -i

clean:
	rm -rf build
