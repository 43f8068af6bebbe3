#!/usr/bin/env bash
# Runs every benchmark in bench/ against the build folder given (default build/release).
set -euo pipefail
build=${1:-build/release}
echo "== matmul: the Tensor API against raw cblas_sgemm"
"$build/bench/bench_matmul"
