# poslab's front door. On a fresh Debian machine:
#   make test          install what is missing, build (Release), run every test
#   make gradcheck     gradient-check each encoding: one table per encoding, non-zero on failure
#   make experiments   install what is missing, build, run the whole study -> results/REPORT.md
#   make demo          build, then train the small Chinese models of the guide (docs/guide.zh.md)
#   make guide-figures  make demo, then every figure of the guides into docs/guide/, in English
#                      (NAME.svg) and Chinese (NAME.zh.svg), from the same code and numbers
#   make reference     one training step of a tiny model through the plain loops of
#                      nn/gpt_reference.cpp and through the framework: both losses, the gradients'
#                      differences (PE=none|learned|sinusoidal|rope|alibi|t5|kerple|fire|xpos,
#                      EMBEDDING=gpt2|scaled)
#   make reference-train  nn/gpt_reference.cpp alone (standard library only, g++) trains the demo's
#                      model on a prepared corpus and prints its loss curve, the numbers of
#                      poslab train's log.csv (PE=..., EMBEDDING=..., CORPUS=fortunes-zh, STEPS=200)
#   make explorer      build poslab for the browser (emscripten) into docs/explorer/ and serve it
#                      at the address it prints (docs/explorer.md; PORT=n)
# Also: make experiments-quick, make bench, make test-portable, make debug, make sanitize,
# make format, make clean,
# make gpu-bundle (the binaries scripts/gpu_check.sh runs on a GPU machine), make cuda-emu (the
# GPU tests on a CPU emulator of CUDA).
# Overrides: STEPS=n DEVICE=cpu|cuda JOBS=n (build) STUDY_JOBS=n (runs of the study made at once)
# SCALE=large (make experiments: the same study at 2 B and 5 seeds, for a GPU or many machines,
# into results-large/; its expected time is printed first)
# The full study takes hours on 2 cores: `make experiments` continues from the finished runs
# kept in docs/results/runs (scripts/study_archive.sh keeps them; docs/cli.md).
JOBS    ?= $(shell nproc)
BUILD   ?= build/release
CMAKE   ?= cmake
STEPS   ?=
DEVICE  ?= cpu
STUDY_JOBS ?=
SCALE   ?=
# Our programs' idle OpenMP threads spin briefly, then sleep (GOMP_SPINCOUNT, far below libgomp's
# default): a step is hundreds of parallel regions, too many to sleep at once in each, and a
# long spin takes the core another program needs (bench/wait_policy.sh compares the policies).
# Either variable set in the environment wins. The tests, several programs at once, sleep at
# once (OMP_WAIT_POLICY=PASSIVE, TEST_ENV).
ifeq ($(origin OMP_WAIT_POLICY)$(origin GOMP_SPINCOUNT),undefinedundefined)
export GOMP_SPINCOUNT = 1000
TEST_ENV = env -u GOMP_SPINCOUNT OMP_WAIT_POLICY=PASSIVE
endif

FUZZ_SECONDS ?= 60
.PHONY: all deps deps-torch build test gradcheck reference reference-train test-portable demo guide-figures experiments experiments-quick bench \
	debug sanitize fuzz format clean gpu-bundle cuda-emu explorer

all: build

deps:
	@scripts/deps.sh

# Installs PyTorch too: the reference the tests check our evaluation against, the benchmark's
# baseline.
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

# One training step of a tiny f64 model through the whole-model reference (nn/gpt_reference.cpp,
# plain loops) and through GPT::loss and backward(): the two losses and, per parameter, the
# largest gradient difference. Non-zero when they differ.
PE ?= rope
EMBEDDING ?= gpt2
reference: deps $(BUILD)/CMakeCache.txt
	$(CMAKE) --build $(BUILD) -j $(JOBS) --target reference_step
	$(BUILD)/tests/reference_step --pe $(PE) --embedding $(EMBEDDING)

# The one-file trainer: nn/gpt_reference.cpp and its main compiled alone, without the framework,
# then trained as scripts/demo.sh trains runs/demo-zh-$(PE) (the same flags and seed: the same
# losses, to f32's rounding). The corpus is prepared first if data/$(CORPUS) lacks it (with
# poslab, built for that).
CORPUS ?= fortunes-zh
reference-train:
	@mkdir -p $(BUILD)
	g++ -std=c++20 -O2 nn/gpt_reference.cpp nn/gpt_reference_main.cpp -o $(BUILD)/reference_train
	@[ -f data/$(CORPUS)/vocab.json ] || { $(MAKE) build && \
	  $(BUILD)/train/poslab prepare --corpus $(CORPUS) --out data/$(CORPUS); }
	$(BUILD)/reference_train --data data/$(CORPUS) --pe $(PE) --embedding $(EMBEDDING) --d 64 \
	  --layers 2 --heads 4 --ctx 64 --batch 16 --lr 3e-3 --steps $(or $(STEPS),200)

# The build an AVX2 machine makes (-march=x86-64-v3: AVX2 + FMA; plain x86-64 on a CPU without
# AVX2), without CUDA, into build/portable. It runs every test with POSLAB_ISA=avx2 (our AVX2
# kernels; on an AVX-512 CPU, the code path make test does not take) but the guides' commands,
# whose digits only the native build reproduces (tests/docs/test_guide.cpp); then the core tests
# again with POSLAB_ISA=generic (OpenBLAS and plain loops, no kernel of ours). Code generation
# for plain x86-64 (no -march at all) is built and tested by make sanitize. One build, not
# two: builds are most of CI's time. Its files are compiled one by one (no unity build), so that
# each source keeps compiling alone.
PORTABLE_BUILD ?= build/portable
PORTABLE_MARCH := $(shell grep -qw avx2 /proc/cpuinfo && echo x86-64-v3 || echo x86-64)
AVX2_BUILD ?= build/avx2
AVX2_FLAGS = -DCMAKE_BUILD_TYPE=Release -DPOSLAB_NATIVE=OFF -DPOSLAB_CUDA=OFF \
  "-DCMAKE_CXX_FLAGS=-march=x86-64-v3 -mtune=native"
test-portable: deps-torch
	$(CMAKE) -S . -B $(PORTABLE_BUILD) -DCMAKE_BUILD_TYPE=Release -DPOSLAB_NATIVE=OFF \
	  -DPOSLAB_CUDA=OFF -DPOSLAB_UNITY=OFF -DCMAKE_CXX_FLAGS=-march=$(PORTABLE_MARCH)
	$(CMAKE) --build $(PORTABLE_BUILD) -j $(JOBS) --target poslab_tests
	@echo "== $(PORTABLE_BUILD) (-march=$(PORTABLE_MARCH)): every test with POSLAB_ISA=avx2"
	cd $(PORTABLE_BUILD) && $(TEST_ENV) POSLAB_ISA=avx2 ctest --output-on-failure -j $(JOBS) \
	  -E test_docs_guide
	@echo "== $(PORTABLE_BUILD): the core tests with POSLAB_ISA=generic"
	cd $(PORTABLE_BUILD) && $(TEST_ENV) POSLAB_ISA=generic ctest --output-on-failure -j $(JOBS) \
	  -R 'test_(tensor|autograd|posenc|nn|train)$$'

# The explorer (docs/explorer.md): poslab's inference compiled to WebAssembly by Debian's emscripten
# into build/wasm, the site in docs/explorer/, served on 127.0.0.1 until Ctrl-C (scripts/explorer.sh).
explorer:
	JOBS=$(JOBS) scripts/explorer.sh

experiments: build
	$(BUILD)/train/poslab experiments $(if $(SCALE),--scale $(SCALE)) --device $(DEVICE) \
	  $(if $(STEPS),--steps $(STEPS)) $(if $(STUDY_JOBS),--jobs $(STUDY_JOBS))

# Trains the guide's models (scripts/demo.sh): fortunes-zh, four runs of d = 64, 2 layers.
# DEMO_STEPS=n trains them longer or shorter.
DEMO_STEPS ?= 200
demo: build
	scripts/demo.sh $(BUILD)/train/poslab $(DEMO_STEPS)

# The guides' figures, both languages (scripts/guide_figures.sh): the formulas' figures and the
# attention maps of the demo models; tests/cli/test_guide_figures.cpp checks what it writes.
guide-figures: demo
	scripts/guide_figures.sh $(BUILD)/train/poslab

experiments-quick: demo
	$(BUILD)/train/poslab experiments --quick --out results-quick --device $(DEVICE) $(if $(STEPS),--steps $(STEPS)) \
	  $(if $(STUDY_JOBS),--jobs $(STUDY_JOBS))

# Times poslab against PyTorch and each benchmark of bench/ (scripts/bench.sh), after building
# them (poslab_bench: not in the default build); its summary ends with the table of
# docs/performance.md. BENCH_ISA=avx2 emulates an AVX2-only machine on an
# AVX-512 one: both programs built or capped for AVX2 (build/avx2, x86-64-v3).
BENCH_ISA ?= native
ifeq ($(BENCH_ISA),avx2)
bench: deps-torch
	$(CMAKE) -S . -B $(AVX2_BUILD) $(AVX2_FLAGS)
	$(CMAKE) --build $(AVX2_BUILD) -j $(JOBS) --target poslab_bench
	BENCH_ISA=avx2 scripts/bench.sh $(AVX2_BUILD)
else
bench: build deps-torch
	$(CMAKE) --build $(BUILD) -j $(JOBS) --target poslab_bench
	scripts/bench.sh $(BUILD)
endif

debug: deps
	$(CMAKE) -S . -B build/debug -DCMAKE_BUILD_TYPE=Debug
	$(CMAKE) --build build/debug -j $(JOBS)
	cd build/debug && $(TEST_ENV) ctest --output-on-failure -j $(JOBS)

# Builds the CPU code (no CUDA: the driver's mappings and allocations confuse ASan and
# LeakSanitizer) with ASan and UBSan into build/sanitize and runs every C++ test program under
# them (not the PyTorch reference check nor the explorer's browser test, which make test runs).
sanitize: deps
	$(CMAKE) -S . -B build/sanitize -DCMAKE_BUILD_TYPE=RelWithDebInfo -DPOSLAB_SANITIZE=ON -DPOSLAB_CUDA=OFF
	$(CMAKE) --build build/sanitize -j $(JOBS) --target poslab_tests
	cd build/sanitize && $(TEST_ENV) ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=print_stacktrace=1 ctest --output-on-failure -j $(JOBS) \
	  -E 'reference_pytorch|explorer_browser'

# libFuzzer (clang) on the file readers and the flag parser, FUZZ_SECONDS each; crashes land
# in build/fuzz/crash-* and become regression inputs in tests/fuzz/regressions/.
fuzz:
	@POSLAB_FUZZ=1 scripts/deps.sh
	$(CMAKE) -S . -B build/fuzz -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCMAKE_C_COMPILER=clang \
	  -DCMAKE_CXX_COMPILER=clang++ -DPOSLAB_FUZZ=ON -DPOSLAB_NATIVE=OFF -DPOSLAB_CUDA=OFF
	$(CMAKE) --build build/fuzz -j $(JOBS) --target fuzz_safetensors fuzz_json fuzz_corpus fuzz_args
	scripts/fuzz.sh build/fuzz $(FUZZ_SECONDS)

# Builds what scripts/gpu_check.sh runs on a GPU machine without our Debian packages: the CUDA
# binaries (sm_80 + sm_90, a portable CPU target) and the CPU benchmarks for AVX-512
# (x86-64-v4, for `gpu_check.sh cpu`), packed with their libraries and the prepared corpora
# into .gpu/bundle.tar.xz.
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

# Runs the [cuda] tests without a GPU: the .cu files compiled with g++ against a CPU emulator of
# the CUDA runtime (tests/cuda/emu/run.sh). EMU_TESTS selects tests, e.g. "~[slow]".
EMU_TESTS ?=
cuda-emu: deps
	tests/cuda/emu/run.sh $(EMU_TESTS)

format:
	git ls-files '*.cpp' '*.h' '*.cu' '*.cuh' | xargs clang-format -i

clean:
	rm -rf build
