# machine.sh — what both benchmark scripts print beside every figure (sourced, not run):
#   $cpu     the CPU model and whether it has avx2, fma, avx512f
#   load     the cores busy with other work over one second, while nothing of ours runs:
#            (busy jiffies / all jiffies of /proc/stat) x cores. The load average would still
#            count the benchmark's own previous program for a minute after it.
has() { grep -qw "$1" /proc/cpuinfo && echo "$1" || echo "no-$1"; }
cpu="$(lscpu | sed -n 's/^Model name: *//p' | head -1) ($(has avx2) $(has fma) $(has avx512f))"
load() {
  local a b
  a=$(head -1 /proc/stat)
  sleep 1
  b=$(head -1 /proc/stat)
  echo "$a $b" | awk -v n="$(nproc)" '{
    for (i = 2; i <= 11; i++) { t0 += $i; t1 += $(i + 11) }
    idle0 = $5 + $6; idle1 = $16 + $17
    printf "%.2f", (t1 - t0 > 0 ? n * (1 - (idle1 - idle0) / (t1 - t0)) : 0) }'
}
