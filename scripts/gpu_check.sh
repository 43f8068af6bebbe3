#!/usr/bin/env bash
# gpu_check.sh — the GPU check of issue 7, in one call on a machine with an NVIDIA GPU:
#   1. tests   the [cuda] tests: every op, and a training step of the canonical model for every
#              scheme, on the GPU against the CPU (test_cuda)
#   2. bench   train-step tokens/s of the canonical config (d=128, 4 layers, 4 heads, T=256) at
#              batch 16 and 64, median of 6 steps per scheme: ours, and the same model in
#              PyTorch eager on the same GPU (bench/torch_bench.py: the written-out attention
#              as on the CPU, and with F.scaled_dot_product_attention); one evaluation window
#              of 4096 and 8192 tokens
#   3. study   the whole study, `poslab experiments --device cuda`, timed, into a scratch folder
# Figures go to $OUT/gpu_results.md (markdown), everything printed to $OUT/gpu_check.log; the
# study's REPORT.md and runs.csv are copied beside them.
#
# Usage, from the repository root:   scripts/gpu_check.sh [all|tests|bench|study]
# The binaries come from .gpu/bundle.tar.xz (`make gpu-bundle` on a machine with poslab's
# Debian packages; carry .gpu to the GPU machine). Without the bundle it builds here with cmake,
# which needs OpenBLAS and Catch2 there.
# Environment: OUT (results folder; default gpu-results), BUDGET (seconds for the whole script,
# default 540: each stage is cut short at its own limit, the study gets what is left),
# STEPS (training steps of the study's main runs, default the study's own).
set -uo pipefail
what=${1:-all}
case $what in all | tests | bench | study) ;; *)
  echo "usage: scripts/gpu_check.sh [all|tests|bench|study]" >&2
  exit 2
  ;;
esac
OUT=${OUT:-gpu-results}
BUDGET=${BUDGET:-540}
WORK=${WORK:-${TMPDIR:-/tmp}/poslab-gpu}
mkdir -p "$OUT" "$WORK"
LOG="$OUT/gpu_check.log"
REPORT="$OUT/gpu_results.md"
T0=$(date +%s)
left() { echo $((BUDGET - ($(date +%s) - T0))); }
limit() { local l; l=$(left); echo $((l < $1 ? (l > 5 ? l : 5) : $1)); }  # min(wanted, left)
say() { echo "== [$(($(date +%s) - T0))s] $*"; }
note() { printf '%s\n' "$*" >>"$REPORT"; }
want() { [ "$what" = all ] || [ "$what" = "$1" ]; }

main() {
  note "# poslab GPU check ($what), $(date -u '+%Y-%m-%d %H:%M UTC')"
  note ""
  note "GPU: $(nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader 2>/dev/null || echo 'nvidia-smi not found')"
  note "CPU: $(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ *//')"
  note "PyTorch: $(python3 -c 'import torch; print(torch.__version__, "CUDA", torch.version.cuda)' 2>/dev/null || echo 'not found')"

  # ---- the binaries
  if [ -f .gpu/bundle.tar.xz ]; then
    say "unpacking .gpu/bundle.tar.xz into $WORK"
    rm -rf "$WORK/bin" "$WORK/lib" "$WORK/data"
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
    [ -d "$WORK/data/fortunes" ] || "$WORK/bin/poslab" prepare --corpus fortunes --out "$WORK/data/fortunes"
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

  # ---- 2. benchmarks
  # tokens/s from bench_train_step's table ("rope 123456 0.0123 -") and torch_bench.py's lines
  # ("torch rope train 123456")
  ours_tps() { awk -v p="$2" '$1 == p {print $2}' "$1" 2>/dev/null | head -1; }
  torch_tps() { awk -v p="$2" -v k="$3" '$1 == "torch" && $2 == p && $3 == k {print $4}' "$1" 2>/dev/null | head -1; }
  if want bench; then
    for B in 16 64; do
      say "bench_train_step, batch $B"
      ours timeout "$(limit 120)" "$BIN/bench_train_step" 6 "$B" cuda | tee "$WORK/ours_$B.txt"
      for attn in explicit sdpa; do
        say "PyTorch eager, batch $B, $attn attention"
        PYTHONUNBUFFERED=1 timeout "$(limit 150)" python3 bench/torch_bench.py "$(nproc)" 6 cuda "$B" "$attn" |
          tee "$WORK/torch_${attn}_$B.txt"
      done
    done
    note "## Train step, tokens/s (median of 6 steps), canonical config"
    note ""
    note "| scheme | batch | poslab | PyTorch eager | ratio | PyTorch eager + SDPA | ratio |"
    note "|---|---|---|---|---|---|---|"
    for B in 16 64; do
      for pe in none learned sinusoidal rope alibi; do
        o=$(ours_tps "$WORK/ours_$B.txt" "$pe")
        e=$(torch_tps "$WORK/torch_explicit_$B.txt" "$pe" train)
        s=$(torch_tps "$WORK/torch_sdpa_$B.txt" "$pe" train)
        note "$(awk -v pe="$pe" -v B="$B" -v o="${o:-0}" -v e="${e:-0}" -v s="${s:-0}" 'BEGIN {
          r1 = e > 0 ? sprintf("%.2fx", o / e) : "-"; r2 = s > 0 ? sprintf("%.2fx", o / s) : "-"
          printf "| %s | %d | %.0f | %.0f | %s | %.0f | %s |", pe, B, o, e, r1, s, r2 }')"
      done
    done
    note ""
    note "Ours as printed (issue s: the host's time to issue forward and backward; close to s/step"
    note "means the launches, not the GPU's work, set the pace):"
    note ""
    for B in 16 64; do sed 's/^/    /' "$WORK/ours_$B.txt" >>"$REPORT"; done
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
      note "    torch $pe eval4096: $(torch_tps "$WORK/torch_explicit_16.txt" "$pe" eval4096) tokens/s (explicit), $(torch_tps "$WORK/torch_sdpa_16.txt" "$pe" eval4096) (SDPA)"
    done
    note ""
  fi

  # ---- 3. the study
  if want study; then
    S=$WORK/study
    rm -rf "$S"
    mkdir -p "$S/data"
    cp -r "$WORK/data/fortunes" "$S/data/fortunes"  # prepared: the study reuses it
    lim=$(limit 100000)
    say "poslab experiments --device cuda (limit ${lim}s)"
    t=$(date +%s)
    ours timeout "$lim" "$BIN/poslab" experiments --device cuda --out "$S" ${STEPS:+--steps "$STEPS"}
    rc=$?
    secs=$(($(date +%s) - t))
    note "## The study: poslab experiments --device cuda${STEPS:+ --steps $STEPS}"
    note ""
    if [ $rc = 0 ]; then
      note "finished in ${secs} s ($((secs / 60)) min $((secs % 60)) s)"
      cp "$S/REPORT.md" "$OUT/study_REPORT.md"
      cp "$S/runs.csv" "$OUT/study_runs.csv"
    elif [ $rc = 124 ]; then
      note "stopped at the ${lim} s limit after ${secs} s; rerun with scripts/gpu_check.sh study to"
      note "give it the whole budget"
    else
      note "failed: exit code $rc after ${secs} s (the error is at the end of gpu_check.log)"
    fi
    note ""
  fi
  say "done"
  note "Total: $(($(date +%s) - T0)) s of a ${BUDGET} s budget."
}

# everything printed goes to the log too; the pipeline ends only when tee has written it all
main 2>&1 | tee -a "$LOG"
exit "${PIPESTATUS[0]}"
