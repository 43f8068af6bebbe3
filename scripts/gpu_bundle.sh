#!/usr/bin/env bash
# `make gpu-bundle`: packs what scripts/gpu_check.sh needs on a GPU machine that has CUDA's
# driver and PyTorch but not our Debian packages (OpenBLAS, Catch2, libpython3.11-stdlib), into one
# compressed file, .gpu/bundle.tar.xz (git-ignored; carried to the GPU machine):
#   bin/   poslab, test_cuda, bench_train_step, bench_eval_long, bench_fma_peak (built by the
#          make target: x86-64-v3 code, the AVX-512 sgemm kernels picked at run time)
#   bin/v4/ bench_train_step, bench_eval_long, bench_fma_peak built for x86-64-v4 (AVX-512
#          everywhere, no CUDA) from CPU_BUILD when it is given: `gpu_check.sh cpu` benchmarks
#          the GPU machine's host CPU with them, as a build for an AVX-512 machine runs there
#   lib/   the shared libraries they load that are not part of a base system: OpenBLAS and
#          its Fortran runtime, libgomp. Not cuBLAS: gpu_check.sh finds libcublas.so.13 on
#          the GPU machine (CUDA toolkit or the nvidia-cublas pip package that PyTorch uses).
#          lib/tcmalloc/: Debian's libtcmalloc_minimal.so.4, for PyTorch's tcmalloc setting
#          (LD_PRELOAD) in `gpu_check.sh cpu`, when it is installed here.
#   data/  the prepared corpus the study trains on, pystdlib (docs/formats.md), which it would
#          otherwise build from Debian's libpython3.11-minimal and -stdlib packages.
# Usage: [CPU_BUILD=DIR] scripts/gpu_bundle.sh BUILD_DIR [OUT_DIR=.gpu]
set -euo pipefail
build=${1:?usage: gpu_bundle.sh BUILD_DIR [OUT_DIR]}
out=${2:-.gpu}
stage=$(mktemp -d "${TMPDIR:-/tmp}/poslab-bundle.XXXXXX")
trap 'rm -rf "$stage"' EXIT
mkdir -p "$stage/bin" "$stage/lib" "$stage/data" "$out"

bins=("$build/train/poslab" "$build/tests/test_cuda" "$build/bench/bench_train_step"
      "$build/bench/bench_eval_long" "$build/bench/bench_fma_peak")
for b in "${bins[@]}"; do
  [ -x "$b" ] || { echo "gpu_bundle: $b is missing; run make gpu-bundle" >&2; exit 1; }
  cp "$b" "$stage/bin/"
  strip --strip-unneeded "$stage/bin/$(basename "$b")"
done

if [ -n "${CPU_BUILD:-}" ]; then
  mkdir -p "$stage/bin/v4"
  for b in bench_train_step bench_eval_long bench_fma_peak; do
    [ -x "$CPU_BUILD/bench/$b" ] || { echo "gpu_bundle: $CPU_BUILD/bench/$b is missing" >&2; exit 1; }
    cp "$CPU_BUILD/bench/$b" "$stage/bin/v4/"
    strip --strip-unneeded "$stage/bin/v4/$b"
  done
fi
tcmalloc=$(find /usr/lib/*-linux-gnu -maxdepth 1 -name libtcmalloc_minimal.so.4 2>/dev/null | head -1)
if [ -n "$tcmalloc" ]; then mkdir -p "$stage/lib/tcmalloc" && cp -L "$tcmalloc" "$stage/lib/tcmalloc/"; fi

# Libraries every Linux has (glibc, the C++ runtime of the system compiler) stay out; the
# rest is copied under its soname, symlinks resolved.
base='^(linux-vdso|ld-linux|libc|libm|libdl|librt|libpthread|libstdc\+\+|libgcc_s)\.so'
for b in "${bins[@]}"; do ldd "$b"; done | awk '$2 == "=>" && $3 ~ /^\// {print $1, $3}' |
  sort -u | while read -r soname path; do
    if [[ $soname =~ $base ]]; then continue; fi
    if [[ $soname == libcuda.so* || $soname == libcublas* ]]; then continue; fi
    cp -L "$path" "$stage/lib/$soname"
  done

for corpus in pystdlib; do
  "$build/train/poslab" prepare --corpus "$corpus" --out "$stage/data/$corpus" >/dev/null
done

{
  echo "poslab GPU bundle"
  echo "commit: $(git rev-parse HEAD 2>/dev/null || echo unknown)$(git diff --quiet 2>/dev/null || echo ' (with uncommitted changes)')"
  echo "built: $(date -u '+%Y-%m-%d %H:%M UTC') on $(uname -m), CUDA architectures: $(grep -m1 '^CMAKE_CUDA_ARCHITECTURES' "$build/CMakeCache.txt" | cut -d= -f2)"
  (cd "$stage" && find . -type f -printf '%8s  %p\n' | sort -k2)
} > "$stage/MANIFEST"
cp "$stage/MANIFEST" "$out/MANIFEST"
tar -C "$stage" -cf - . | xz -T2 -6 > "$out/bundle.tar.xz"
echo "gpu_bundle: $out/bundle.tar.xz ($(du -h "$out/bundle.tar.xz" | cut -f1)); contents in $out/MANIFEST"
