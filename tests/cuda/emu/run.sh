#!/usr/bin/env bash
# The GPU code paths on the CPU, for a machine without a GPU (`make cuda-emu`): poslab's .cu
# files compiled with g++ against a small emulator of the CUDA runtime (include/), then the
# [cuda] tests of test_cuda run on it, GPU against CPU as on a real GPU. It catches wrong
# indexing, strides, tile bounds, barriers not reached by every thread, shuffles by partial
# warps, the host reading device memory, and bad cuBLAS arguments; not races or speed (see
# include/cuda_runtime.h). Slow: minutes (the emulator runs each GPU thread on the CPU).
# Usage: tests/cuda/emu/run.sh [test_cuda arguments, e.g. "~[slow]"]
# Also builds build/emu/poslab_emu (poslab on the emulator: `--device cuda` runs there).
set -euo pipefail
R=$(cd "$(dirname "$0")/../../.." && pwd)
H=$R/tests/cuda/emu
E=$R/build/emu
mkdir -p "$E/obj" "$E/src" "$E/shadow/tensor" "$E/shadow/nn"
# launches rewritten: the .cuh headers into a folder searched before the tree, the .cu files
rewrite() {
  python3 "$H/rewrite_launches.py" "$1" "$2.tmp"
  if cmp -s "$2.tmp" "$2"; then rm "$2.tmp"; else mv "$2.tmp" "$2"; fi
}
for h in "$R"/tensor/*.cuh "$R"/nn/*.cuh; do rewrite "$h" "$E/shadow/${h#$R/}"; done
srcs=()
for f in "$R"/tensor/*.cu "$R"/nn/*.cu "$R"/posenc/*.cu "$R"/train/*.cu; do
  o=$E/src/$(echo "${f#$R/}" | tr / _).cpp
  rewrite "$f" "$o"
  srcs+=("$o")
done
for f in "$R"/{tensor,autograd,posenc,nn,data,plot,train,study,cli}/*.cpp "$R"/tests/cuda/*.cpp \
  "$R/tests/catch_impl.cpp" "$H/emu_runtime.cpp"; do
  # (the WebAssembly kernel, tensor/sgemm_wasm.cpp, is the explorer's build only; the one-file
  # trainer's main, nn/gpt_reference_main.cpp, its own program)
  case $f in */device_stub.cpp | */cuda_stub.cpp | */cli/main.cpp | */tests/cuda/skip_main.cpp | \
    *_wasm.cpp | */gpt_reference_main.cpp) continue ;; esac
  srcs+=("$f")
done

# objects rebuilt when their source, the emulator or any header of the tree changed
newest=$(find "$R"/{tensor,autograd,posenc,nn,data,plot,train,study,cli,tests/cuda} "$E/shadow" -name '*.h' -o -name '*.cuh' |
  xargs ls -t | head -1)
compile() {
  local obj=$E/obj/$(echo "${1#$R/}" | tr / _).o
  if [ ! -f "$obj" ] || [ "$1" -nt "$obj" ] || [ "$newest" -nt "$obj" ] || [ "$H/include/cuda_runtime.h" -nt "$obj" ]; then
    g++ -std=c++20 -O1 -g -fopenmp -w -I"$H/include" -I"$E/shadow" -I"$R" \
      -I/usr/include/x86_64-linux-gnu -DPOSLAB_SOURCE_DIR="\"$R\"" -c "$1" -o "$obj"
  fi
  echo "$obj"
}
export -f compile
export E R H newest
printf '%s\n' "${srcs[@]}" "$R/cli/main.cpp" | xargs -P "$(nproc)" -I{} bash -c 'compile {}' >"$E/objs.txt"
objs=$(grep -v cli_main.cpp.o "$E/objs.txt")
g++ -fopenmp -rdynamic -o "$E/test_cuda_emu" $objs -lopenblas -ldl
g++ -fopenmp -rdynamic -o "$E/poslab_emu" $(grep -v -E 'tests_(cuda_test_|cuda_main|catch_impl)' "$E/objs.txt") \
  -lopenblas -ldl
g++ -std=c++20 -O2 -shared -fPIC -I"$H/include" "$H/fake_cublas.cpp" -o "$E/libcublas.so.13"
echo "built $E/test_cuda_emu and $E/poslab_emu"
LD_LIBRARY_PATH="$E" OMP_WAIT_POLICY=PASSIVE "$E/test_cuda_emu" "$@"
