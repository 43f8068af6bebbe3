// v5_schemes.cpp — the v5 schemes' cost as a ratio to RoPE's, measured in the same process:
// one training step of the canonical config (d 128, 4 layers, 4 heads, T0 256, batch 16:
// forward, backward, clipping, AdamW) for rope, kerple, fire, xpos, p-RoPE (7/16) and
// nope_every 4, alternated: each round times every scheme once (the median of `steps` steps
// after 2 warm-up steps), starting each round at another scheme; three rounds, and the ratio
// of medians over the rounds. Validates first: every first loss is finite and near log V.
//   bench_v5_schemes step [steps=8] [rounds=3]
// The other mode times one evaluation window of L tokens (no gradient) of one scheme and prints
// the process's peak RSS; scripts/bench_v5.sh runs it for rope and fire alternately, one
// process each, so that each peak is its own:
//   bench_v5_schemes eval PE [L=4096] [reps=3]
// What the issue asks of these ratios, and the figures: docs/performance.md.
#include <sys/resource.h>

#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <string>

#include "bench/bench_util.h"
#include "nn/gpt.h"
#include "train/optimizer.h"

using namespace poslab;

namespace {

struct Scheme {
  const char* name;
  PeKind pe;
  double proportion;
  int64_t nope_every;
};
const Scheme kSchemes[] = {
    {"rope", PeKind::rope, 1, 0},         {"kerple", PeKind::kerple, 1, 0},
    {"fire", PeKind::fire, 1, 0},         {"xpos", PeKind::xpos, 1, 0},
    {"prope", PeKind::rope, 7.0 / 16, 0}, {"rope_nope4", PeKind::rope, 1, 4}};
constexpr int kCount = sizeof kSchemes / sizeof kSchemes[0];
constexpr int64_t V = 105, T = 256;

GPTConfig config(const Scheme& s) {
  GPTConfig c;
  c.vocab_size = V, c.block_size = T, c.pe.kind = s.pe;
  c.pe.rope_proportion = s.proportion, c.pe.nope_every = s.nope_every;
  return c;
}

Ids random_ids(int64_t B, int64_t L, uint64_t seed) {
  Generator g(seed);
  Ids x{std::vector<int32_t>(B * L), {B, L}};
  for (auto& v : x.data) v = static_cast<int32_t>(g.next_u64() % V);
  return x;
}

int step_mode(int steps, int rounds) {
  const int64_t B = 16;
  std::vector<std::unique_ptr<GPT>> models;
  std::vector<std::unique_ptr<AdamW>> opts;
  Ids x = random_ids(B, T, 3), y = random_ids(B, T, 4);
  for (const Scheme& s : kSchemes) {
    models.push_back(std::make_unique<GPT>(config(s), 1));
    opts.push_back(std::make_unique<AdamW>(models.back()->parameters(), AdamWConfig{}));
    double first = models.back()->loss(x, y).item();
    if (!std::isfinite(first) || std::abs(first - std::log(double(V))) > 0.5) {
      std::fprintf(stderr, "v5 bench: %s: first loss %g is not near log V = %g\n", s.name, first,
                   std::log(double(V)));
      return 1;
    }
  }
  std::vector<std::vector<double>> secs(kCount);
  for (int r = 0; r < rounds; ++r)
    for (int n = 0; n < kCount; ++n) {
      const int k = (n + r) % kCount;  // each round starts at another scheme
      GPT& m = *models[k];
      AdamW& opt = *opts[k];
      std::vector<Tensor> params;
      for (auto& p : m.parameters()) params.push_back(p.tensor);
      secs[k].push_back(bench::median_seconds(
          [&] {
            zero_grad(params);
            backward(m.loss(x, y));
            clip_grad_norm(opt.params(), 1.0);
            opt.step(1e-3);
            m.project();
          },
          steps, 2));
    }
  std::printf("%-11s %9s %9s %9s %9s %8s\n", "scheme", "round 1", "round 2", "round 3", "median",
              "vs rope");
  std::vector<double> med(kCount);
  for (int k = 0; k < kCount; ++k) {
    std::vector<double> s = secs[k];
    std::sort(s.begin(), s.end());
    med[k] = s[s.size() / 2];
  }
  for (int k = 0; k < kCount; ++k) {
    std::printf("%-11s", kSchemes[k].name);
    for (double s : secs[k]) std::printf(" %9.4f", s);
    std::printf(" %9.4f %8.3f\n", med[k], med[k] / med[0]);
  }
  return 0;
}

int eval_mode(const std::string& name, int64_t L, int reps) {
  const Scheme* s = nullptr;
  for (const Scheme& c : kSchemes)
    if (name == c.name) s = &c;
  if (!s) {
    std::fprintf(stderr, "v5 bench: unknown scheme '%s'\n", name.c_str());
    return 2;
  }
  GPT m(config(*s), 1);
  Ids x = random_ids(1, L, 5), y = random_ids(1, L, 6);
  NoGrad ng;
  double first = 0;
  const double t = bench::median_seconds([&] { first = m.loss(x, y).item(); }, reps, 1);
  if (!std::isfinite(first)) {
    std::fprintf(stderr, "v5 bench: %s: loss %g at L = %lld\n", s->name, first, (long long)L);
    return 1;
  }
  rusage ru{};
  getrusage(RUSAGE_SELF, &ru);
  std::printf("%-11s L %lld  %.3f s/window  peak RSS %.0f MB\n", s->name, (long long)L, t,
              ru.ru_maxrss / 1024.0);
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  const std::string mode = argc > 1 ? argv[1] : "step";
  if (mode == "step")
    return step_mode(argc > 2 ? std::atoi(argv[2]) : 8, argc > 3 ? std::atoi(argv[3]) : 3);
  if (mode == "eval")
    return eval_mode(argc > 2 ? argv[2] : "fire", argc > 3 ? std::atoll(argv[3]) : 4096,
                     argc > 4 ? std::atoi(argv[4]) : 3);
  std::fprintf(stderr, "usage: bench_v5_schemes step [steps] [rounds] | eval PE [L] [reps]\n");
  return 2;
}
