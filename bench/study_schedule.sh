#!/usr/bin/env bash
# study_schedule.sh — the study's two schedules on this machine, as `make experiments` runs
# them: RUNS training runs of the canonical config (d=128, 4 layers, 4 heads, T=256, batch 16,
# STEPS steps each, no evaluation) made
#   one at a time   each on all cores (OMP_NUM_THREADS = cores): the schedule before issue 13
#   in parallel     one run per core, one thread each (`poslab experiments --jobs <cores>`)
# Total tokens trained / wall time of the whole schedule (process start-up and data loading
# included), three rounds, the order flipped every round; median and range, the CPU and the
# cores busy with other work before each (0 = idle). Usage: bench/study_schedule.sh [build]
# SEQUENTIAL_POSLAB=path runs the one-at-a-time schedule with another poslab binary (e.g. one
# built from an older commit: the schedule as it was), the parallel one with [build]'s.
# POSLAB_ISA, when set, is passed on to both (make bench's emulated AVX2 machine).
set -euo pipefail
build=${1:-build/release}
poslab=$build/train/poslab
cores=$(nproc)
runs=${RUNS:-4}
steps=${STEPS:-60}
rounds=${ROUNDS:-3}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
source "$(dirname "$0")/../scripts/machine.sh" # $cpu, load
"$poslab" prepare --corpus fortunes --out "$tmp/data" >/dev/null
seq_poslab=${SEQUENTIAL_POSLAB:-$poslab}
train() { # binary run-index threads
  env -i PATH="$PATH" HOME="$HOME" OMP_NUM_THREADS="$3" ${POSLAB_ISA:+POSLAB_ISA="$POSLAB_ISA"} \
    "$1" train --data "$tmp/data" \
    --pe rope --out "$tmp/run$2" --steps "$steps" --batch 16 --seed "$2" \
    --eval-every 1000000 >/dev/null 2>&1
}
schedule() { # name -> tokens/s of the whole schedule
  local t0 t1 i
  rm -rf "$tmp"/run*
  t0=$(date +%s.%N)
  if [ "$1" = sequential ]; then
    for i in $(seq 1 "$runs"); do train "$seq_poslab" "$i" "$cores"; done
  else
    for i in $(seq 1 "$runs"); do
      train "$poslab" "$i" 1 &
      if [ $((i % cores)) -eq 0 ]; then wait; fi
    done
    wait
  fi
  t1=$(date +%s.%N)
  awk -v a="$t0" -v b="$t1" -v n="$runs" -v s="$steps" 'BEGIN { printf "%.0f", n * s * 16 * 256 / (b - a) }'
}
echo "== $(date -u '+%Y-%m-%d %H:%M UTC'), $cpu, $cores cores; $runs runs of $steps steps"
echo "== sequential: $seq_poslab; parallel: $poslab${POSLAB_ISA:+; POSLAB_ISA=$POSLAB_ISA}"
: >"$tmp/res"
for r in $(seq 1 "$rounds"); do
  order="sequential parallel"
  [ $((r % 2)) -eq 0 ] && order="parallel sequential"
  for s in $order; do
    l=$(load)
    v=$(schedule "$s")
    echo "round $r  $s  $v tokens/s  [busy before: $l cores]"
    echo "$s $v $l" >>"$tmp/res"
  done
done
sort -k1,1 -k2,2n "$tmp/res" | awk '
  { v[$1, ++n[$1]] = $2; if ($3 > ml) ml = $3 }
  END {
    for (k in n) med[k] = v[k, int((n[k] + 1) / 2)]
    printf "sequential (one run on all cores): %d tokens/s (%d-%d)\n", med["sequential"], v["sequential", 1], v["sequential", n["sequential"]]
    printf "parallel (one run per core):       %d tokens/s (%d-%d)\n", med["parallel"], v["parallel", 1], v["parallel", n["parallel"]]
    printf "ratio parallel / sequential: %.2fx; most cores busy with other work before a figure: %s\n", med["parallel"] / med["sequential"], ml }'
