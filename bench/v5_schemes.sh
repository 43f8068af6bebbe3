#!/usr/bin/env bash
# The v5 schemes against RoPE (docs/performance.md, "The v5 schemes"): the training-step ratios
# (bench_v5_schemes step: every scheme in one process, alternated, three rounds), then one
# evaluation window of 4096 tokens for rope and fire, three rounds, alternating processes so
# that each peak RSS is its own. Prints the machine and the load first and last: the ratios
# are only results on an idle machine.
#   bench/v5_schemes.sh [BUILD=build/release]
set -euo pipefail
cmake --build "${1:-build/release}" --target bench_v5_schemes >/dev/null # not built by default
bin=${1:-build/release}/bench/bench_v5_schemes
echo "# $(lscpu | sed -n 's/^Model name: *//p'), family $(lscpu | sed -n 's/^CPU family: *//p') model $(lscpu | sed -n 's/^Model: *//p'); $(grep -o 'avx2\|fma\|avx512f\|avx512bw\|avx512vl' /proc/cpuinfo | sort -u | tr '\n' ' ')"
echo "# $(git rev-parse --short HEAD), $(nproc) threads, load $(cut -d' ' -f1-3 /proc/loadavg), $(date -u +'%F %H:%M') UTC"
"$bin" step 8 3
for round in 1 2 3; do
  for pe in rope fire; do "$bin" eval "$pe" 4096 3 | sed "s/^/round $round  /"; done
done
echo "# load $(cut -d' ' -f1-3 /proc/loadavg), $(date -u +'%H:%M') UTC"
