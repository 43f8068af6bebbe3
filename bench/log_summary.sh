#!/usr/bin/env bash
# log_summary.sh LOG [FLOP_PER_STEP=23.94] [PEAK_GFLOPS]: the training and evaluation tables of
# scripts/bench.sh, rebuilt from what it printed (its output, or gpu_check.log), for a run cut
# short after its rounds but before its summary, and the rows of docs/performance.md's table
# (bench/page_table.awk). FLOP_PER_STEP: the GFLOP a canonical step executes with the kernel
# that ran (bench/step_gflop.sh: 23.94 AVX-512, 23.63 AVX2). Per program and scheme the median over the
# rounds and the range, by bench.sh's own rule (bench/medians.awk: for an even count, a round
# cut short, the mean of the middle two); the baseline is the fastest PyTorch setting's median.
# A figure the log has from fewer rounds than the others says so; the `rounds` column counts
# poslab's.
set -euo pipefail
log=${1:?usage: log_summary.sh LOG [FLOP_PER_STEP] [PEAK_GFLOPS]}
flop=${2:-23.94}
peak=${3:-0}
here=$(cd "$(dirname "$0")" && pwd)
[ -r "$log" ] || { echo "log_summary.sh: cannot read $log" >&2; exit 2; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
# The figures as records "program scheme value", one file per kind (train, eval), and the order
# in which schemes and PyTorch settings first appear.
awk -v dir="$tmp" '
  /^== round/ { prog = ($4 == "poslab") ? "ours" : $6; sub(",", "", prog) }
  /^torch [a-z0-9]+ train / { add(prog, $2, "train", $4) }
  /^torch [a-z0-9]+ eval4096 / { add(prog, $2, "eval", $4) }
  prog == "ours" && /^[a-z0-9]+ +[0-9]+ +[0-9.]+ +[0-9.]+$/ { add("ours", $1, "train", $2) }
  prog == "ours" && / L=4096 / { for (i = 1; i <= NF; i++) if ($i == "tokens/s") add("ours", $1, "eval", $(i - 1)) }
  function add(p, s, k, v) { print p, s, v > (dir "/" k)
    if (!(s in seen)) { seen[s]; print s > (dir "/schemes") }
    if (!(p in pseen) && p != "ours") { pseen[p]; print p > (dir "/progs") } }
' "$log"
[ -s "$tmp/schemes" ] || { echo "log_summary.sh: no figures of scripts/bench.sh in $log" >&2; exit 1; }
for k in train eval; do
  touch "$tmp/$k" "$tmp/progs"
  awk -f "$here/medians.awk" "$tmp/$k" >"$tmp/$k.sum"
done
awk -v flop="$flop" -v peak="$peak" -v dir="$tmp" '
  FILENAME ~ /\/schemes$/ { order[++ns] = $1; next }
  FILENAME ~ /\/progs$/ { progs[++np] = $1; next }
  { k = (FILENAME ~ /\/train\.sum$/) ? "train" : "eval"
    key = $1 SUBSEP $2 SUBSEP k; med[key] = $3; lo[key] = $4; hi[key] = $5; cnt[key] = $7
    if ($7 > maxn) maxn = $7 }
  function cell(key) { if (!(key in med)) return "-"
    return sprintf("%s (%s-%s%s)", med[key], lo[key], hi[key], (cnt[key] < maxn ? ", " cnt[key] " rounds" : "")) }
  function table(k, title,   i, j, s, o, best, b, hdr, rule, line, g) {
    hdr = "| " title " | poslab"; rule = "|---|---"
    for (j = 1; j <= np; j++) { hdr = hdr " | PyTorch " progs[j]; rule = rule "|---" }
    print hdr " | ratio | rounds |" (k == "train" ? " GFLOP/s | share of peak |" : "")
    print rule "|---|---|" (k == "train" ? "---|---|" : "")
    for (i = 1; i <= ns; i++) { s = order[i]; o = "ours" SUBSEP s SUBSEP k
      if (!(o in med)) continue
      best = 0; line = "| " s " | " cell(o)
      for (j = 1; j <= np; j++) { b = progs[j] SUBSEP s SUBSEP k; line = line " | " cell(b)
        if ((b in med) && med[b] + 0 > best) best = med[b] + 0 }
      g = med[o] / 4096 * flop
      printf "%s | %s | %d |", line, (best > 0 ? sprintf("%.2fx", med[o] / best) : "-"), cnt[o]
      if (k == "train") printf " %.1f | %s |", g, (peak > 0 ? sprintf("%.0f%%", 100 * g / peak) : "-")
      printf "\n" }
    print "" }
  END { table("train", "training step, tokens/s"); table("eval", "one window of 4096, tokens/s") }
' "$tmp/schemes" "$tmp/progs" "$tmp/train.sum" "$tmp/eval.sum"
echo "For docs/performance.md:"
echo
awk -v schemes="$(paste -sd ' ' "$tmp/schemes")" -v flop="$flop" -v peak="$peak" \
  -f "$here/page_table.awk" "$tmp/train.sum"
