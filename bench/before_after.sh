#!/usr/bin/env bash
# before_after.sh — did a change move the training step's speed? One training step of the
# canonical model (bench_train_step), built at two commits the same way, timed in alternation.
#   bench/before_after.sh BEFORE [AFTER=HEAD]
# Each commit is checked out into a temporary worktree and built Release, -march=native, without
# CUDA, into build/before-after/<commit> (kept: a second call reuses it). Then ROUNDS rounds
# (default 3) of STEPS timed steps (default 20, after warm-up) per scheme, the two programs'
# order flipped every round, both from a clean environment (PATH, HOME, LANG, OMP_NUM_THREADS)
# so none of the Makefile's settings reach either. Printed per scheme: the median tokens/s of
# each commit over the rounds, its range, and the paired ratio AFTER / BEFORE (each round's two
# back-to-back figures, median and range over the rounds), with the CPU model, its vector
# extensions and the load just before each program (scripts/machine.sh). A VM's speed drifts
# by several percent over minutes; the paired ratio's range shows how much of that is left.
set -euo pipefail
before=$(git rev-parse --short "${1:?usage: bench/before_after.sh BEFORE [AFTER=HEAD]}")
after=$(git rev-parse --short "${2:-HEAD}")
rounds=${ROUNDS:-3}
steps=${STEPS:-20}
threads=${THREADS:-$(nproc)}
root=$(git rev-parse --show-toplevel)
# shellcheck source=scripts/machine.sh
source "$root/scripts/machine.sh" # $cpu, load
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

build_at() { # commit -> path of its bench_train_step
  local c=$1 out=$root/build/before-after/$1
  if [ ! -x "$out/bench/bench_train_step" ]; then
    git -C "$root" worktree add --detach "$tmp/src-$c" "$c" >/dev/null
    cmake -S "$tmp/src-$c" -B "$out" -DCMAKE_BUILD_TYPE=Release -DPOSLAB_CUDA=OFF \
      -DPOSLAB_NATIVE=ON >/dev/null
    cmake --build "$out" --target bench_train_step -j "$(nproc)" >/dev/null
    git -C "$root" worktree remove --force "$tmp/src-$c"
  fi
  echo "$out/bench/bench_train_step"
}
bin_before=$(build_at "$before")
bin_after=$(build_at "$after")

run() { # commit binary round
  local l
  l=$(load)
  echo "== round $3: $1, load $l"
  env -i PATH="$PATH" HOME="$HOME" LANG="${LANG:-C.UTF-8}" OMP_NUM_THREADS="$threads" \
    "$2" "$steps" 16 cpu all | tee "$tmp/last"
  awk -v c="$1" -v l="$l" -v r="$3" 'NR > 1 {print c, $1, $2, l, r}' "$tmp/last" >>"$tmp/all"
}
echo "== $(date -u '+%Y-%m-%d %H:%M UTC'), $cpu, $(nproc) cores, $threads threads"
for r in $(seq 1 "$rounds"); do
  if [ $((r % 2)) -eq 1 ]; then
    run "$before" "$bin_before" "$r"
    run "$after" "$bin_after" "$r"
  else
    run "$after" "$bin_after" "$r"
    run "$before" "$bin_before" "$r"
  fi
done
awk -f "$root/bench/medians.awk" "$tmp/all" >"$tmp/sum" # commit scheme median min max maxload n
echo
# The paired ratio: AFTER / BEFORE within each round (the two programs ran back to back, so a
# machine that drifts over minutes moves both), then the median and range over the rounds.
awk -v b="$before" -v a="$after" '{ t[$1, $2, $5] = $3; s[$2] = 1; n = $5 > n ? $5 : n }
  END { for (pe in s) for (r = 1; r <= n; r++) print "ratio", pe, t[a, pe, r] / t[b, pe, r] }' \
  "$tmp/all" | awk '{ k = $2; c[k]++; v[k, c[k]] = $3 }
  END { for (k in c) { m = c[k]; for (i = 1; i <= m; i++) x[i] = v[k, i]
      for (i = 2; i <= m; i++) for (j = i; j > 1 && x[j - 1] > x[j]; j--) { t = x[j]; x[j] = x[j - 1]; x[j - 1] = t }
      printf "%s %.3f %.3f %.3f\n", k, (m % 2 ? x[(m + 1) / 2] : (x[m / 2] + x[m / 2 + 1]) / 2), x[1], x[m] } }' \
  >"$tmp/ratio"
echo "| scheme | $before tokens/s (range) | $after tokens/s (range) | paired ratio (range) |"
echo "|---|---|---|---|"
for pe in none learned sinusoidal rope alibi t5; do
  awk -v b="$before" -v a="$after" -v pe="$pe" 'FNR == 1 { f++ }
    f == 1 && $2 == pe { m[$1] = $3; r[$1] = $4 "-" $5 }
    f == 2 && $1 == pe { q = sprintf("%s (%s-%s)", $2, $3, $4) }
    END { printf "| %s | %s (%s) | %s (%s) | %s |\n", pe, m[b], r[b], m[a], r[a], q }' \
    "$tmp/sum" "$tmp/ratio"
done
awk '{ if ($6 > ml) ml = $6 } END { printf "highest load before a program: %.2f%s\n", ml,
  (ml > 0.3 ? " -- WARNING: not idle" : "") }' "$tmp/sum"
