# shellcheck shell=bash
# step_gflop.sh — the GFLOP one canonical training step executes (d = 128, 4 layers, 4 heads,
# T = 256, batch 16, V = 105), by the sgemm kernel that runs it (sourced, not run). The
# derivation is on docs/performance.md ("The FLOP count"): the Linear layers' products in full,
# attention's 7 products per head (forward 2, backward 5 with the scores rebuilt) over the
# causal triangle, plus the masked register tiles the kernel cannot skip, which depend on its
# tile (AVX2 6 x 16, AVX-512 12 x 32); without our kernel (POSLAB_ISA=generic) OpenBLAS
# computes whole row blocks. scripts/bench.sh and bench/log_summary.sh divide by it;
# bench/train_step.cpp holds the same figures.
step_gflop() {
  case "$1" in
  avx512) echo 23.94 ;;
  avx2) echo 23.63 ;;
  *) echo 24.09 ;;
  esac
}
