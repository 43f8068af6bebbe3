# page_table.awk — the training table of docs/performance.md, one row per scheme, from the
# medians of a benchmark's rounds. The single copy of the page's columns, used by
# scripts/bench.sh (printed at the end of `make bench`) and by bench/log_summary.sh.
#   in:  lines "program scheme median min max maxload count" (bench/medians.awk's output);
#        program "ours" is poslab, any other is a PyTorch setting
#   -v schemes="none learned ..."  the rows, in order
#   -v flop=GFLOP                  the multiply-adds x 2 one step executes (docs/performance.md,
#                                  "The FLOP count"; bench/step_gflop.sh)
#   -v peak=GFLOP/s                the FMA peak of the threads used (bench_fma_peak); 0: unknown
# The baseline of a scheme is the PyTorch setting with the highest median. The ratio is ours
# over it; its range runs from our slowest round over the baseline's fastest to our fastest
# over its slowest, so it holds every pairing of the rounds.
{ med[$1, $2] = $3; lo[$1, $2] = $4; hi[$1, $2] = $5; progs[$1] }
function range(p, s) { return sprintf("%s (%s-%s)", med[p, s], lo[p, s], hi[p, s]) }
# bench.sh's names of PyTorch's settings, as the page writes them
function setting(p) {
  if (p == "torch-default") return "default"
  if (p == "torch-blas1") return "OPENBLAS_NUM_THREADS=1"
  return p == "torch-tcmalloc" ? "tcmalloc" : p
}
END {
  print "| scheme | poslab tokens/s | PyTorch tokens/s, fastest setting | ratio (range) | share of peak |"
  print "|---|---|---|---|---|"
  n = split(schemes, order, " ")
  for (i = 1; i <= n; i++) {
    s = order[i]
    if (!(("ours", s) in med)) continue
    best = ""
    for (p in progs)
      if (p != "ours" && ((p, s) in med) && (best == "" || med[p, s] + 0 > med[best, s] + 0)) best = p
    g = med["ours", s] / 4096 * flop  # GFLOP/s: a canonical step is 4096 tokens
    printf "| %s | %s | %s | %s | %s |\n", s, range("ours", s),
      (best == "" ? "-" : range(best, s) ", " setting(best)),
      (best == "" ? "-" : sprintf("%.2fx (%.2f-%.2fx)", med["ours", s] / med[best, s],
        lo["ours", s] / hi[best, s], hi["ours", s] / lo[best, s])),
      (peak > 0 ? sprintf("%.0f%%", 100 * g / peak) : "-")
  }
}
