// A realistic results folder for a person to look at the report and its plots:
//   ./test_report "[.examples]"   (then e.g. rsvg-convert -o ppl.png
//   /tmp/report_example/plots/ppl_vs_length.svg)
// The study v4 on pystdlib: six schemes, three seeds, each main run with its B/4 and B/2 cooldown
// branches, five lengths, 64 position buckets (plain RoPE and RoPE + YaRN), loss_window32 at T0,
// every head of 4 layers, the probes (attribution, copy at distances 16 to 2048, 64 = T0/4 and
// 1024 = 4 T0 among them, RoPE pairs), the break experiments and ablations at B/4, corpus.csv and
// throughput.csv from two invocations; the numbers are made up (smooth functions plus a seed
// offset), not measured.
#include <catch2/catch.hpp>

#include <cmath>

#include "plot/plot.h"
#include "tests/study/report_fixture.h"

using namespace poslab;
using namespace report_test;

namespace {

const std::vector<std::string> kPes = {"none", "learned", "sinusoidal", "rope", "alibi", "t5"};
const std::vector<long> kLens = {256, 512, 1024, 2048, 4096};
const std::string kMachine = "AMD EPYC 7B13 (avx2 fma)",
                  kInvocations[2] = {"2026-03-01T08:00Z", "2026-03-02T08:00Z"};

// Loss of scheme k at length L, seed s: a base, a growth past T0 that differs per scheme.
double loss_at(size_t k, long L, long seed) {
  const double base = 1.95 - 0.03 * k + 0.01 * seed, x = std::log2(L / 256.0);
  const double growth[] = {0.01, 0.15, 0.9, 0.12, -0.01, 0.03};
  return base + growth[k] * x * x / 4 + (k == 2 ? 0.3 * seed * x : 0);
}

// What the B/4 and B/2 branches lose against the main run: more for the schemes that learn
// late, so that the ranks change with the budget.
double branch_extra(size_t k, int budget_div) {
  const double at_b4[] = {0.20, 0.30, 0.25, 0.35, 0.15, 0.28};
  return budget_div == 4 ? at_b4[k] : at_b4[k] / 5;
}

// Seeds 1 and 2 made by the first invocation, seed 3 by the second. The embedding: learned's
// main runs gpt2, the others' scaled, a swapped run's its suffix.
RunRow run_row(const std::string& run, const std::string& pe, long seed, long steps, double loss,
               const std::string& branch_of) {
  const std::string embedding = run.find("_gpt2_") != std::string::npos     ? "gpt2"
                                : run.find("_scaled_") != std::string::npos ? "scaled"
                                : pe == "learned"                           ? "gpt2"
                                                                            : "scaled";
  return {run,         pe,        seed,         "lm",
          "pystdlib",  embedding, steps,        steps * 4096,
          0.2 * steps, loss,      0.004 * seed, 1e-3,
          "wsd",       branch_of, kMachine,     kInvocations[seed == 3]};
}

// The rows of one run at every length: extrapolation.csv (loss + `extra`) and, with `buckets`,
// position_loss.csv, plain and (RoPE) with each scaling.
void add_evals(std::vector<EvalRow>& evals, std::vector<PositionRow>& pos, const std::string& run,
               size_t k, long seed, double extra, const std::vector<long>& lens, bool buckets) {
  const std::string pe = kPes[k], sc = pe == "rope" ? "none" : "";
  const double t0 = loss_at(k, 256, seed) + extra;
  for (const long L : lens) {
    const double l = loss_at(k, L, seed) + extra;
    evals.push_back({run, pe, seed, "pystdlib", L, sc, l, t0 - 0.02, 1000000 / L});
    evals.back().loss_se = 0.4 / std::sqrt(1000000.0 / L);
    if (L >= 1024) evals.back().loss_unseen_1 = l + 0.05;
    if (L >= 4096) evals.back().loss_unseen_2 = l + 0.1;
    if (L == 256) evals.back().loss_window32 = l + 0.25 - 0.02 * k;
    if (!buckets) continue;
    for (long b = 0; b < 64; ++b) {
      const double at = (b + 0.5) * L / 64;
      pos.push_back({run, pe, seed, "pystdlib", L, sc, b * L / 64, (b + 1) * L / 64,
                     l + (at > 256 ? 0.2 * (l - t0) * std::log2(at / 256) : -0.1), l});
    }
    if (pe != "rope") continue;
    for (const auto& [name, f] : {std::pair{"linear", 1.3}, {"ntk", 0.4}, {"yarn", 0.6}}) {
      evals.push_back({run, "rope", seed, "pystdlib", L, name, t0 + f * (l - t0), NAN, 10});
      evals.back().loss_unseen_1 = L >= 1024 ? t0 + f * (l - t0) + 0.04 : NAN;
      evals.back().loss_unseen_2 = L >= 4096 ? t0 + f * (l - t0) + 0.08 : NAN;
      if (std::string(name) != "yarn") continue;
      for (long b = 0; b < 64; ++b) {
        const double at = (b + 0.5) * L / 64;
        pos.push_back({run, pe, seed, "pystdlib", L, "yarn", b * L / 64, (b + 1) * L / 64,
                       t0 + (at > 256 ? 0.05 * std::log2(at / 256) : -0.1), l});
      }
    }
  }
}

void write_main(const std::string& dir) {
  std::vector<RunRow> runs;
  std::vector<EvalRow> evals;
  std::vector<PositionRow> pos;
  for (size_t k = 0; k < kPes.size(); ++k) {
    for (long seed = 1; seed <= 3; ++seed) {
      const std::string s = std::to_string(seed), run = kPes[k] + "_s" + s;
      runs.push_back(run_row(run, kPes[k], seed, 3000, loss_at(k, 256, seed), ""));
      add_evals(evals, pos, run, k, seed, 0, kLens, true);
      for (const int div : {4, 2}) {  // the cooldown branches: B/4 at every length, B/2 at T0
        const std::string branch = kPes[k] + "_b" + std::to_string(div) + "_s" + s;
        const double extra = branch_extra(k, div);
        runs.push_back(
            run_row(branch, kPes[k], seed, 3000 / div, loss_at(k, 256, seed) + extra, run));
        add_evals(evals, pos, branch, k, seed, extra, div == 4 ? kLens : std::vector<long>{256},
                  false);
      }
      std::vector<LogRow> curve;
      for (long step = 0; step <= 3000; step += 150) {
        const double v = loss_at(k, 256, seed) + 2.5 * std::exp(-step / 400.0);
        curve.push_back({step, 1e-3, v - 0.05, v, 1, 30000.0 - 1500 * k - 500 * seed, 0});
      }
      write_text_file(dir + "/curves/" + run + ".csv", log_text(curve));
    }
  }
  // The break experiments and ablations, trained at B/4 (rope's theta, the embedding swapped,
  // T5's max distance): the B/4 branch's losses shifted, more past T0 for theta 10.
  const std::vector<std::tuple<std::string, size_t, double, double>> ablations = {
      {"rope_theta10", 3, 0.10, 0.30},
      {"rope_theta1e6", 3, -0.02, -0.05},
      {"learned_scaled", 1, 0.05, 0.10},
      {"rope_gpt2", 3, 0.03, 0.0},
      {"t5_dist256", 5, 0.01, 0.08}};
  for (const auto& [name, k, at_t0, per_doubling] : ablations) {
    for (long seed = 1; seed <= 3; ++seed) {
      const std::string run = name + "_s" + std::to_string(seed);
      const double b4 = branch_extra(k, 4) + at_t0;
      runs.push_back(run_row(run, kPes[k], seed, 750, loss_at(k, 256, seed) + b4, ""));
      for (const long L : kLens) {
        const double l = loss_at(k, L, seed) + b4 + per_doubling * std::log2(L / 256.0);
        evals.push_back({run, kPes[k], seed, "pystdlib", L, "", l, l, 1000000 / L});
      }
    }
  }
  write_rows(dir + "/runs.csv", runs);
  write_rows(dir + "/extrapolation.csv", evals);
  write_rows(dir + "/position_loss.csv", pos);
}

void write_rest(const std::string& dir) {
  write_rows<NgramRow>(dir + "/ngram.csv", {{"pystdlib", 1, 1, 3.25},
                                            {"pystdlib", 2, 0.5, 2.55},
                                            {"pystdlib", 3, 0.1, 2.15},
                                            {"pystdlib", 4, 0.05, 1.98},
                                            {"pystdlib", 5, 0.01, 1.95}});
  std::vector<TaskRow> tasks;
  for (size_t k = 0; k < kPes.size(); ++k) {
    for (long seed = 1; seed <= 2; ++seed) {
      for (const long L : {16L, 24L, 32L, 48L}) {
        const double acc = std::max(0.0, 0.95 - (L > 24 ? 0.02 * (L - 24) * (6 - k) : 0.0));
        tasks.push_back({"reverse", kPes[k], seed, 24, L, NAN, 200, long(acc * 200), acc,
                         std::max(0.0, acc - 0.06), std::min(1.0, acc + 0.04)});
      }
      for (const double depth : {0.0, 0.5, 1.0}) {
        for (const long L : {256L, 512L, 1024L, 4096L}) {
          const double acc =
              L == 256 ? 1.0 : (k >= 3 ? 0.9 - 0.3 * depth : 0.1 * depth) / (L / 1024 + 1);
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
  write_rows<MlmRow>(dir + "/mlm.csv", {{"mlm_none_s1", "none", 1, 2.61, 2e-7},
                                        {"mlm_none_s2", "none", 2, 2.63, 3e-7},
                                        {"mlm_none_s3", "none", 3, 2.60, 2e-7},
                                        {"mlm_rope_s1", "rope", 1, 2.21, 0.41},
                                        {"mlm_rope_s2", "rope", 2, 2.24, 0.38},
                                        {"mlm_rope_s3", "rope", 3, 2.22, 0.44}});
}

// corpus.csv, throughput.csv, timing.csv, tuning.csv, loc.csv: the setup and cost sections.
void write_setup(const std::string& dir) {
  write_rows<CorpusRow>(
      dir + "/corpus.csv",
      {{"pystdlib", "libpython3.11-minimal 3.11.2-6+deb12u6; libpython3.11-stdlib 3.11.2-6+deb12u6",
        171, 4742544, "0781466e5b3f2a", 154, 17, 481148}});
  write_rows<ThroughputRow>(dir + "/throughput.csv",
                            {{kInvocations[0], kMachine, 16, 4, 61000, 110000, 0.4},
                             {kInvocations[1], kMachine, 16, 2, 52000, 56000, 2.1}});
  std::vector<TimingRow> timing;
  for (const auto& pe : kPes) {
    for (long seed = 1; seed <= 3; ++seed) {
      const std::string s = std::to_string(seed);
      timing.push_back({"train " + pe + "_s" + s, 600});
      timing.push_back({"eval " + pe + "_s" + s, 80});
      timing.push_back({"probe " + pe + "_s" + s, 45});
    }
  }
  timing.push_back({"ngram pystdlib", 12});
  write_rows(dir + "/timing.csv", timing);
  std::vector<TuningRow> tuning;
  for (size_t k = 0; k < kPes.size(); ++k) {
    for (const double lr : {3e-4, 1e-3, 3e-3}) {
      tuning.push_back(
          {kPes[k], lr, 16, 190, 778240, 2.4 - 0.03 * k + (lr == 1e-3 ? 0 : 0.05), 40});
    }
  }
  write_rows(dir + "/tuning.csv", tuning);
  std::vector<LocRow> loc;
  for (size_t k = 0; k < kPes.size(); ++k) {
    loc.push_back({kPes[k], "posenc/" + kPes[k] + ".h+posenc/" + kPes[k] + ".cpp",
                   40 + 30 * long(k),
                   790000 + (k == 1   ? 65536
                             : k == 5 ? 128
                                      : 0)});
  }
  loc.push_back({"rope_scaling", "posenc/rope_scaling.h+posenc/rope_scaling.cpp", 150, 790000});
  write_rows(dir + "/loc.csv", loc);
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
      for (long d = 16; d <= 2048; d *= 2) {  // 64 = T0/4 and 1024 = 4 T0: the headline's
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
  write_setup(dir);
  write_probes(dir);
  write_report(dir, kInfo);
  const std::string md = read_file(dir + "/REPORT.md");
  // Every section has its data: no "not run", no figure left undrawn.
  CHECK(md.find("**Not run**") == std::string::npos);
  CHECK(md.find("not drawn") == std::string::npos);
}
