# poslab's front door. On a fresh Debian machine:
#   make test          install what is missing, build (Release), run every test
#   make experiments   install what is missing, build, run the whole study -> results/REPORT.md
# Also: make experiments-quick, make bench, make debug, make sanitize, make format, make clean.
# Overrides: STEPS=n DEVICE=cpu|cuda JOBS=n
JOBS    ?= $(shell nproc)
BUILD   ?= build/release
CMAKE   ?= cmake
STEPS   ?=
DEVICE  ?= cpu
export OMP_WAIT_POLICY ?= PASSIVE

.PHONY: all deps build test experiments experiments-quick bench debug sanitize format clean

all: build

deps:
	@scripts/deps.sh

$(BUILD)/CMakeCache.txt: | deps
	$(CMAKE) -S . -B $(BUILD) -DCMAKE_BUILD_TYPE=Release

build: deps $(BUILD)/CMakeCache.txt
	$(CMAKE) --build $(BUILD) -j $(JOBS)

test: build
	cd $(BUILD) && ctest --output-on-failure -j $(JOBS)

experiments: build
	$(BUILD)/train/poslab experiments --out results --device $(DEVICE) $(if $(STEPS),--steps $(STEPS))

experiments-quick: build
	$(BUILD)/train/poslab experiments --quick --out results-quick --device $(DEVICE) $(if $(STEPS),--steps $(STEPS))

bench: build
	scripts/bench.sh $(BUILD)

debug: deps
	$(CMAKE) -S . -B build/debug -DCMAKE_BUILD_TYPE=Debug
	$(CMAKE) --build build/debug -j $(JOBS)
	cd build/debug && ctest --output-on-failure -j $(JOBS)

sanitize: deps
	$(CMAKE) -S . -B build/sanitize -DCMAKE_BUILD_TYPE=RelWithDebInfo -DPOSLAB_SANITIZE=ON -DPOSLAB_CUDA=OFF
	$(CMAKE) --build build/sanitize -j $(JOBS)
	cd build/sanitize && ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=print_stacktrace=1 ctest --output-on-failure -j $(JOBS)

format:
	git ls-files '*.cpp' '*.h' '*.cu' | xargs clang-format -i

clean:
	rm -rf build
