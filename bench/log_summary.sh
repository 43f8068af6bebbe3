#!/usr/bin/env bash
# log_summary.sh LOG [FLOP_PER_STEP=26.1] [PEAK_GFLOPS]: the training and evaluation tables of
# scripts/bench.sh, rebuilt from what it printed (its output, or gpu_check.log), for a run cut
# short after its rounds but before its summary. Per program and scheme the median over the
# rounds (and the range); the baseline is the fastest PyTorch setting's median. For an odd count
# (bench.sh's three rounds) that is bench.sh's median; for an even one (a round cut short) it
# is the mean of the middle two, where bench.sh would take the lower. A figure the log has from
# fewer rounds than the others says so; the `rounds` column counts poslab's.
set -euo pipefail
log=${1:?usage: log_summary.sh LOG [FLOP_PER_STEP] [PEAK_GFLOPS]}
flop=${2:-26.1}
peak=${3:-0}
[ -r "$log" ] || { echo "log_summary.sh: cannot read $log" >&2; exit 2; }
awk -v flop="$flop" -v peak="$peak" -v logfile="$log" '
  /^== round/ { prog = ($4 == "poslab") ? "ours" : $6; sub(",", "", prog) }
  /^torch [a-z0-9]+ train / { add(prog, $2, "train", $4) }
  /^torch [a-z0-9]+ eval4096 / { add(prog, $2, "eval", $4) }
  prog == "ours" && /^[a-z0-9]+ +[0-9]+ +[0-9.]+ +[0-9.]+$/ { add("ours", $1, "train", $2) }
  prog == "ours" && / L=4096 / { for (i = 1; i <= NF; i++) if ($i == "tokens/s") add("ours", $1, "eval", $(i - 1)) }
  function add(p, s, k, v,   key) { key = p SUBSEP s SUBSEP k; n[key]++; val[key, n[key]] = v + 0
    if (!(s in seen)) { seen[s]; order[++ns] = s }
    if (!(p in pseen) && p != "ours") { pseen[p]; progs[++np] = p } }
  function med(key,   m, i, j, t, a) {  # sorts val[key, 1..n] and returns "median lo hi n"
    m = n[key]; if (!m) return ""
    for (i = 1; i <= m; i++) a[i] = val[key, i]
    for (i = 2; i <= m; i++) for (j = i; j > 1 && a[j - 1] > a[j]; j--) { t = a[j]; a[j] = a[j - 1]; a[j - 1] = t }
    return (m % 2 ? a[(m + 1) / 2] : (a[m / 2] + a[m / 2 + 1]) / 2) " " a[1] " " a[m] " " m }
  function cell(s, p, k,   r, f) { r = med(p SUBSEP s SUBSEP k); if (r == "") return "-"
    split(r, f, " ")
    return sprintf("%.0f (%d-%d%s)", f[1], f[2], f[3], (f[4] < maxn ? ", " f[4] " rounds" : "")) }
  function table(k, title,   i, j, s, o, f, b, best, hdr, rule, line, g) {
    hdr = "| " title " | poslab"; rule = "|---|---"
    for (j = 1; j <= np; j++) { hdr = hdr " | PyTorch " progs[j]; rule = rule "|---" }
    print hdr " | ratio | rounds |" (k == "train" ? " GFLOP/s | share of peak |" : "")
    print rule "|---|---|" (k == "train" ? "---|---|" : "")
    for (i = 1; i <= ns; i++) { s = order[i]; o = med("ours" SUBSEP s SUBSEP k)
      if (o == "") continue
      split(o, f, " "); best = 0; line = "| " s " | " cell(s, "ours", k)
      for (j = 1; j <= np; j++) { line = line " | " cell(s, progs[j], k)
        b = med(progs[j] SUBSEP s SUBSEP k); if (b != "") { split(b, bb, " "); if (bb[1] > best) best = bb[1] } }
      g = f[1] / 4096 * flop
      printf "%s | %s | %d |", line, (best > 0 ? sprintf("%.2fx", f[1] / best) : "-"), f[4]
      if (k == "train") printf " %.1f | %s |", g, (peak > 0 ? sprintf("%.0f%%", 100 * g / peak) : "-")
      printf "\n" }
    print "" }
  END { if (!ns) { print "log_summary.sh: no figures of scripts/bench.sh in " logfile > "/dev/stderr"; exit 1 }
    for (key in n) if (n[key] > maxn) maxn = n[key]
    table("train", "training step, tokens/s"); table("eval", "one window of 4096, tokens/s") }
' "$log"
