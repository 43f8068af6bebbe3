#!/usr/bin/env bash
# Runs each libFuzzer target for a bounded time on a copy of its seed corpus, as many at once
# as there are cores (each gets a core of its own for SECONDS), then replays the regression
# inputs. A crash, leak or timeout leaves its input as BUILD_DIR/crash-* (leak-*, timeout-*)
# and fails the run. Usage: scripts/fuzz.sh BUILD_DIR SECONDS
set -euo pipefail
build=$(cd "$1" && pwd)
seconds=${2:-60}
root=$(cd "$(dirname "$0")/.." && pwd)
export ASAN_OPTIONS=detect_leaks=1:allocator_may_return_null=1
targets=(safetensors json corpus args)
logs=$(mktemp -d)
run_one() {
  local t=$1 work
  work=$(mktemp -d)
  cp -r "$root/tests/fuzz/seeds/$t/." "$work/" 2>/dev/null || true
  local rc=0
  (cd "$build" && "./tests/fuzz_$t" -max_total_time="$seconds" -max_len=8192 -timeout=10 \
     -rss_limit_mb=2048 -print_final_stats=1 -artifact_prefix="$build/" "$work" \
     >"$logs/$t.log" 2>&1) || rc=$?
  echo "$rc" >"$logs/$t.rc"
  rm -rf "$work"
}
jobs_max=$(nproc)
for t in "${targets[@]}"; do
  while [ "$(jobs -rp | wc -l)" -ge "$jobs_max" ]; do sleep 1; done
  echo "== fuzz_$t for ${seconds}s"
  run_one "$t" &
done
wait
status=0
for t in "${targets[@]}"; do
  echo "== fuzz_$t"
  grep -E "stat::number_of_executed_units|stat::peak_rss|ERROR|SUMMARY|Done" "$logs/$t.log" || true
  if [ "$(cat "$logs/$t.rc")" != 0 ]; then
    echo "fuzz_$t: exited with status $(cat "$logs/$t.rc")"
    status=1
  fi
  if [ -d "$root/tests/fuzz/regressions/$t" ]; then
    (cd "$build" && "./tests/fuzz_$t" "$root/tests/fuzz/regressions/$t"/* >/dev/null 2>&1) ||
      { echo "fuzz_$t: a regression input fails"; status=1; }
  fi
done
if ls "$build"/crash-* "$build"/timeout-* "$build"/leak-* >/dev/null 2>&1; then
  echo "fuzz: found failing inputs: $(ls "$build"/crash-* "$build"/timeout-* "$build"/leak-* 2>/dev/null)"
  echo "fuzz: keep each in tests/fuzz/regressions/<target>/ once fixed"
  status=1
fi
rm -rf "$logs"
exit $status
