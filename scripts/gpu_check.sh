#!/usr/bin/env bash
# gpu_check.sh — the GPU check of issue 7, in one call on a machine with an NVIDIA GPU:
#   1. tests   the [cuda] tests: every op, and a training step of the canonical model for every
#              scheme, on the GPU against the CPU (test_cuda)
#   2. bench   train-step tokens/s of the canonical config (d=128, 4 layers, 4 heads, T=256) at
#              batch 16 and 64, ROUNDS (3) rounds of BENCH_STEPS (20) steps per scheme, the
#              programs alternating: ours, and the same model in
#              PyTorch eager on the same GPU (bench/torch_bench.py: the written-out attention
#              as on the CPU, and with F.scaled_dot_product_attention; COMPILE=1 adds SDPA under
#              torch.compile, whose compilations take minutes: with few SCHEMES); one evaluation
#              window of 4096 and 8192 tokens
#   3. quick   the quick study, `poslab experiments --quick --device cuda` (what
#              `make experiments-quick DEVICE=cuda` runs), timed
#   4. study   the whole study, `poslab experiments --device cuda`, timed, into a scratch folder
#   profile    (not part of all) GPU time per kernel of a batch-16 train step (ncu),
#              PROFILE_SCHEMES (default rope,t5)
#   cpu        (not part of all) the host CPU against PyTorch on the CPU, as `make bench` measures
#              it (issue 13), with the AVX-512 build and the AVX2 one: CPU_ISAS, CPU_THREADS,
#              CPU_BUDGET, CPU_EVAL, BENCH_SCHEMES
#   sanitize   (not part of all) compute-sanitizer's racecheck and memcheck over the tests of
#              our own kernels: attention, RoPE, LayerNorm/GELU/softmax, reductions, AdamW
# Figures go to $OUT/gpu_results.md (markdown), everything printed to $OUT/gpu_check.log; the
# study's REPORT.md and runs.csv are copied beside them.
#
# Usage, from the repository root:   scripts/gpu_check.sh [all|tests|bench|profile|cpu|quick|study|sanitize]
# (several at once: scripts/gpu_check.sh tests bench quick)
# The binaries come from .gpu/bundle.tar.xz (`make gpu-bundle` on a machine with poslab's
# Debian packages; carry .gpu to the GPU machine). Without the bundle it builds here with cmake,
# which needs OpenBLAS and Catch2 there.
# Environment: OUT (results folder; default gpu-results), BUDGET (seconds for the whole script,
# default 540: each stage is cut short at its own limit, the study gets what is left),
# ROUNDS, BENCH_STEPS, SCHEMES and COMPILE (bench; e.g. SCHEMES=rope,t5), SANITIZE_BUDGET (seconds
# for sanitize, default 150),
# STEPS (training steps of the study's main runs, default the study's own).
set -uo pipefail
what=" ${*:-all} "
for w in $what; do
  case $w in all | tests | bench | profile | cpu | quick | study | sanitize) ;; *)
    echo "gpu_check.sh: unknown part '$w'; valid: all tests bench profile cpu quick study sanitize" >&2
    exit 2
    ;;
  esac
done
OUT=${OUT:-gpu-results}
BUDGET=${BUDGET:-540}
ROUNDS=${ROUNDS:-3}
BENCH_STEPS=${BENCH_STEPS:-20}
SANITIZE_BUDGET=${SANITIZE_BUDGET:-150}
SCHEMES=${SCHEMES:-none,learned,sinusoidal,rope,alibi,t5}
PROFILE_SCHEMES=${PROFILE_SCHEMES:-rope,t5}
WORK=${WORK:-${TMPDIR:-/tmp}/poslab-gpu}
mkdir -p "$OUT" "$WORK"
LOG="$OUT/gpu_check.log"
REPORT="$OUT/gpu_results.md"
T0=$(date +%s)
left() { echo $((BUDGET - ($(date +%s) - T0))); }
limit() { local l; l=$(left); echo $((l < $1 ? (l > 5 ? l : 5) : $1)); }  # min(wanted, left)
say() { echo "== [$(($(date +%s) - T0))s] $*"; }
note() { printf '%s\n' "$*" >>"$REPORT"; }
only_by_name=" sanitize profile cpu "  # parts that `all` leaves out
want() { [[ $what == *" $1 "* ]] || { [[ $what == *" all "* ]] && [[ $only_by_name != *" $1 "* ]]; }; }

main() {
  note "# poslab GPU check (${what:1:-1}), $(date -u '+%Y-%m-%d %H:%M UTC')"
  note ""
  note "GPU: $(nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader 2>/dev/null || echo 'nvidia-smi not found')"
  note "CPU: $(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ *//')," \
    "flags: $(grep -m1 '^flags' /proc/cpuinfo | tr ' ' '\n' | grep -xE 'avx2|fma|avx512f' | tr '\n' ' ')"
  note "Load average at the start: $(cut -d' ' -f1-3 /proc/loadavg)"
  note "PyTorch: $(python3 -c 'import torch; print(torch.__version__, "CUDA", torch.version.cuda)' 2>/dev/null || echo 'not found')"

  # ---- the binaries
  if [ -f .gpu/bundle.tar.xz ]; then
    say "unpacking .gpu/bundle.tar.xz into $WORK"
    rm -rf "${WORK:?}/bin" "${WORK:?}/lib" "${WORK:?}/data"
    tar -C "$WORK" -xJf .gpu/bundle.tar.xz || { note "cannot unpack .gpu/bundle.tar.xz"; return 1; }
    note "Binaries: .gpu/bundle.tar.xz, $(sed -n 2p "$WORK/MANIFEST")"
  else
    say "no .gpu/bundle.tar.xz: building here (needs cmake, ninja, OpenBLAS, Catch2)"
    if ! { cmake -S . -B build/gpu -G Ninja -DCMAKE_BUILD_TYPE=Release -DPOSLAB_CUDA=ON \
      -DCMAKE_CUDA_ARCHITECTURES=90 && cmake --build build/gpu --target poslab test_cuda \
      bench_train_step bench_eval_long; }; then
      note "No bundle, and the build here failed (see gpu_check.log): run make gpu-bundle where"
      note "poslab's Debian packages are installed and carry .gpu."
      return 1
    fi
    mkdir -p "$WORK/bin" "$WORK/lib"
    for b in train/poslab tests/test_cuda bench/bench_train_step bench/bench_eval_long; do
      ln -sf "$PWD/build/gpu/$b" "$WORK/bin/"
    done
    for corpus in pystdlib; do
      [ -d "$WORK/data/$corpus" ] || "$WORK/bin/poslab" prepare --corpus "$corpus" --out "$WORK/data/$corpus"
    done
    note "Binaries: built here in build/gpu"
  fi
  BIN=$WORK/bin

  # ---- cuBLAS: poslab opens libcublas.so.13 when it first uses the GPU
  find_cublas() {
    local d site
    for d in /usr/local/cuda/lib64 /usr/local/cuda-*/lib64 /usr/local/cuda*/targets/x86_64-linux/lib \
      /usr/lib/x86_64-linux-gnu; do
      [ -e "$d/libcublas.so.13" ] && { echo "$d"; return; }
    done
    for site in $(python3 -c 'import site; print(" ".join(site.getsitepackages()))' 2>/dev/null); do
      [ -d "$site/nvidia" ] || continue
      d=$(find "$site/nvidia" -maxdepth 4 -name 'libcublas.so.13' -printf '%h\n' 2>/dev/null | head -1)
      [ -n "$d" ] && { echo "$d"; return; }
    done
  }
  CUBLAS=$(find_cublas)
  [ -n "$CUBLAS" ] || note "**libcublas.so.13 not found** under /usr/local/cuda* or Python's site-packages/nvidia"
  # Our binaries only: the bundled libraries must not reach Python's.
  ours() { LD_LIBRARY_PATH="$WORK/lib:${CUBLAS}${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}" "$@"; }
  note "cuBLAS: ${CUBLAS:-missing}"
  note ""

  # ---- 1. tests
  if want tests; then
    say "test_cuda"
    ours timeout "$(limit 240)" "$BIN/test_cuda" --durations yes | tee "$WORK/tests.txt"
    rc=${PIPESTATUS[0]}
    note "## [cuda] tests"
    note ""
    note "exit code $rc: $(grep -E '^(All tests passed|test cases:|SKIP)' "$WORK/tests.txt" | tail -1)"
    grep -E 'FAILED|with expansion|REQUIRE' "$WORK/tests.txt" | head -20 | sed 's/^/    /' >>"$REPORT"
    note ""
  fi

  # ---- compute-sanitizer over the tests of our own kernels (cuBLAS's are not ours to check)
  if want sanitize; then
    note "## compute-sanitizer"
    note ""
    if ! command -v compute-sanitizer >/dev/null; then
      note "compute-sanitizer not found"
    else
      t_end=$(($(date +%s) + SANITIZE_BUDGET))
      # Catch2 patterns: a comma in a test's name would split it in two
      for t in "cuda: fused attention equals*" "cuda: a T5 model*" "cuda: RoPE with every scaling*" \
        "cuda: LayerNorm*" "cuda: softmax*" "cuda: sums*" "cuda: AdamW*"; do
        for tool in memcheck racecheck; do
          [ "$(date +%s)" -lt "$t_end" ] || { note "- $tool, \`$t\`: not run (SANITIZE_BUDGET spent)"; continue; }
          say "compute-sanitizer --tool $tool: $t"
          POSLAB_CUDA_EXACT_ALLOC=1 ours timeout "$(limit $((t_end - $(date +%s) + 5)))" compute-sanitizer --tool "$tool" --error-exitcode 3 \
            "$BIN/test_cuda" "$t" >"$WORK/san.txt" 2>&1
          rc=$?
          tail -5 "$WORK/san.txt"
          grep -q '^All tests passed' "$WORK/san.txt" || [ $rc != 0 ] || rc="0, but no test ran"
          note "- $tool, \`$t\`: exit $rc, $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY' "$WORK/san.txt" | tail -1)"
          [ "$rc" = 0 ] || grep -m5 -E 'Invalid|Race|hazard|Error' "$WORK/san.txt" | sed 's/^/    /' >>"$REPORT"
        done
      done
    fi
    note ""
  fi

  # ---- 2. benchmarks
  # tokens/s from bench_train_step's table ("rope 123456 0.0123 -") and torch_bench.py's lines
  # ("torch rope train 123456")
  # shellcheck disable=SC2317  # both are called through over_rounds
  ours_tps() { awk -v p="$2" '$1 == p {print $2}' "$1" 2>/dev/null | head -1; }
  # shellcheck disable=SC2317
  torch_tps() { awk -v p="$2" -v k="$3" '$1 == "torch" && $2 == p && $3 == k {print $4}' "$1" 2>/dev/null | head -1; }
  # median and range of the numbers on standard input: "12345 (12000-12800)"
  med() { sort -n | awk '{v[NR] = $1} END {if (NR == 0) {print "-"; exit}
    m = NR % 2 ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2
    printf "%.0f (%.0f-%.0f)\n", m, v[1], v[NR]}'; }
  # over_rounds GETTER PREFIX ARGS...: med of GETTER PREFIX_<round>.txt ARGS... over the rounds
  over_rounds() {
    local get=$1 prefix=$2 r
    shift 2
    for r in $(seq "$ROUNDS"); do "$get" "${prefix}_$r.txt" "$@"; done | med
  }
  if want bench; then
    # ROUNDS rounds alternate ours and PyTorch (the order flipped every round), BENCH_STEPS
    # timed steps each after the programs' own warm-up; each figure is the median over rounds.
    for r in $(seq "$ROUNDS"); do
      for B in 16 64; do
        progs="ours explicit sdpa${COMPILE:+ compile}"
        [ $((r % 2)) = 0 ] && progs="${COMPILE:+compile }sdpa explicit ours"
        for p in $progs; do
          say "round $r, batch $B: $p"
          if [ "$p" = ours ]; then
            ours timeout "$(limit 120)" "$BIN/bench_train_step" "$BENCH_STEPS" "$B" cuda "$SCHEMES" | tee "$WORK/ours_${B}_$r.txt"
          else  # PyTorch with its own defaults: none of our variables in its environment
            env -u OMP_WAIT_POLICY -u GOMP_SPINCOUNT PYTHONUNBUFFERED=1 \
              timeout "$(limit 150)" python3 bench/torch_bench.py "$(nproc)" "$BENCH_STEPS" cuda "$B" "$p" "$SCHEMES" |
              tee "$WORK/torch_${p}_${B}_$r.txt"
          fi
        done
      done
    done
    note "## Train step, tokens/s, canonical config: median (range) of $ROUNDS rounds, each the median of $BENCH_STEPS steps"
    note ""
    # a torch.compile column with COMPILE=1 (its files are absent otherwise: no column)
    cols="| scheme | batch | poslab | PyTorch eager | ratio | PyTorch eager + SDPA | ratio |"
    [ -n "${COMPILE:-}" ] && cols="$cols SDPA + torch.compile | ratio |"
    note "$cols"
    note "$(echo "$cols" | sed 's/[^|]*|/---|/g; s/^---//')"
    for B in 16 64; do
      for pe in ${SCHEMES//,/ }; do
        o=$(over_rounds ours_tps "$WORK/ours_$B" "$pe")
        e=$(over_rounds torch_tps "$WORK/torch_explicit_$B" "$pe" train)
        s=$(over_rounds torch_tps "$WORK/torch_sdpa_$B" "$pe" train)
        c=${COMPILE:+$(over_rounds torch_tps "$WORK/torch_compile_$B" "$pe" train)}
        note "$(awk -v pe="$pe" -v B="$B" -v o="$o" -v e="$e" -v s="$s" -v c="$c" 'BEGIN {
          o1 = o + 0; e1 = e + 0; s1 = s + 0; c1 = c + 0
          r1 = o1 > 0 && e1 > 0 ? sprintf("%.2fx", o1 / e1) : "-"
          r2 = o1 > 0 && s1 > 0 ? sprintf("%.2fx", o1 / s1) : "-"
          r3 = o1 > 0 && c1 > 0 ? sprintf("%.2fx", o1 / c1) : "-"
          printf "| %s | %d | %s | %s | %s | %s | %s |", pe, B, o, e, r1, s, r2
          if (c != "") printf " %s | %s |", c, r3 }')"
      done
    done
    note ""
    note "Ours as printed (issue s: the host's time to issue forward and backward; close to s/step"
    note "means the launches, not the GPU's work, set the pace):"
    note ""
    for B in 16 64; do sed 's/^/    /' "$WORK/ours_${B}_1.txt" >>"$REPORT"; done
    note ""
    note "## One evaluation window (no gradient), ours on the GPU; PyTorch eager at 4096 for reference"
    note ""
    for L in 4096 8192; do
      for pe in rope alibi; do
        line=$(ours timeout "$(limit 60)" "$BIN/bench_eval_long" "$L" "$pe" cuda)
        echo "$line"
        note "    $line"
      done
    done
    for pe in rope alibi; do
      e=$(over_rounds torch_tps "$WORK/torch_explicit_16" "$pe" eval4096)
      s=$(over_rounds torch_tps "$WORK/torch_sdpa_16" "$pe" eval4096)
      note "    torch $pe eval4096: $e tokens/s (explicit), $s (SDPA)"
    done
    note ""
  fi

  # ---- profile: where a batch-16 training step's GPU time goes, kernel by kernel: ncu's
  # gpu__time_duration (one replay pass per kernel, no counter sets) over bench_train_step with
  # 2 timed steps, summed by kernel name (bench/gpu/kernel_table.py). PROFILE_SCHEMES (rope,t5).
  if want profile; then
    note "## Profile: GPU time per kernel, batch-16 train step, all kernels of 4 steps (2 warm-up, 2 timed)"
    note ""
    NCU=$(command -v ncu || echo /usr/local/cuda/bin/ncu)
    for pe in ${PROFILE_SCHEMES//,/ }; do
      say "profile $pe"
      if ours timeout "$(limit 120)" "$NCU" --clock-control none --metrics gpu__time_duration.sum \
        --csv --print-units base "$BIN/bench_train_step" 2 16 cuda "$pe" >"$WORK/ncu_$pe.csv" 2>"$WORK/ncu_$pe.err" &&
        python3 bench/gpu/kernel_table.py "$WORK/ncu_$pe.csv" >"$WORK/prof_$pe.md"; then
        note "### $pe"
        note ""
        cat "$WORK/prof_$pe.md" >>"$REPORT"
        note ""
      else
        note "ncu ($NCU) failed for $pe:"
        tail -3 "$WORK/ncu_$pe.err" | sed 's/^/    /' >>"$REPORT"
      fi
    done
  fi

  # Where two threads land. On the H200 machine's host the FMA peak on 2 threads changed widely
  # within minutes (the figures: bench/archive/RESULTS.md): two threads on one core's two
  # hyperthreads share its FMA units (as does a neighbour's work on a sibling). fma_pairs
  # notes the peak with both threads pinned to one core's two logical CPUs and to two cores
  # (taskset; the benchmarks themselves run unpinned, as users run them).
  fma_pairs() {
    local fma=$BIN/bench_fma_peak ca cb cc cpus
    [ -x "$BIN/v4/bench_fma_peak" ] && fma=$BIN/v4/bench_fma_peak
    # the first allowed CPU, a sibling on its core and a CPU of another core ("-": none)
    read -r ca cb cc < <(python3 -c '
import os
def core(c):
    t = "/sys/devices/system/cpu/cpu%d/topology/" % c
    return tuple(open(t + f).read().strip() for f in ("physical_package_id", "core_id"))
cpus = sorted(os.sched_getaffinity(0)); a = cpus[0]
same = [c for c in cpus[1:] if core(c) == core(a)]
other = [c for c in cpus[1:] if core(c) != core(a)]
print(a, same[0] if same else "-", other[0] if other else "-")' 2>/dev/null || echo "- - -")
    for cpus in "$ca,$cb one core's two logical CPUs" "$ca,$cc two cores"; do
      if [[ $cpus == *-* ]]; then note "FMA peak ($1), 2 threads on ${cpus#* }: no such pair here"; continue; fi
      note "FMA peak ($1), 2 threads pinned to CPUs ${cpus%% *} (${cpus#* }): $(LD_LIBRARY_PATH=$WORK/lib \
        OMP_NUM_THREADS=2 taskset -c "${cpus%% *}" "$fma" | awk '{printf "%s %s GFLOP/s; ", $2, $4}')"
    done
  }

  # ---- cpu: the host CPU of this machine, ours against PyTorch on the CPU: issue 13's
  # comparison (scripts/bench.sh, BENCH_PARTS=compare: the training step of every scheme, with
  # CPU_EVAL=1 one evaluation window of 4096 too, RSS at 8192), CPU_THREADS (2) threads, ROUNDS
  # rounds of BENCH_STEPS steps. CPU_ISAS (default "native avx2"): native runs the x86-64-v4 build
  # (bin/v4: what a build for an AVX-512 machine runs), avx2 the x86-64-v3 build with
  # POSLAB_ISA=avx2 and PyTorch capped at AVX2 (bench.sh's BENCH_ISA=avx2). PyTorch as users
  # run it (its defaults) and with tcmalloc preloaded (bundled from Debian); not
  # OPENBLAS_NUM_THREADS=1, which does nothing to a PyTorch built on oneMKL. Each ISA gets at
  # most CPU_BUDGET seconds (default 330), sized from the rounds' times of the H200 host's run
  # (bench/archive/RESULTS.md) so that, without the evaluation windows (the default,
  # CPU_EVAL=0), three rounds of one ISA fit one call of the device tool.
  # BENCH_SCHEMES (space-separated) times a subset.
  if want cpu; then
    note "## The host CPU: poslab against PyTorch on the CPU (scripts/bench.sh), ${CPU_THREADS:-2} threads"
    note ""
    note "lscpu: $(lscpu | sed -n 's/^Model name: *//p' | head -1); flags: $(grep -m1 '^flags' /proc/cpuinfo |
      tr ' ' '\n' | grep -E '^(avx|fma|amx)' | tr '\n' ' ')"
    note "PyTorch BLAS: $(python3 -c 'import torch; print(torch.__config__.show())' 2>/dev/null |
      grep -oE 'BLAS_INFO=[^,]*|USE_MKL=[A-Z]+|USE_MKLDNN=[A-Z]+' | tr '\n' ' ')"
    note "topology: $(lscpu | grep -E '^(Thread|Core|Socket|NUMA node)\(s\)' | sed 's/:  */ /' |
      paste -sd ';' -); allowed CPUs: $(sed -n 's/^Cpus_allowed_list:[[:space:]]*//p' /proc/self/status)"
    fma_pairs "before the runs"
    note ""
    tcm=$WORK/lib/tcmalloc/libtcmalloc_minimal.so.4
    settings="torch-default"
    [ -f "$tcm" ] && settings+=" torch-tcmalloc"
    for isa in ${CPU_ISAS:-native avx2}; do
      d=$WORK/cpu-$isa src=$BIN march=x86-64-v3
      if [ "$isa" = native ] && [ -d "$BIN/v4" ]; then src=$BIN/v4 march=x86-64-v4; fi
      mkdir -p "$d/bench"
      for b in bench_train_step bench_eval_long bench_fma_peak; do ln -sf "$src/$b" "$d/bench/"; done
      say "cpu: scripts/bench.sh, $isa ($march build)"
      BENCH_ISA=$isa THREADS=${CPU_THREADS:-2} ROUNDS=$ROUNDS STEPS=$BENCH_STEPS BENCH_PARTS=compare \
        BENCH_EVAL=${CPU_EVAL:-0} BUILD_FLAGS=-march=$march \
        PYTHON=$(command -v python3) OURS_LIBS=$WORK/lib TCMALLOC=$tcm TORCH_SETTINGS=$settings \
        BENCH_OUT=$d/summary.md timeout "$(limit "${CPU_BUDGET:-330}")" scripts/bench.sh "$d"
      rc=$? cut=""
      [ $rc = 124 ] && cut=" (cut at its budget)"
      note "### $isa: the $march build, exit code $rc$cut"
      note ""
      if [ -f "$d/summary.md" ]; then cat "$d/summary.md" >>"$REPORT"; else note "no summary"; fi
      note ""
    done
    fma_pairs "after the runs"
  fi

  # ---- 3. and 4. the quick study and the whole study, timed, each into $WORK/<part>. The
  # folder is kept, so a rerun (scripts/gpu_check.sh study) reuses the runs that finished.
  run_study() {  # run_study PART LIMIT TITLE [poslab experiments arguments]
    local part=$1 lim title=$3 dir=$WORK/$1 t rc secs
    lim=$(limit "$2")
    shift 3
    mkdir -p "$dir/data"
    cp -rn "$WORK/data/." "$dir/data/"  # the prepared corpora: the study reuses them
    say "$title (limit ${lim}s)"
    t=$(date +%s)
    ours timeout "$lim" "$BIN/poslab" experiments --device cuda --out "$dir" "$@"
    rc=$?
    secs=$(($(date +%s) - t))
    note "## $title"
    note ""
    case $rc in
      0)
        note "finished in ${secs} s ($((secs / 60)) min $((secs % 60)) s)"
        cp "$dir/REPORT.md" "$OUT/${part}_REPORT.md"
        [ -f "$dir/runs.csv" ] && cp "$dir/runs.csv" "$OUT/${part}_runs.csv"
        ;;
      124)
        note "stopped at the ${lim} s limit; scripts/gpu_check.sh $part goes on from there (finished"
        note "runs are reused). Last progress line:"
        note "    $(grep -E '^\[[0-9]+/[0-9]+\]' "$LOG" | tail -1)"
        ;;
      *) note "failed: exit code $rc after ${secs} s (the error is at the end of gpu_check.log)" ;;
    esac
    note ""
  }
  want quick && run_study quick 300 "The quick study: poslab experiments --quick --device cuda" --quick
  want study && run_study study 100000 \
    "The study: poslab experiments --device cuda${STEPS:+ --steps $STEPS}" ${STEPS:+--steps "$STEPS"}
  say "done"
  note "Total: $(($(date +%s) - T0)) s of a ${BUDGET} s budget."
}

# everything printed goes to the log too; the pipeline ends only when tee has written it all
main 2>&1 | tee -a "$LOG"
exit "${PIPESTATUS[0]}"
