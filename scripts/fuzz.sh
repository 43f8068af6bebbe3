#!/usr/bin/env bash
# Runs each libFuzzer target for a bounded time on a copy of its seed corpus, then replays
# the regression inputs. Usage: scripts/fuzz.sh BUILD_DIR SECONDS
set -euo pipefail
build=$1
seconds=${2:-60}
root=$(cd "$(dirname "$0")/.." && pwd)
export ASAN_OPTIONS=detect_leaks=1:allocator_may_return_null=1
status=0
for t in safetensors json corpus args; do
  work=$(mktemp -d)
  cp -r "$root/tests/fuzz/seeds/$t/." "$work/" 2>/dev/null || true
  echo "== fuzz_$t for ${seconds}s"
  if ! (cd "$build" && "./tests/fuzz_$t" -max_total_time="$seconds" -max_len=8192 -timeout=10 \
        -rss_limit_mb=2048 -print_final_stats=1 "$work" 2>&1 | grep -E "stat::number_of_executed_units|stat::peak_rss|ERROR|SUMMARY|Done"); then
    :
  fi
  if ls "$build"/crash-* "$build"/timeout-* "$build"/leak-* >/dev/null 2>&1; then
    echo "fuzz_$t: found a failing input: $(ls "$build"/crash-* "$build"/timeout-* "$build"/leak-* 2>/dev/null)"
    status=1
  fi
  if [ -d "$root/tests/fuzz/regressions/$t" ]; then
    (cd "$build" && "./tests/fuzz_$t" "$root/tests/fuzz/regressions/$t"/* >/dev/null 2>&1) || { echo "fuzz_$t: a regression input fails"; status=1; }
  fi
  rm -rf "$work"
done
exit $status
