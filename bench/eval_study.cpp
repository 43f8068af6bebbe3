// eval_study.cpp — the study's whole evaluation of one model, timed: every window of the val
// split at 256, 512, 1024, 2048, 4096 and the sliding-window pass (train/eval.h), as
// `poslab experiments` makes it for each model (docs/evaluation.md).
//   bench_eval_study CKPT DATA [batch_tokens] [scaling] [lengths]
// batch_tokens: tokens per forward pass (windows per pass = max(1, batch_tokens / L); 0: the
// default, kEvalBatchTokens); scaling: none|linear|ntk|dynamic|yarn for a RoPE model (the
// sliding pass is then skipped: the study makes it once per model, unscaled); lengths: a
// comma-separated subset, e.g. "256,4096" (default all five, and the sliding pass).
// Prints one line per length and the total, in wall seconds and in the process's CPU seconds
// (on a machine shared with other work, a one-thread run's CPU time is close to what it would
// take alone); threads come from OMP_NUM_THREADS.
#include <time.h>

#include <cstdio>
#include <cstdlib>
#include <sstream>

#include "data/corpus.h"
#include "train/checkpoint.h"
#include "train/eval.h"

using namespace poslab;

namespace {

double now(clockid_t id) {
  timespec ts;
  clock_gettime(id, &ts);
  return static_cast<double>(ts.tv_sec) + 1e-9 * static_cast<double>(ts.tv_nsec);
}

struct Timer {
  double wall = now(CLOCK_MONOTONIC), cpu = now(CLOCK_PROCESS_CPUTIME_ID);
  double wall_s() const { return now(CLOCK_MONOTONIC) - wall; }
  double cpu_s() const { return now(CLOCK_PROCESS_CPUTIME_ID) - cpu; }
};

std::vector<int64_t> parse_lengths(const std::string& s) {
  std::vector<int64_t> out;
  std::stringstream in(s);
  for (std::string item; std::getline(in, item, ',');) out.push_back(std::atoll(item.c_str()));
  return out;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 3) {
    std::fprintf(stderr, "usage: bench_eval_study CKPT DATA [batch_tokens] [scaling] [lengths]\n");
    return 2;
  }
  Checkpoint ck = load_checkpoint(argv[1]);
  const std::string data = argv[2];
  const int64_t batch_tokens = argc > 3 ? std::atoll(argv[3]) : 0;
  const ScalingKind scaling = argc > 4 ? parse_scaling(argv[4]) : ScalingKind::none;
  const bool all = argc <= 5;
  const std::vector<int64_t> lens =
      all ? std::vector<int64_t>{256, 512, 1024, 2048, 4096} : parse_lengths(argv[5]);
  GPT& m = *ck.model;
  const int64_t T0 = m.config().block_size;
  const char* pe = pe_name(m.config().pe.kind);
  std::vector<std::string> vocab = load_vocab(data + "/vocab.json");
  std::vector<uint16_t> val = load_tokens(data + "/val.bin", vocab.size());
  auto batch = [&](int64_t L) {
    return batch_tokens > 0 ? std::max<int64_t>(1, batch_tokens / L) : 0;
  };
  Timer whole;
  Interventions scaled;
  scaled.rope_scaling = {scaling, 0, T0};
  for (int64_t L : lens) {
    Timer t;
    EvalResult r = evaluate(m, val, L, 0, 16, "val", nullptr, batch(L), scaled);
    std::printf("%-6s %-8s L=%-5lld %4lld windows  loss %.12f  %7.2f s wall %7.2f s cpu\n", pe,
                scaling_name(scaling), (long long)L, (long long)r.windows, r.loss, t.wall_s(),
                t.cpu_s());
  }
  if (scaling == ScalingKind::none && all) {
    Timer t;
    std::vector<double> sl = sliding_losses(m, val, T0, batch(T0));
    double mean = 0;
    for (double x : sl) mean += x / static_cast<double>(sl.size());
    std::printf("%-6s sliding  T0=%-4lld %zu targets  loss %.12f  %7.2f s wall %7.2f s cpu\n", pe,
                (long long)T0, sl.size(), mean, t.wall_s(), t.cpu_s());
  }
  const char* threads = std::getenv("OMP_NUM_THREADS");
  std::printf("%-6s %-8s total %.2f s wall %.2f s cpu (OMP_NUM_THREADS=%s, batch_tokens=%lld)\n",
              pe, scaling_name(scaling), whole.wall_s(), whole.cpu_s(), threads ? threads : "unset",
              (long long)(batch_tokens > 0 ? batch_tokens : kEvalBatchTokens));
  return 0;
}
