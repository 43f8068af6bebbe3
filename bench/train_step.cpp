// train_step.cpp — tokens/s of one training step of the canonical config (d=128, 4 layers,
// 4 heads, T=256, batch 16) per scheme: forward, backward, clipping, AdamW. Median of several
// steps after warm-up. Validates first: the loss of the first step is finite and near log V.
// On the GPU each timed step ends with a synchronisation, so it counts the GPU's work; the
// `issue s` column is the median time the host took to issue forward and backward (their
// launches return before the GPU has run them; clipping then waits for the GPU): when it is
// close to s/step, the host's launches, not the GPU's work, set the pace.
// On the CPU the last column is the step's GFLOP/s, from the multiply-adds a step of the
// canonical config executes (step_gflop: forward, backward with attention's scores rebuilt, the
// causal half of attention only; linear in the batch); `make bench` divides it by the
// machine's measured FMA peak (bench_fma_peak).
// Usage: bench_train_step [steps=6] [batch=16] [device=cpu|cuda] [schemes=all]
// schemes: one, or several comma-separated, timed in that order (`make bench` starts each round
// at another scheme, so that none is always the process's first); all: pe_names()' order.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>

#include "bench/bench_util.h"
#include "nn/gpt.h"
#include "tensor/device.h"
#include "tensor/sgemm.h"
#include "train/optimizer.h"

using namespace poslab;

namespace {

// GFLOP (2 x multiply-adds) of one canonical step at batch 16, as the sgemm kernel in use runs
// it: the Linear layers' products in full, attention's 7 products per head over the causal
// triangle plus the masked register tiles the kernel cannot skip (a wider tile skips less);
// OpenBLAS (no kernel of ours) computes attention's row blocks whole. Derived on
// docs/performance.md ("The FLOP count"); bench/step_gflop.sh holds the same figures.
double step_gflop() {
  const kernel::SgemmKernel* k = kernel::sgemm_kernel();
  if (k == nullptr) return 24.09;
  return k->mr == 12 ? 23.94 : 23.63;  // AVX-512 12 x 32, AVX2 6 x 16
}

// "all", or comma-separated scheme names (parse_pe: an unknown one is an error naming the valid).
std::vector<std::string> scheme_order(const std::string& list) {
  if (list == "all") return pe_names();
  std::vector<std::string> order;
  for (size_t i = 0; i <= list.size();) {
    const size_t j = std::min(list.find(',', i), list.size());
    order.push_back(pe_name(parse_pe(list.substr(i, j - i))));
    i = j + 1;
  }
  return order;
}

}  // namespace

int main(int argc, char** argv) {
  int reps = argc > 1 ? std::atoi(argv[1]) : 6;
  int64_t B = argc > 2 ? std::atoll(argv[2]) : 16, T = 256, V = 105;
  Device device = parse_device(argc > 3 ? argv[3] : "cpu", "device");
  require_device(device, "bench_train_step");
  const double flop = step_gflop() * 1e9 * static_cast<double>(B) / 16;  // one step
  std::vector<std::string> order;
  try {
    order = scheme_order(argc > 4 ? argv[4] : "all");
  } catch (const std::exception& e) {
    std::fprintf(stderr, "bench_train_step: %s\n", e.what());
    return 2;
  }
  if (device == Device::cuda)
    std::printf("# %s, batch %lld\n", cuda_device_name().c_str(), (long long)B);
  std::printf("%-11s %10s %9s %8s\n", "pe", "tokens/s", "s/step",
              device == Device::cuda ? "issue s" : "GFLOP/s");
  for (const std::string& pe : order) {
    GPTConfig c;
    c.vocab_size = V, c.pe.kind = parse_pe(pe), c.block_size = T, c.device = device;
    GPT m(c, 1);
    AdamW opt(m.parameters(), AdamWConfig{});
    Generator g(3);
    Ids x{std::vector<int32_t>(B * T), {B, T}}, y = x;
    for (auto& v : x.data) v = static_cast<int32_t>(g.next_u64() % V);
    for (auto& v : y.data) v = static_cast<int32_t>(g.next_u64() % V);
    std::vector<Tensor> params;
    for (auto& p : m.parameters()) params.push_back(p.tensor);
    double first = 0;
    std::vector<double> issue;  // seconds until forward and backward were issued
    auto step = [&] {
      auto t0 = std::chrono::steady_clock::now();
      zero_grad(params);
      Tensor loss = m.loss(x, y);
      if (first == 0) first = loss.item();
      backward(loss);
      issue.push_back(std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
      clip_grad_norm(opt.params(), 1.0);
      opt.step(1e-3);
      synchronize(device);
    };
    step();
    if (!std::isfinite(first) || std::abs(first - std::log(double(V))) > 0.5) {
      std::fprintf(stderr, "train_step bench: first loss %g is not near log V = %g\n", first,
                   std::log(double(V)));
      return 1;
    }
    issue.clear();
    double t = bench::median_seconds(step, reps, 1);
    double tps = B * T / t;
    if (device == Device::cuda) {
      issue.erase(issue.begin());  // the warm-up step
      std::sort(issue.begin(), issue.end());
      std::printf("%-11s %10.0f %9.4f %8.4f\n", pe.c_str(), tps, t, issue[issue.size() / 2]);
    } else
      std::printf("%-11s %10.0f %9.3f %8.1f\n", pe.c_str(), tps, t, flop / t / 1e9);
  }
  return 0;
}
