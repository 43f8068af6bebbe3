// eval_study.cpp — the study's whole evaluation of one model, timed: every window of the val
// split at 256, 512, 1024, 2048, 4096 and the sliding-window pass (train/eval.h), as
// `poslab experiments` makes it for each model (docs/evaluation.md).
//   bench_eval_study CKPT DATA [batch_tokens] [scaling]
// batch_tokens: tokens per forward pass (windows per pass = max(1, batch_tokens / L); 0: the
// default, kEvalBatchTokens); scaling: none|linear|ntk|dynamic|yarn for a RoPE model (the
// sliding pass is then skipped: the study makes it once per model, unscaled).
// Prints one line per length and the total; threads come from OMP_NUM_THREADS.
#include <chrono>
#include <cstdio>
#include <cstdlib>

#include "data/corpus.h"
#include "train/checkpoint.h"
#include "train/eval.h"

using namespace poslab;

static double seconds_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

int main(int argc, char** argv) {
  if (argc < 3) {
    std::fprintf(stderr, "usage: bench_eval_study CKPT DATA [batch_tokens] [scaling]\n");
    return 2;
  }
  Checkpoint ck = load_checkpoint(argv[1]);
  std::string data = argv[2];
  int64_t batch_tokens = argc > 3 ? std::atoll(argv[3]) : 0;
  ScalingKind scaling = argc > 4 ? parse_scaling(argv[4]) : ScalingKind::none;
  GPT& m = *ck.model;
  const int64_t T0 = m.config().block_size;
  std::vector<std::string> vocab = load_vocab(data + "/vocab.json");
  std::vector<uint16_t> val = load_tokens(data + "/val.bin", vocab.size());
  auto batch = [&](int64_t L) {
    return batch_tokens > 0 ? std::max<int64_t>(1, batch_tokens / L) : 0;
  };
  double total = 0;
  m.posenc().set_scaling({scaling, 0, T0});
  for (int64_t L : {256, 512, 1024, 2048, 4096}) {
    auto t0 = std::chrono::steady_clock::now();
    EvalResult r = evaluate(m, val, L, 0, 16, "val", nullptr, batch(L));
    double s = seconds_since(t0);
    total += s;
    std::printf("%-8s %-8s L=%-5lld %4lld windows  loss %.12f  %7.2f s\n", pe_name(m.config().pe),
                scaling_name(scaling), (long long)L, (long long)r.windows, r.loss, s);
  }
  if (scaling == ScalingKind::none) {
    auto t0 = std::chrono::steady_clock::now();
    std::vector<double> sl = sliding_losses(m, val, T0, batch(T0));
    double s = seconds_since(t0), mean = 0;
    for (double x : sl) mean += x / static_cast<double>(sl.size());
    total += s;
    std::printf("%-8s sliding  T0=%-4lld %zu targets  loss %.5f  %7.2f s\n", pe_name(m.config().pe),
                (long long)T0, sl.size(), mean, s);
  }
  std::printf("%-8s %-8s total %.2f s (OMP_NUM_THREADS=%s, batch_tokens=%lld)\n",
              pe_name(m.config().pe), scaling_name(scaling), total,
              std::getenv("OMP_NUM_THREADS") ? std::getenv("OMP_NUM_THREADS") : "unset",
              (long long)(batch_tokens > 0 ? batch_tokens : kEvalBatchTokens));
  return 0;
}
