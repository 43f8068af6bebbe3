// A realistic results folder for a person to look at the report and its plots:
//   ./test_report "[.examples]"   (then e.g. rsvg-convert -o ppl.png
//   /tmp/report_example/plots/ppl_vs_length.svg)
// Six schemes, three seeds, five lengths, 64 position buckets, every head of 4 layers, the
// probes (attribution, copy, RoPE pairs); the numbers are made up (smooth functions plus a
// seed offset), not measured.
#include <catch2/catch.hpp>

#include <cmath>

#include "tests/train/study/report_fixture.h"
#include "train/study/plot.h"

using namespace poslab;
using namespace report_test;

namespace {

const std::vector<std::string> kPes = {"none", "learned", "sinusoidal", "rope", "alibi", "t5"};
const std::vector<long> kLens = {256, 512, 1024, 2048, 4096};

// Loss of scheme k at length L, seed s: a base, a growth past T0 that differs per scheme.
double loss_at(size_t k, long L, long seed) {
  const double base = 1.95 - 0.03 * k + 0.01 * seed, x = std::log2(L / 256.0);
  const double growth[] = {0.01, 0.15, 0.9, 0.12, -0.01, 0.03};
  return base + growth[k] * x * x / 4 + (k == 2 ? 0.3 * seed * x : 0);
}

void write_main(const std::string& dir) {
  std::vector<RunRow> runs;
  std::vector<EvalRow> evals;
  std::vector<PositionRow> pos;
  for (size_t k = 0; k < kPes.size(); ++k) {
    for (long seed = 1; seed <= 3; ++seed) {
      const std::string run = kPes[k] + "_s" + std::to_string(seed);
      runs.push_back({run, kPes[k], seed, "lm", "fortunes", "scaled", 3000, 12288000, 600,
                      loss_at(k, 256, seed), 0.004 * seed});
      for (const long L : kLens) {
        const double l = loss_at(k, L, seed);
        const std::string sc = kPes[k] == "rope" ? "none" : "";
        evals.push_back(
            {run, kPes[k], seed, "fortunes", L, sc, l, loss_at(k, 256, seed) - 0.02, 1000000 / L});
        if (L >= 1024) evals.back().loss_unseen_1 = l + 0.05;
        if (L >= 4096) evals.back().loss_unseen_2 = l + 0.1;
        for (long b = 0; b < 64; ++b) {
          const double at = (b + 0.5) * L / 64;
          pos.push_back(
              {run, kPes[k], seed, "fortunes", L, sc, b * L / 64, (b + 1) * L / 64,
               l + (at > 256 ? 0.2 * (l - loss_at(k, 256, seed)) * std::log2(at / 256) : -0.1), l});
        }
        if (kPes[k] == "rope") {
          for (const auto& [name, f] : {std::pair{"linear", 1.3}, {"ntk", 0.4}, {"yarn", 0.6}}) {
            evals.push_back({run, "rope", seed, "fortunes", L, name,
                             loss_at(k, 256, seed) + f * (l - loss_at(k, 256, seed)), NAN, 10});
          }
        }
      }
      std::vector<LogRow> curve;
      for (long step = 0; step <= 3000; step += 150) {
        const double v = loss_at(k, 256, seed) + 2.5 * std::exp(-step / 400.0);
        curve.push_back({step, 1e-3, v - 0.05, v, 1, 1000, 0});
      }
      write_text_file(dir + "/curves/" + run + ".csv", log_text(curve));
    }
  }
  write_rows(dir + "/runs.csv", runs);
  write_rows(dir + "/extrapolation.csv", evals);
  write_rows(dir + "/position_loss.csv", pos);
}

void write_rest(const std::string& dir) {
  write_rows<NgramRow>(dir + "/ngram.csv", {{"fortunes", 1, 1, 3.25},
                                            {"fortunes", 2, 0.5, 2.55},
                                            {"fortunes", 3, 0.1, 2.15},
                                            {"fortunes", 4, 0.05, 1.98},
                                            {"fortunes", 5, 0.01, 1.95}});
  std::vector<TaskRow> tasks;
  for (size_t k = 0; k < kPes.size(); ++k) {
    for (long seed = 1; seed <= 2; ++seed) {
      for (const long L : {16L, 24L, 32L, 48L}) {
        const double acc = std::max(0.0, 0.95 - (L > 24 ? 0.02 * (L - 24) * (6 - k) : 0.0));
        tasks.push_back({"reverse", kPes[k], seed, 24, L, NAN, 200, long(acc * 200), acc,
                         std::max(0.0, acc - 0.06), std::min(1.0, acc + 0.04)});
      }
      for (const double depth : {0.0, 0.5, 1.0}) {
        for (const long L : {256L, 512L, 1024L}) {
          const double acc = L == 256 ? 1.0 : (k >= 3 ? 0.9 - 0.3 * depth : 0.1 * depth);
          tasks.push_back({"passkey", kPes[k], seed, 256, L, depth, 50, long(acc * 50), acc,
                           std::max(0.0, acc - 0.12), std::min(1.0, acc + 0.08)});
        }
      }
    }
  }
  write_rows(dir + "/tasks.csv", tasks);
  std::vector<AttentionRow> att;
  for (size_t k = 0; k < kPes.size(); ++k) {
    for (long layer = 0; layer < 4; ++layer) {
      for (long head = 0; head < 4; ++head) {
        const double decay = k == 0 ? 0.01 : 0.05 + 0.2 * head;
        for (long q = 0; q < 64; ++q) {
          double z = 0;
          for (long j = 0; j <= q; ++j) z += std::exp(-decay * (q - j));
          for (long j = 0; j <= q; ++j) {
            att.push_back(
                {kPes[k], kPes[k] + "_s1", layer, head, q, j, std::exp(-decay * (q - j)) / z});
          }
        }
      }
    }
  }
  write_rows(dir + "/attention.csv", att);
}

// attribution.csv, copy.csv and rope_pairs.csv: every scheme, 3 seeds.
void write_probes(const std::string& dir) {
  std::vector<AttributionRow> att;
  std::vector<CopyCsvRow> copy;
  std::vector<RopePairRow> pairs;
  for (size_t k = 0; k < kPes.size(); ++k) {
    for (long seed = 1; seed <= 3; ++seed) {
      const std::string run = kPes[k] + "_s" + std::to_string(seed), pe = kPes[k];
      const double ref = loss_at(k, 256, seed), plain = loss_at(k, 4096, seed) + 0.05;
      att.push_back({run, pe, seed, 256, 0, 0, "none", ref, NAN});
      att.push_back({run, pe, seed, 4096, 0, 0, "none", plain - 0.02, plain});
      att.push_back({run, pe, seed, 4096, 0, 256, "none", 0, ref + 0.4 * (plain - ref)});
      att.push_back({run, pe, seed, 4096, 0, 0, "log", 0, ref + 0.8 * (plain - ref)});
      for (const long P : {256L, 1024L, 3840L}) {
        const double l = ref + (k <= 2 ? 0.1 * std::log2(P / 128.0) : 0.0);
        att.push_back({run, pe, seed, 256, P, 0, "none", l, l});
      }
      for (long d = 16; d <= 4048; d *= 2) {
        const double gain = 1.5 * std::exp(-double(d) / (256.0 * (k + 1))) + 0.02 * seed;
        copy.push_back({run, pe, seed, d, 200, 2.0, 2.0 + gain});
      }
      if (pe != "rope") continue;
      pairs.push_back({run, seed, -1, NAN, plain});
      for (long i = 0; i < 16; ++i) {
        const double lambda = 2 * M_PI * std::pow(10000.0, i / 16.0);
        pairs.push_back({run, seed, i, lambda, plain - (lambda > 256 ? 0.3 : 0.0) + 0.01 * seed});
      }
    }
  }
  write_rows(dir + "/attribution.csv", att);
  write_rows(dir + "/copy.csv", copy);
  write_rows(dir + "/rope_pairs.csv", pairs);
}

}  // namespace

TEST_CASE("example report", "[.examples]") {
  const std::string dir = "/tmp/report_example";
  fs::remove_all(dir);
  fs::create_directories(dir + "/curves");
  write_main(dir);
  write_rest(dir);
  write_probes(dir);
  write_report(dir, kInfo);
  CHECK(fs::exists(dir + "/REPORT.md"));
}
