// eval_long.cpp — one evaluation window at long lengths (4096, 8192): wall time and the
// process's peak RSS, to show that evaluation memory grows linearly in T (no T x T matrix per
// head is materialised: attention runs in row blocks without saving probabilities).
// Timed as bench/torch_bench.py times PyTorch: one untimed window (first touches of memory,
// the thread pool; on cuda the context and cuBLAS), then the median of 3; the first window's
// time is printed too. Runs one length per process, so each peak RSS is its own:
// bench_eval_long L [pe] [device] (on cuda: the GPU caching allocator's peak, not the RSS)
#include <sys/resource.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>

#include "nn/gpt.h"
#include "tensor/device.h"

using namespace poslab;

int main(int argc, char** argv) {
  int64_t L = argc > 1 ? std::atoll(argv[1]) : 4096;
  std::string pe = argc > 2 ? argv[2] : "rope";
  Device device = parse_device(argc > 3 ? argv[3] : "cpu", "device");
  require_device(device, "bench_eval_long");
  GPTConfig c;
  c.vocab_size = 105, c.pe.kind = parse_pe(pe), c.block_size = 256, c.device = device;
  if (c.pe.kind == PeKind::learned) c.pe.max_len = L;
  GPT m(c, 1);
  Generator g(5);
  Ids x{std::vector<int32_t>(L), {1, L}}, y = x;
  for (auto& v : x.data) v = static_cast<int32_t>(g.next_u64() % 105);
  for (auto& v : y.data) v = static_cast<int32_t>(g.next_u64() % 105);
  NoGrad ng;
  double secs[4];
  for (double& s : secs) {
    auto t0 = std::chrono::steady_clock::now();
    double loss = m.loss(x, y).item();
    s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    if (!std::isfinite(loss)) {
      std::fprintf(stderr, "eval_long: loss is %g\n", loss);
      return 1;
    }
  }
  std::sort(secs + 1, secs + 4);  // secs[0]: the untimed first window
  rusage ru{};
  getrusage(RUSAGE_SELF, &ru);
  double peak_mb =
      device == Device::cuda ? cuda_alloc_stats().peak_bytes / 1048576.0 : ru.ru_maxrss / 1024.0;
  std::printf("%-6s L=%-6lld %7.3f s  %8.0f tokens/s  (first window %.3f s)  peak %s %6.1f MB\n",
              pe.c_str(), (long long)L, secs[2], L / secs[2], secs[0],
              device == Device::cuda ? "GPU" : "RSS", peak_mb);
  return 0;
}
