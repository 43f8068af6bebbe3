# medians.awk — one figure per program and scheme over a benchmark's rounds: the median, the
# range and the count. The single copy of that rule, used by scripts/bench.sh's summary and by
# bench/log_summary.sh (the same tables rebuilt from a log).
#   in:  lines "program scheme value [load]", in any order
#   out: lines "program scheme median min max maxload count", one per (program, scheme)
# The median of an odd count (bench.sh's three rounds) is the middle value; of an even count
# (ROUNDS=2, or a round cut short) the mean of the middle two, printed to the nearest whole
# number like the figures (tokens/s).
{
  k = $1 " " $2
  n[k]++
  v[k, n[k]] = $3 + 0
  if (n[k] == 1 || $4 + 0 > ml[k]) ml[k] = $4 + 0
}
END {
  for (k in n) {
    m = n[k]
    for (i = 1; i <= m; i++) a[i] = v[k, i]
    for (i = 2; i <= m; i++)  # insertion sort: a handful of rounds
      for (j = i; j > 1 && a[j - 1] > a[j]; j--) { t = a[j]; a[j] = a[j - 1]; a[j - 1] = t }
    med = m % 2 ? a[(m + 1) / 2] : (a[m / 2] + a[m / 2 + 1]) / 2
    printf "%s %.0f %s %s %s %d\n", k, med, a[1], a[m], ml[k], m
  }
}
