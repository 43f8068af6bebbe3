#!/usr/bin/env bash
# bench/log_summary.sh on a made-up bench.sh log whose medians and ratios are worked out by hand:
# rope, ours 30000/20000/40000 -> median 30000; PyTorch default 10000/14000/12000 -> 12000,
# tcmalloc 15000/13000 (the third round cut) -> 14000, marked "2 rounds"; the ratio is
# 30000 / 14000 = 2.14x; GFLOP/s 30000 / 4096 * 23.94 = 175.3, 58% of a 300 peak. Evaluation:
# ours 8000/6000/7000 -> 7000 against 1000/2000/3000 -> 2000 and 3500/3300 -> 3400: 2.06x.
# The row of docs/performance.md: the baseline is tcmalloc (the higher median), and the ratio's
# range runs from 20000 / 15000 = 1.33x to 40000 / 13000 = 3.08x.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
log=$(mktemp)
trap 'rm -f "$log"' EXIT
round() { # r ours eval_ours default eval_default [tcmalloc eval_tcmalloc]
  cat <<LOG
== round $1: poslab bench_train_step, 20 steps, schemes rope  [Some CPU (avx2 fma no-avx512f), load 0.01]
pe            tokens/s    s/step  GFLOP/s
rope             $2     0.100    100.0
rope   L=4096     0.500 s     $3 tokens/s  (first window 0.600 s)  peak RSS   51.5 MB
== round $1: PyTorch eager, torch-default, schemes rope  [Some CPU (avx2 fma no-avx512f), load 0.01]
torch rope train $4
torch rope eval4096 $5
LOG
  if [ $# -gt 5 ]; then
    printf '%s\n' "== round $1: PyTorch eager, torch-tcmalloc, schemes rope  [Some CPU, load 0.00]" \
      "torch rope train $6" "torch rope eval4096 $7"
  fi
}
{ round 1 30000 8000 10000 1000 15000 3500; round 2 20000 6000 14000 2000 13000 3300
  round 3 40000 7000 12000 3000; echo "Terminated"; } >"$log"
out=$("$here/../../bench/log_summary.sh" "$log" 23.94 300)
echo "$out"
want() { grep -qF -- "$1" <<<"$out" || { echo "log_summary_test: expected a line with: $1" >&2; exit 1; }; }
want "| rope | 30000 (20000-40000) | 12000 (10000-14000) | 14000 (13000-15000, 2 rounds) | 2.14x | 3 | 175.3 | 58% |"
want "| rope | 7000 (6000-8000) | 2000 (1000-3000) | 3400 (3300-3500, 2 rounds) | 2.06x | 3 |"
want "| rope | 30000 (20000-40000) | 14000 (13000-15000), tcmalloc | 2.14x (1.33-3.08x) | 58% |"
echo "log_summary_test: ok"
