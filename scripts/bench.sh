#!/usr/bin/env bash
# `make bench`: poslab against PyTorch eager as users run both, and each benchmark in bench/.
#
# The protocol (docs/performance.md, "How it is measured"):
# - Both programs start from a clean environment (PATH, HOME, LANG only): none of our settings
#   (the Makefile's OMP_WAIT_POLICY, OPENBLAS_*, POSLAB_*) reach either, and both get the same
#   thread count (THREADS, default all cores). PyTorch runs three times per round: with its
#   own defaults, with OPENBLAS_NUM_THREADS=1, and with tcmalloc preloaded (LD_PRELOAD, the
#   allocator PyTorch's CPU performance tuning guide recommends; Debian's
#   libtcmalloc-minimal4); per scheme the fastest of the three is the baseline.
# - Each program's wall, user and system time, and the page faults the machine took while it
#   ran (/proc/vmstat; the machine is idle otherwise), go into the summary: a VM where faults
#   are slow shows there as system time, and slows an allocator that returns memory to the
#   kernel (glibc's, under PyTorch's large tensors) far more than one that keeps it.
# - ROUNDS rounds (default 3) alternate the programs, the order flipped every round, so slow
#   drift of the machine hits both; each figure is a median of STEPS timed training steps
#   (default 20) after warm-up. Printed: the median over rounds and the range. Each round
#   both programs time the schemes from another one on (round 2: learned ... t5, none), so
#   the start-up a process's first scheme pays falls on another scheme every round.
# - Every figure carries the CPU model, its vector extensions and the machine's load just
#   before it: the cores busy with other work over one second while none of the benchmark's
#   programs run (from /proc/stat; the load average would count the benchmark's own last
#   program for a minute after it), with a warning when that says the machine was not idle
#   (> 0.3 cores).
# - The machine's FP32 FMA peak (bench_fma_peak, all threads) and each step's GFLOP/s give the
#   share of peak: the GFLOP a canonical step executes with the kernel of that peak's width
#   (bench/step_gflop.sh; the derivation is on docs/performance.md).
# - BENCH_ISA=avx2 on an AVX-512 machine emulates an AVX2 one for both programs: ours built
#   for AVX2 (`BENCH_ISA=avx2 make bench` builds build/avx2 with -march=x86-64-v3) and run with
#   POSLAB_ISA=avx2, PyTorch with its own switch ATEN_CPU_CAPABILITY=avx2 and OpenBLAS's
#   OPENBLAS_CORETYPE=Haswell (the kernels an AVX2 CPU gets); the peak is the AVX2 one. The
#   summary says it was emulated, and with which build.
#   PyTorch's oneMKL and oneDNN (the pip wheels' libraries) get their own caps too,
#   MKL_ENABLE_INSTRUCTIONS=AVX2 and ONEDNN_MAX_CPU_ISA=AVX2.
# The summary tables go to BENCH_OUT (default <build>/bench/RESULTS-latest.md); everything else
# is printed as it runs. The summary ends with the training table in the columns of
# docs/performance.md (bench/page_table.awk), a row per scheme to paste there: new measurements
# go on that page only (bench/archive/RESULTS.md is the frozen history).
# On a machine without our Debian packages (scripts/gpu_check.sh cpu runs this from its bundle):
# PYTHON is the interpreter with PyTorch (default /usr/bin/python3), OURS_LIBS a library folder
# for our programs only (LD_LIBRARY_PATH), TCMALLOC the libtcmalloc_minimal.so.4 to preload,
# BUILD_FLAGS how our programs were compiled, for the summary (default: the build's CMakeCache),
# BENCH_PARTS=compare stops after the comparison with PyTorch and the RSS check (no kernel
# benchmarks, no study schedule); BENCH_EVAL=0 leaves out the evaluation windows at 4096 of
# both programs (a third of a round's time). The summary is written as soon as the comparison
# is done, before the RSS check and the kernel benchmarks add to it.
set -euo pipefail
build=${1:-build/release}
threads=${THREADS:-$(nproc)}
rounds=${ROUNDS:-3}
steps=${STEPS:-20}
out=${BENCH_OUT:-$build/bench/RESULTS-latest.md}
schemes=${BENCH_SCHEMES:-none learned sinusoidal rope alibi t5} # BENCH_SCHEMES: a subset, space-separated
isa=${BENCH_ISA:-native}
ours_isa=() torch_isa=() matmul_isa=()
case "$isa" in
native) ;;
avx2) ours_isa=(POSLAB_ISA=avx2) torch_isa=(ATEN_CPU_CAPABILITY=avx2 OPENBLAS_CORETYPE=Haswell)
  matmul_isa=(POSLAB_ISA=avx2 OPENBLAS_CORETYPE=Haswell) ;;
*) echo "bench.sh: BENCH_ISA=$isa; valid: native|avx2" >&2 && exit 2 ;;
esac
mkdir -p "$(dirname "$out")"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

python=${PYTHON:-/usr/bin/python3}
parts=${BENCH_PARTS:-all}
eval=${BENCH_EVAL:-1} torch_eval=()
case "$eval" in 1) ;; 0) torch_eval=(BENCH_EVAL=0) ;; *) echo "bench.sh: BENCH_EVAL=$eval; valid: 0|1" >&2 && exit 2 ;; esac
case "$parts" in all | compare) ;; *) echo "bench.sh: BENCH_PARTS=$parts; valid: all|compare" >&2 && exit 2 ;; esac
clean() { env -i PATH="$PATH" HOME="$HOME" LANG="${LANG:-C.UTF-8}" "$@"; }
ours() { clean ${OURS_LIBS:+LD_LIBRARY_PATH="$OURS_LIBS"} OMP_NUM_THREADS="$threads" "${ours_isa[@]}" "$@"; }
# shellcheck source=scripts/machine.sh
source "$(dirname "$0")/machine.sh" # $cpu, load
# "[cpu, load L]" beside a figure, with a warning when the machine was busy; L is measured
# now, or given (the value a figure records, so the line and the summary agree)
tag() {
  local l=${1:-$(load)}
  awk -v l="$l" -v c="$cpu" 'BEGIN { printf "[%s, load %s%s]", c, l,
    (l > 0.3 ? " -- WARNING: not idle, figures are low and noisy" : "") }'
}
section() { echo "== $1  $(tag "${2:-}")"; }

section "$(date -u '+%Y-%m-%d %H:%M UTC'), $(nproc) cores, $threads threads, OPENBLAS_CORETYPE=${OPENBLAS_CORETYPE:-unset} in this shell (not passed on)"
section "FP32 FMA peak: 12 register-only FMA chains per thread"
ours "$build/bench/bench_fma_peak" | tee "$tmp/peak"
# the widest ISA's peak, or AVX2's when emulating an AVX2 machine: "isa GFLOP/s"
read -r peak_isa peak < <(awk -v i="$isa" '$1 == "fma_peak" && (i == "native" || $2 == i) {k = $2; p = $4}
  END {print (k == "" ? "none" : k), p + 0}' "$tmp/peak")
# shellcheck source=bench/step_gflop.sh
source "$(dirname "$0")/../bench/step_gflop.sh"
flop_per_step=$(step_gflop "$peak_isa") # GFLOP a canonical step executes with that kernel

have_torch=0
if "$python" -c "import torch" 2>/dev/null; then have_torch=1; fi
tcmalloc=${TCMALLOC:-$(find /usr/lib/*-linux-gnu -maxdepth 1 -name libtcmalloc_minimal.so.4 2>/dev/null | head -1)}
# TORCH_SETTINGS picks PyTorch's settings (default: all three); the summary says which ran.
torch_settings=${TORCH_SETTINGS:-torch-default torch-blas1 torch-tcmalloc}
for p in $torch_settings; do
  case "$p" in
  torch-default | torch-blas1) ;;
  torch-tcmalloc) [ -n "$tcmalloc" ] || { echo "bench.sh: TORCH_SETTINGS has torch-tcmalloc but there is no libtcmalloc_minimal.so.4 (apt-get install libtcmalloc-minimal4)" >&2 && exit 2; } ;;
  *) echo "bench.sh: TORCH_SETTINGS has '$p'; valid: torch-default torch-blas1 torch-tcmalloc" >&2 && exit 2 ;;
  esac
done
[ -n "$tcmalloc" ] || torch_settings=${torch_settings/torch-tcmalloc/}
runs() { [[ " $torch_settings " == *" $1 "* ]]; }
# Runs "$@" with its output in $tmp/last, and appends "label wall user system faults" to
# $tmp/res: bash's own clock, and the machine's page faults (pgfault of /proc/vmstat) meanwhile.
faults() { awk '$1 == "pgfault" {print $2}' /proc/vmstat; }
timed() {
  local label=$1 f0 t rc=0
  shift
  f0=$(faults)
  t=$( { TIMEFORMAT='%R %U %S'; time "$@" >"$tmp/last" 2>"$tmp/err"; } 2>&1) || rc=$?
  cat "$tmp/err" >&2
  if [ $rc -ne 0 ]; then
    cat "$tmp/last"
    echo "bench.sh: $label failed with exit status $rc" >&2
    exit $rc
  fi
  echo "$label $t $(($(faults) - f0))" >>"$tmp/res"
}
# One round: ours (train + eval) and PyTorch twice, in the given order; lines tagged with
# the round and the load just before each program started. Round r times the schemes from the
# r-th on (none learned ... t5, then round again), in both programs: a program's first scheme
# also pays its start-up (first touches of memory, thread pools), and this way it is another
# scheme each round, so no scheme's median carries it every round.
order() { echo "$schemes" | awk -v r="$1" '{ for (i = 0; i < NF; i++) printf "%s%s", (i ? "," : ""), $((i + r - 1) % NF + 1) }'; }
run_ours() {
  local r=$1 l
  l=$(load)
  section "round $r: poslab bench_train_step, $steps steps, schemes $(order "$r")" "$l"
  timed ours ours "$build/bench/bench_train_step" "$steps" 16 cpu "$(order "$r")"
  cat "$tmp/last"
  awk -v r="$r" -v l="$l" 'NR > 1 {print "ours", $1, $2, l, r}' "$tmp/last" >>"$tmp/train"
  for pe in $schemes; do
    [ "$eval" = 1 ] || break
    l=$(load)
    timed ours ours "$build/bench/bench_eval_long" 4096 "$pe"
    cat "$tmp/last"
    awk -v r="$r" -v l="$l" '{print "ours", $1, $5, l, r}' "$tmp/last" >>"$tmp/eval"
  done
}
run_torch() {
  local r=$1 name=$2 l
  shift 2
  l=$(load)
  section "round $r: PyTorch eager, $name, schemes $(order "$r")" "$l"
  timed "$name" clean "${torch_isa[@]}" "${torch_eval[@]}" "$@" "$python" bench/torch_bench.py "$threads" \
    "$steps" cpu 16 explicit "$(order "$r")"
  cat "$tmp/last"
  awk -v r="$r" -v l="$l" -v n="$name" '$3 == "train" {print n, $2, $4, l, r}' "$tmp/last" >>"$tmp/train"
  awk -v r="$r" -v l="$l" -v n="$name" '$3 == "eval4096" {print n, $2, $4, l, r}' "$tmp/last" >>"$tmp/eval"
}
: >"$tmp/train"
: >"$tmp/eval"
: >"$tmp/res"
for r in $(seq 1 "$rounds"); do
  if [ $((r % 2)) -eq 1 ] || [ $have_torch -eq 0 ]; then run_ours "$r"; fi
  if [ $have_torch -eq 1 ]; then
    if runs torch-default; then run_torch "$r" torch-default; fi
    if runs torch-blas1; then run_torch "$r" torch-blas1 OPENBLAS_NUM_THREADS=1; fi
    if runs torch-tcmalloc; then run_torch "$r" torch-tcmalloc LD_PRELOAD="$tcmalloc"; fi
  fi
  if [ $((r % 2)) -eq 0 ] && [ $have_torch -eq 1 ]; then run_ours "$r"; fi
done
[ $have_torch -eq 1 ] || echo "== PyTorch: $python has no torch (apt-get install python3-torch); no ratios"
[ $have_torch -eq 0 ] || [ -n "$tcmalloc" ] ||
  echo "== no libtcmalloc_minimal.so.4 (apt-get install libtcmalloc-minimal4): PyTorch's tcmalloc setting not run"

# Median and range per (program, scheme) (bench/medians.awk, which bench/log_summary.sh shares:
# for an even ROUNDS, the mean of the middle two); the baseline is the fastest PyTorch setting.
summary() { awk -f "$(dirname "$0")/../bench/medians.awk" "$1"; } # -> "program scheme median min max maxload count"
summary "$tmp/train" >"$tmp/train.sum"
summary "$tmp/eval" >"$tmp/eval.sum"
get() { awk -v p="$2" -v s="$3" -v f="$4" '$1 == p && $2 == s {print $f}' "$1"; }
# The table of docs/performance.md for this machine: what was measured, then a row per scheme.
commit=${BENCH_COMMIT:-$(git -C "$(dirname "$0")/.." rev-parse --short HEAD 2>/dev/null || echo unknown)}
[ "$commit" = unknown ] || [ -n "${BENCH_COMMIT:-}" ] ||
  git -C "$(dirname "$0")/.." diff --quiet HEAD -- 2>/dev/null || commit+=" with local changes"
# how our programs were compiled: BUILD_FLAGS, or the build's CMakeCache
build_flags() {
  local f
  f=${BUILD_FLAGS:-$(sed -n 's/^CMAKE_CXX_FLAGS:STRING=//p' "$build/CMakeCache.txt" 2>/dev/null)}
  [ -n "$f" ] || ! grep -q '^POSLAB_NATIVE:BOOL=ON' "$build/CMakeCache.txt" 2>/dev/null || f=-march=native
  echo "${f:-unknown flags}"
}
torch_version=$([ $have_torch -eq 0 ] || "$python" -c "import torch; print(torch.__version__)" 2>/dev/null || true)
{
  echo "### $cpu, $threads threads"
  echo
  echo "| | |"
  echo "|---|---|"
  echo "| CPU | $cpu, $(nproc) cores |"
  echo "| threads | $threads, both programs |"
  if [ "$isa" = native ]; then echo "| poslab | $commit, $(build_flags) build, the $peak_isa kernel |"
  else echo "| poslab | $commit, emulated $isa machine: $(build_flags) build, ${ours_isa[*]} |"; fi
  echo "| PyTorch | ${torch_version:-none} eager, settings run: ${torch_settings:-none}${torch_isa[*]:+; ${torch_isa[*]}} |"
  echo "| peak | $peak GFLOP/s FP32 FMA ($peak_isa, $threads threads, bench_fma_peak); $flop_per_step GFLOP a step |"
  echo "| measured | $(date -u '+%Y-%m-%d %H:%M UTC'), $rounds rounds of $steps steps, highest load $(awk '$1 != "" && $6 > m {m = $6} END {printf "%.2f", m}' "$tmp/train.sum") |"
  echo
  awk -v schemes="$schemes" -v flop="$flop_per_step" -v peak="$peak" -f "$(dirname "$0")/../bench/page_table.awk" "$tmp/train.sum"
} >"$tmp/page"
{
  echo "Machine: $cpu, $(nproc) cores, $threads threads; FP32 FMA peak $peak GFLOP/s ($peak_isa); $flop_per_step GFLOP a step"
  [ "$isa" != native ] || [ -z "${BUILD_FLAGS:-}" ] || echo "poslab's build: $BUILD_FLAGS."
  [ "$isa" = native ] || echo "Emulated $isa machine: poslab built in $build (${BUILD_FLAGS:-$(sed -n 's/^CMAKE_CXX_FLAGS:STRING=//p' "$build/CMakeCache.txt")}) with ${ours_isa[*]}, PyTorch ${torch_isa[*]}."
  echo "($(date -u '+%Y-%m-%d %H:%M UTC'), $rounds rounds, medians of $steps steps; load = the"
  echo "most cores found busy with other work in the second before a figure's program started;"
  echo "above 0.3 the machine was not idle). PyTorch settings run: ${torch_settings:-none}."
  echo
  echo "| scheme | poslab tokens/s | PyTorch default | PyTorch OPENBLAS_NUM_THREADS=1 | PyTorch tcmalloc | ratio | GFLOP/s | share of FMA peak | load |"
  echo "|---|---|---|---|---|---|---|---|---|"
  for pe in $schemes; do
    o=$(get "$tmp/train.sum" ours "$pe" 3)
    row="| $pe | $o ($(get "$tmp/train.sum" ours "$pe" 4)-$(get "$tmp/train.sum" ours "$pe" 5))"
    best=0 ml=$(get "$tmp/train.sum" ours "$pe" 6)
    for p in torch-default torch-blas1 torch-tcmalloc; do
      t=$(get "$tmp/train.sum" $p "$pe" 3)
      row+=" | ${t:--} ($(get "$tmp/train.sum" $p "$pe" 4)-$(get "$tmp/train.sum" $p "$pe" 5))"
      best=$(awk -v a="$best" -v b="${t:-0}" 'BEGIN {print (b > a ? b : a)}')
      ml=$(awk -v a="$ml" -v b="$(get "$tmp/train.sum" $p "$pe" 6)" 'BEGIN {print (b > a ? b : a)}')
    done
    echo "$row $(awk -v o="$o" -v t="$best" -v f="$flop_per_step" -v p="$peak" -v l="$ml" 'BEGIN {
      g = o / 4096 * f
      printf "| %s | %.1f | %s | %s%s |", (t > 0 ? sprintf("%.2fx", o / t) : "-"), g,
        (p > 0 ? sprintf("%.0f%%", 100 * g / p) : "-"), l, (l > 0.3 ? " (busy)" : "") }')"
  done
  echo
  if [ "$eval" = 0 ]; then echo "Evaluation windows at 4096 not run (BENCH_EVAL=0)."; else
  echo "| evaluation, one window of 4096 | poslab tokens/s | PyTorch default / OPENBLAS_NUM_THREADS=1 / tcmalloc | ratio to the fastest | load |"
  echo "|---|---|---|---|---|"
  for pe in $schemes; do
    o=$(get "$tmp/eval.sum" ours "$pe" 3)
    ts=$(for p in torch-default torch-blas1 torch-tcmalloc; do t=$(get "$tmp/eval.sum" $p "$pe" 3); echo "${t:--}"; done | paste -sd/)
    awk -v pe="$pe" -v o="$o" -v ts="$ts" -v l="$(get "$tmp/eval.sum" ours "$pe" 6)" \
      -v lo="$(get "$tmp/eval.sum" ours "$pe" 4)" -v hi="$(get "$tmp/eval.sum" ours "$pe" 5)" 'BEGIN {
      n = split(ts, v, "/"); for (i = 1; i <= n; i++) if (v[i] + 0 > t) t = v[i] + 0
      gsub("/", " / ", ts)
      printf "| %s | %s (%s-%s) | %s | %s | %s%s |\n", pe, o, lo, hi, ts,
        (t > 0 ? sprintf("%.2fx", o / t) : "-"), l, (l > 0.3 ? " (busy)" : "") }'
  done
  fi
  echo
  echo "Time each program took over all rounds (bash's clock) and the machine's page faults while it"
  echo "ran (pgfault of /proc/vmstat). System time is mostly page faults; where one costs several"
  echo "microseconds (some VMs), an allocator that hands memory back to the kernel pays for it."
  echo
  echo "| program | wall s | user s | system s | system share of CPU time | page faults | faults per second |"
  echo "|---|---|---|---|---|---|---|"
  awk '{ w[$1] += $2; u[$1] += $3; s[$1] += $4; f[$1] += $5; if (!($1 in seen)) { seen[$1]; o[++n] = $1 } }
    END { for (i = 1; i <= n; i++) { p = o[i]
      printf "| %s | %.1f | %.1f | %.1f | %.0f%% | %d | %.0f |\n", (p == "ours" ? "poslab" : p), w[p], u[p], s[p],
        (u[p] + s[p] > 0 ? 100 * s[p] / (u[p] + s[p]) : 0), f[p], (w[p] > 0 ? f[p] / w[p] : 0) } }' "$tmp/res"
  echo
  echo "For docs/performance.md:"
  echo
  cat "$tmp/page"
} >"$out.tmp"
# the comparison is kept even if what follows is cut short (copied whole, then renamed)
cp "$out.tmp" "$out.part" && mv "$out.part" "$out"

section "peak RSS of one evaluation window at 8192 (target < 100 MB)"
for pe in rope alibi; do ours "$build/bench/bench_eval_long" 8192 "$pe" | tee -a "$tmp/rss"; done
{
  echo
  echo "Peak RSS, one window of 8192: $(awk '{printf "%s%s %s MB", (NR > 1 ? ", " : ""), $1, $(NF - 1)}' "$tmp/rss")."
} >>"$out.tmp"

if [ "$parts" = compare ]; then
  mv "$out.tmp" "$out"
  echo "== summary (also in $out)"
  cat "$out"
  echo "== the table for docs/performance.md"
  cat "$tmp/page"
  exit 0
fi
# The kernels one at a time (not compared with PyTorch): development figures.
section "matmul: the Tensor API against raw cblas_sgemm (environment as found${matmul_isa[*]:+, with ${matmul_isa[*]}})"
env "${matmul_isa[@]}" "$build/bench/bench_matmul" | tee "$tmp/matmul"
section "ops, forward + backward (B*T = 4096 tokens)"
ours "$build/bench/bench_ops" | tee "$tmp/ops"
# The floor under a step (scheme none): its matrix products (bench_matmul's total per step) and
# its 4 attention layers' forward + backward at T = 256 (bench_ops) cannot take less than they
# take alone; the rest of the step is everything else. One median each, so a floor is as noisy
# as those two lines.
{
  echo
  awk -v o="$(get "$tmp/train.sum" ours none 3)" -v t1="$(get "$tmp/train.sum" torch-default none 3)" \
    -v t2="$(get "$tmp/train.sum" torch-blas1 none 3)" -v t3="$(get "$tmp/train.sum" torch-tcmalloc none 3)" '
    FILENAME ~ /matmul$/ && $1 == "step_products_ms" { p = $2 }
    FILENAME ~ /ops$/ && $1 == "attention/plain" && $2 == 256 { a = 4 * $4 }
    END {
      if (!p || !a || !o) exit
      s = 4096000 / o; t = (t2 > t1 ? t2 : t1); t = (t3 > t ? t3 : t); f = 4096000 / (p + a)
      if (s < p + a) {  # timed minutes apart, not alternating: the clock may have moved
        printf "The step'"'"'s floor (scheme none): its matrix products alone took %.1f ms (bench_matmul), its 4\n", p
        printf "attention layers %.1f ms (bench_ops, T = 256), together %.1f ms: more than our median step,\n", a, p + a
        printf "%.1f ms. The machine ran slower while they ran than during the training rounds, so this\n", s
        printf "run gives no floor.\n"
        exit
      }
      printf "The step'"'"'s floor (scheme none): its matrix products alone take %.1f ms (bench_matmul), its 4\n", p
      printf "attention layers %.1f ms (bench_ops, T = 256): no step can beat %.1f ms, %.0f tokens/s\n", a, p + a, f
      printf "%sOur median step took %.1f ms; %.1f ms (%.0f%%) of it went to\n",
        (t > 0 ? sprintf("(%.2fx the fastest PyTorch median). ", f / t) : ""), s, s - p - a, 100 * (s - p - a) / s
      printf "everything else: the element-wise ops, layer norms, the optimizer, threads waiting, and\n"
      printf "the products and attention running slower inside a step than alone (colder caches).\n"
      # perf profiles of the step (the archive, bench/archive/RESULTS.md: "Where the emulated
      # AVX2 step goes") bound the share outside the products and attention from below; much
      # less left over means the two ran slow
      if (s - p - a < 0.1 * s)
        printf "That is under 10%%, below the 17-30%% that perf profiles of the step show: the two ran\nslower alone than in the step, and this floor is set too high.\n"
    }' "$tmp/matmul" "$tmp/ops"
} >>"$out.tmp"
section "the study's schedule: one run at a time on all cores vs one run per core"
env "${ours_isa[@]}" bench/study_schedule.sh "$build" | tee "$tmp/schedule"
{
  echo
  echo "Study schedule (bench/study_schedule.sh):"
  tail -3 "$tmp/schedule" | sed 's/^/    /'
} >>"$out.tmp"
mv "$out.tmp" "$out"
echo "== summary (also in $out)"
cat "$out"
echo "== the table for docs/performance.md"
cat "$tmp/page"
