#!/usr/bin/env bash
# `make bench`: every benchmark in bench/, each validating its result before it times.
# PyTorch (Debian's python3-torch, for /usr/bin/python3) runs in the same invocation when
# installed, with the same threads, both as found and with OPENBLAS_NUM_THREADS=1 (the faster
# counts); the ratios ours/PyTorch are printed at the end.
set -euo pipefail
build=${1:-build/release}
threads=${THREADS:-$(nproc)}
export OMP_NUM_THREADS=$threads
echo "== $(date -u '+%Y-%m-%d %H:%M UTC'), $(nproc) cores, OPENBLAS_CORETYPE=${OPENBLAS_CORETYPE:-unset}, OMP_WAIT_POLICY=${OMP_WAIT_POLICY:-unset}"
echo "== matmul: the Tensor API against raw cblas_sgemm"
"$build/bench/bench_matmul"
echo "== the same with POSLAB_GEMM=blas: both sides OpenBLAS, the ratio is the framework's overhead"
POSLAB_GEMM=blas "$build/bench/bench_matmul"
echo "== ops, forward + backward (B*T = 4096 tokens)"
"$build/bench/bench_ops"
echo "== train step, canonical config (d=128, 4 layers, 4 heads, T=256, batch 16)"
ours=$("$build/bench/bench_train_step" 6 16)
echo "$ours"
echo "== the same with POSLAB_GEMM=blas (OpenBLAS's sgemm instead of ours)"
POSLAB_GEMM=blas "$build/bench/bench_train_step" 4 16
echo "== one evaluation window (peak RSS per process)"
evals=""
for L in 4096 8192; do
  for pe in rope alibi; do evals+=$("$build/bench/bench_eval_long" $L $pe)$'\n'; done
done
printf "%s" "$evals"
if /usr/bin/python3 -c "import torch" 2>/dev/null; then
  echo "== PyTorch eager, same model, $threads threads"
  t1=$(/usr/bin/python3 bench/torch_bench.py "$threads" 6)
  t2=$(OPENBLAS_NUM_THREADS=1 /usr/bin/python3 bench/torch_bench.py "$threads" 6)
  echo "$t1" | sed 's/^/as found: /'
  echo "$t2" | sed 's/^/OPENBLAS_NUM_THREADS=1: /'
  echo "== ours / PyTorch (its faster setting)"
  for pe in none learned sinusoidal rope alibi; do
    o=$(echo "$ours" | awk -v p=$pe '$1==p {print $2}')
    a=$(echo "$t1" | awk -v p=$pe '$2==p && $3=="train" {print $4}')
    b=$(echo "$t2" | awk -v p=$pe '$2==p && $3=="train" {print $4}')
    best=$(( a > b ? a : b ))
    awk -v pe=$pe -v o=$o -v t=$best 'BEGIN {printf "%-11s train %6.0f vs %6.0f tokens/s: %.2fx\n", pe, o, t, o/t}'
  done
  for pe in rope alibi; do
    o=$(printf "%s" "$evals" | awk -v p=$pe '$1==p && $2=="L=4096" {print $5}')
    a=$(echo "$t1" | awk -v p=$pe '$2==p && $3=="eval4096" {print $4}')
    b=$(echo "$t2" | awk -v p=$pe '$2==p && $3=="eval4096" {print $4}')
    best=$(( a > b ? a : b ))
    awk -v pe=$pe -v o=$o -v t=$best 'BEGIN {printf "%-11s eval@4096 %6.0f vs %6.0f tokens/s: %.2fx\n", pe, o, t, o/t}'
  done
else
  echo "== PyTorch: /usr/bin/python3 has no torch (apt-get install python3-torch); skipped"
fi
