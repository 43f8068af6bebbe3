#!/usr/bin/env bash
# wait_policy.sh — how long OpenMP's idle threads should spin before they sleep, measured on
# this machine: the Makefile's choice (GOMP_SPINCOUNT=1000) against the two usual ones.
#
# A training step is a few hundred parallel regions (products, element-wise ops), back to
# back. Between two regions a thread that has finished waits for the next: libgomp lets it
# spin GOMP_SPINCOUNT times and then sleep on a futex (its manual, "GOMP_SPINCOUNT"):
#   OMP_WAIT_POLICY=PASSIVE   sleep at once: every region pays a wake-up (a system call,
#                             on a VM an exit to the hypervisor)
#   GOMP_SPINCOUNT=1000       spin 1,000 turns of the loop first, then sleep (the Makefile's)
#   libgomp's default         spin 300,000 times first: with the cores idle the fastest, but
#                             a spinning thread takes the core from any other program, and
#                             when another program holds a core our threads wait on it
# Each policy trains two models with 2 threads (all cores when there are 2), idle and then
# with one core busy (a shell loop):
#   canonical   bench_train_step: d=128, 4 layers, T=256, batch 16 (12 steps)
#   demo        `poslab train` of make demo's model: d=64, 2 layers, T=64, batch 16, on the
#               fortunes-zh corpus (200 steps); tokens/s from its log.csv
# ROUNDS rounds (default 3), the policies alternating; tokens/s per round, then the medians.
# The CPU and the cores busy with other work before each round are printed beside them.
# Usage: bench/wait_policy.sh [build]
set -euo pipefail
build=${1:-build/release}
poslab=$build/train/poslab
cmake --build "$build" --target poslab bench_train_step >/dev/null # bench/: not built by default
rounds=${ROUNDS:-3}
threads=${THREADS:-2}
tmp=$(mktemp -d)
busy_pid=
trap '[ -n "$busy_pid" ] && kill "$busy_pid" 2>/dev/null; rm -rf "$tmp"' EXIT
source "$(dirname "$0")/../scripts/machine.sh" # $cpu, load
"$poslab" prepare --corpus fortunes-zh --out "$tmp/data" >/dev/null
policies="OMP_WAIT_POLICY=PASSIVE GOMP_SPINCOUNT=1000 default"

run() { # policy program... (a clean environment: only PATH, HOME and the policy)
  local p=$1
  shift
  [ "$p" = default ] && p=
  env -i PATH="$PATH" HOME="$HOME" OMP_NUM_THREADS="$threads" $p "$@"
}
canonical() { run "$1" "$build/bench/bench_train_step" 12 16 cpu none 2>&1 | awk 'NR > 1 {print $2}'; }
demo() {
  run "$1" "$poslab" train --data "$tmp/data" --d 64 --layers 2 --heads 4 --ctx 64 --batch 16 \
    --lr 3e-3 --steps 200 --quiet --out "$tmp/demo" --force >/dev/null 2>&1
  tail -1 "$tmp/demo/log.csv" | cut -d, -f6 # tokens_per_s
}

echo "== $(date -u '+%Y-%m-%d %H:%M UTC'), $cpu, $(nproc) cores, $threads threads"
: >"$tmp/all"
for busy in idle busy; do
  if [ "$busy" = busy ]; then
    (while :; do :; done) &
    busy_pid=$!
  fi
  for r in $(seq 1 "$rounds"); do
    echo "== $busy, round $r (cores busy with other work before it: $(load))"
    for p in $policies; do
      c=$(canonical "$p")
      d=$(demo "$p")
      printf '%-24s canonical %7s tokens/s   demo %7s tokens/s\n' "$p" "$c" "$d"
      echo "$busy $p $c $d" >>"$tmp/all"
    done
  done
  if [ -n "$busy_pid" ]; then
    kill "$busy_pid"
    wait "$busy_pid" 2>/dev/null || true
    busy_pid=
  fi
done

echo "== medians (range) of $rounds rounds, tokens/s"
echo "| machine | policy | canonical | demo |"
echo "|---|---|---|---|"
for busy in idle busy; do
  for p in $policies; do
    for col in 3 4; do
      awk -v b="$busy" -v p="$p" -v c="$col" '$1 == b && $2 == p {print $c}' "$tmp/all" |
        sort -n | awk '{v[NR] = $1} END {printf "%s (%s-%s)\n", v[int((NR + 1) / 2)], v[1], v[NR]}' \
          >"$tmp/col$col"
    done
    echo "| $busy | $p | $(cat "$tmp/col3") | $(cat "$tmp/col4") |"
  done
done
