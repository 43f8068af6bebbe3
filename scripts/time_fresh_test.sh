#!/usr/bin/env bash
# The wait of a newcomer (issue 66): a fresh clone of COMMIT runs `make test`, timed. Prints the
# machine, the load before and after, the translation units compiled, the slowest tests, and the
# time of the build and of the tests.
#
#   scripts/time_fresh_test.sh [COMMIT]        default HEAD; run from anywhere in the repository
#
# A figure is a result only on an idle machine (load near 0 before and after), and two figures
# compare only from the same machine: time the commit before a change and the one after it in
# a row. JOBS=n is passed to make (default: all cores); KEEP=1 keeps the clone and its log.
set -euo pipefail
cd "$(dirname "$0")/.."
commit=$(git rev-parse --verify "${1:-HEAD}^{commit}")
source scripts/machine.sh # $cpu, load
tmp=$(mktemp -d "${TMPDIR:-/tmp}/poslab-fresh.XXXXXX")
if [ "${KEEP:-0}" = 1 ]; then echo "keeping $tmp"; else trap 'rm -rf "$tmp"' EXIT; fi
git clone -q . "$tmp/poslab"
git -C "$tmp/poslab" checkout -q "$commit"

echo "commit:  $(git log -1 --format='%h %s' "$commit" | cut -c1-100)"
echo "machine: $cpu, family $(lscpu | sed -n 's/^CPU family: *//p') model $(lscpu |
  sed -n 's/^Model: *//p'), $(nproc) cores, $(free -g | awk '/^Mem:/ {print $2}') GiB"
echo "flags:   $(grep -m1 -o -w 'avx2\|fma\|avx512f\|avx512bw\|avx512vl' /proc/cpuinfo | sort -u |
  tr '\n' ' ')(nvcc: $(command -v nvcc || ls /usr/local/cuda/bin/nvcc 2>/dev/null || echo none))"
echo "before:  load average $(cut -d' ' -f1-3 /proc/loadavg), cores busy $(load)"
start=$(date +%s.%N)
status=0
(cd "$tmp/poslab" && make test ${JOBS:+JOBS=$JOBS}) >"$tmp/make_test.log" 2>&1 || status=$?
total=$(awk -v a="$start" -v b="$(date +%s.%N)" 'BEGIN {print b - a}')
echo "after:   load average $(cut -d' ' -f1-3 /proc/loadavg), cores busy $(load)"
tests=$(sed -n 's/^Total Test time (real) = *\([0-9.]*\) sec/\1/p' "$tmp/make_test.log")
echo "compiled: $(grep -c 'Building C[A-Z]* object' "$tmp/make_test.log") translation units" \
  "($(grep -c 'Building C[A-Z]* object tests/' "$tmp/make_test.log") of them tests/)"
echo "slowest tests (s):"
sed '/^---/,$d' "$tmp/poslab/build/release/Testing/Temporary/CTestCostData.txt" 2>/dev/null |
  sort -k3 -g -r | head -8 | awk '{printf "  %7.1f  %s\n", $3, $1}' || true
awk -v t="$total" -v c="${tests:-0}" -v s="$status" 'BEGIN {
  printf "make test: %.0f s (build and packages %.0f s, tests %.0f s), exit status %d\n", t, t - c, c, s }'
[ "$status" = 0 ] || { tail -40 "$tmp/make_test.log"; exit "$status"; }
