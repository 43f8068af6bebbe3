// report_fixture.h — a synthetic results folder with the study's v4 columns and run names
// (written through tables.h, so the columns are the contract's), for the report tests: the
// corpus pystdlib, six main schemes with a B/4 and a B/2 cooldown branch for every seed, the
// break experiments and ablations trained at B/4. The numbers are chosen so that each rule of
// the report shows in a cell a test can recompute by hand: 3 seeds (rope: a t interval), 2
// seeds (none, learned, alibi: both values), 1 seed (sinusoidal, t5), a budget curve that has
// converged (alibi) and one that has not (rope), ranks that change with the budget (alibi first
// at B/4, rope at B), a passkey seed that learned the task and one that did not, attribution
// shares of round size (rope: 50%, 20%, 60%), runs made by two machines in three invocations
// and some runs that do not say where they were made.
#pragma once
#include <stdlib.h>

#include <catch2/catch.hpp>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "data/atomic_file.h"
#include "study/report.h"
#include "train/log.h"

namespace report_test {

using namespace poslab;
namespace fs = std::filesystem;

// A fresh directory under /tmp, removed when the object goes out of scope.
struct TempDir {
  std::string path;
  TempDir() {
    char tmpl[] = "/tmp/poslab_report_XXXXXX";
    REQUIRE(mkdtemp(tmpl) != nullptr);
    path = tmpl;
  }
  ~TempDir() { fs::remove_all(path); }
  void write(const std::string& name, const std::string& text) const {
    fs::create_directories(fs::path(path + "/" + name).parent_path());
    std::ofstream(path + "/" + name) << text;
  }
};

// Losses per seed (seed 1, 2, ...) at T0 = 256, 1024 and 4096, and the sliding-window loss at
// 4096 (at the shorter lengths it equals the loss: a window of T0 sees the same context). A main
// scheme (run = its pe) has, per seed, its B/4 and B/2 branches' loss minus its own (the B/4
// branch at every length, the B/2 branch at T0), and loss_window32 minus its loss at T0 (none
// given: not measured).
struct Scheme {     // in schemes(): run, at256, at1024, at4096, sliding4096, b4, b2, window32
  std::string run;  // the run's name without "_s<seed>": "rope" (a main scheme), "rope_theta10"
  std::vector<double> at256, at1024, at4096, sliding4096;
  std::vector<double> b4 = {}, b2 = {}, window32 = {};
  std::string pe() const { return run.substr(0, run.find('_')); }  // "rope_theta10" -> "rope"
  bool main() const { return run == pe(); }
};

// The means at T0 rank the schemes alibi, rope, sinusoidal, learned, t5, none at B/4 (2.02,
// 2.15, 2.20, 2.275, 2.30, 2.365) and rope, alibi, ... at B/2 (1.88, 1.91, 2.01, 2.125, 2.15,
// 2.335) and at B (1.85, 1.90, 2.00, 2.075, 2.10, 2.325). The last doubling bought 0.01 (none,
// sinusoidal, alibi: converged), 0.03 (rope) and 0.05 (learned, t5).
inline std::vector<Scheme> schemes() {
  return {
      {"none",
       {2.30, 2.35},
       {2.30, 2.35},
       {2.30, 2.35},
       {2.30, 2.35},
       {0.04, 0.04},
       {0.01, 0.01},
       {0.05, 0.05}},
      {"learned",
       {2.05, 2.10},
       {2.50, 2.00},
       {3.00, 1.90},
       {2.05, 2.10},
       {0.20, 0.20},
       {0.05, 0.05}},
      {"sinusoidal", {2.00}, {3.00}, {5.00}, {2.00}, {0.20}, {0.01}},
      {"rope",
       {1.80, 1.85, 1.90},
       {2.00, 2.05, 2.10},
       {2.30, 2.40, 2.50},
       {1.80, 1.85, 1.90},
       {0.28, 0.30, 0.32},
       {0.03, 0.03, 0.03},
       {0.32, 0.34, 0.36}},
      {"alibi",
       {1.88, 1.92},
       {1.85, 1.88},
       {1.80, 1.83},
       {1.85, 1.90},
       {0.12, 0.12},
       {0.01, 0.01},
       {0.15, 0.15}},
      {"t5", {2.10}, {2.15}, {2.25}, {2.10}, {0.20}, {0.05}},
      // Trained at B/4: the break experiments and the ablations.
      {"rope_theta10", {2.00, 2.10}, {2.10, 2.20}, {2.20, 2.30}, {2.00, 2.10}},
      {"rope_theta1e6", {1.85}, {1.90}, {2.00}, {1.85}},
      {"learned_scaled", {2.50, 2.60}, {2.70, 2.80}, {2.90, 3.00}, {2.50, 2.60}},
      {"t5_dist256", {2.0}, {2.1}, {2.2}, {2.0}},
  };
}

// Where and when a run was made (runs.csv machine, invocation): most runs by the first
// invocation on a 2-core machine, rope's seed 3 and its branches by a second on a 16-core one,
// the break experiments and ablations by a third on the first machine; t5's runs do not say.
inline const std::string kSmall = "Test CPU (avx2 fma)", kBig = "Big CPU (avx2 fma avx512f)";
inline const std::string kFirst = "2026-01-01T00:00Z", kSecond = "2026-01-02T00:00Z",
                         kThird = "2026-01-03T00:00Z";
inline std::pair<std::string, std::string> made_by(const Scheme& s, long seed) {
  if (!s.main()) return {kSmall, kThird};
  if (s.run == "t5") return {"", ""};
  if (s.run == "rope" && seed == 3) return {kBig, kSecond};
  return {kSmall, kFirst};
}

// A runs.csv row: steps x batch 16 x T0 256 tokens, 0.15 s a step, last20_gain 0.01 x seed;
// learned's main runs add their positions GPT-2's way, every other run scales the tokens.
inline RunRow run_row(const Scheme& s, const std::string& run, long seed, long steps,
                      double val_loss, const std::string& branch_of) {
  const auto [machine, invocation] = made_by(s, seed);
  return {run,       s.pe(),           seed,
          "lm",      "pystdlib",       s.run == "learned" ? "gpt2" : "scaled",
          steps,     steps * 16 * 256, 0.15 * steps,
          val_loss,  0.01 * seed,      3e-3,
          "wsd",     branch_of,        machine,
          invocation};
}

// An extrapolation.csv row at the k-th length (256, 1024, 4096). Main runs: 40, 20, 10 windows
// and a standard error of 0.01 + 0.01 k + 0.001 x seed; any other run 7 windows and 0.5 (the
// setup's windows row reads the main runs alone).
inline EvalRow eval_row(const std::string& run, const std::string& pe, long seed, int k,
                        double loss, double sliding, bool main) {
  EvalRow e{run, pe, seed, "pystdlib", 256L << (2 * k), pe == "rope" ? "none" : "", loss, sliding};
  e.windows = main ? 40 >> k : 7;
  e.loss_se = main ? 0.01 + 0.01 * k + 0.001 * seed : 0.5;
  return e;
}

// The RoPE scalings of every main RoPE seed at 256, 1024, 4096 (10 windows and a standard error
// of 0.9: neither is the plain runs'); yarn's unseen losses at 4096: its loss + 0.05 and + 0.1.
inline void add_scalings(std::vector<EvalRow>& evals, const Scheme& s, size_t i) {
  const long seed = static_cast<long>(i + 1);
  const std::string run = "rope_s" + std::to_string(seed);
  const long lens[3] = {256, 1024, 4096};
  const double ntk[3] = {s.at256[i], s.at1024[i] - 0.1, s.at4096[i] - 0.3};
  const double linear[3] = {s.at256[i], 2.2, std::vector<double>{2.5, 2.3, 2.6}[i]};
  const double yarn[3] = {s.at256[i], s.at1024[i] - 0.2, s.at4096[i] - 0.4};
  for (int k = 0; k < 3; ++k) {
    for (const auto& [name, loss] :
         {std::pair{"ntk", ntk[k]}, std::pair{"linear", linear[k]}, std::pair{"yarn", yarn[k]}}) {
      evals.push_back({run, "rope", seed, "pystdlib", lens[k], name, loss, NAN, 10});
      evals.back().loss_se = 0.9;
    }
  }
  evals.back().loss_unseen_1 = yarn[2] + 0.05, evals.back().loss_unseen_2 = yarn[2] + 0.1;
}

// The cooldown branches of main run i: <pe>_b4_s<seed> (500 steps, evaluated at every length)
// and <pe>_b2_s<seed> (1000 steps, at T0), their losses the main run's + b4[i] and + b2[i].
inline void add_branches(std::vector<RunRow>& runs, std::vector<EvalRow>& evals, const Scheme& s,
                         size_t i) {
  const long seed = static_cast<long>(i + 1);
  const std::string main = s.run + "_s" + std::to_string(seed),
                    b4 = s.run + "_b4_s" + std::to_string(seed),
                    b2 = s.run + "_b2_s" + std::to_string(seed);
  runs.push_back(run_row(s, b4, seed, 500, s.at256[i] + s.b4[i], main));
  runs.push_back(run_row(s, b2, seed, 1000, s.at256[i] + s.b2[i], main));
  const double loss[3] = {s.at256[i], s.at1024[i], s.at4096[i]};
  for (int k = 0; k < 3; ++k) {
    evals.push_back(eval_row(b4, s.pe(), seed, k, loss[k] + s.b4[i], loss[k] + s.b4[i], false));
  }
  evals.push_back(eval_row(b2, s.pe(), seed, 0, loss[0] + s.b2[i], loss[0] + s.b2[i], false));
}

// Every scheme of schemes(): runs.csv (main runs 2000 steps, the others 500: B/4) and
// extrapolation.csv; at 4096 the unseen losses are the loss + 0.1 and + 0.2.
inline void write_runs_and_evals(const TempDir& d) {
  std::vector<RunRow> runs;
  std::vector<EvalRow> evals;
  for (const Scheme& s : schemes()) {
    for (size_t i = 0; i < s.at256.size(); ++i) {
      const long seed = static_cast<long>(i + 1);
      const std::string run = s.run + "_s" + std::to_string(seed);
      const double loss[3] = {s.at256[i], s.at1024[i], s.at4096[i]};
      runs.push_back(run_row(s, run, seed, s.main() ? 2000 : 500, loss[0], ""));
      for (int k = 0; k < 3; ++k) {
        const double sliding = k == 2 ? s.sliding4096[i] : loss[0];
        evals.push_back(eval_row(run, s.pe(), seed, k, loss[k], sliding, s.main()));
        if (k == 0 && i < s.window32.size()) evals.back().loss_window32 = loss[0] + s.window32[i];
        if (k == 2)
          evals.back().loss_unseen_1 = loss[k] + 0.1, evals.back().loss_unseen_2 = loss[k] + 0.2;
      }
      if (s.run == "rope") add_scalings(evals, s, i);
      if (s.main()) add_branches(runs, evals, s, i);
    }
  }
  write_rows(d.path + "/runs.csv", runs);
  write_rows(d.path + "/extrapolation.csv", evals);
}

// attribution.csv, copy.csv and rope_pairs.csv for the RoPE main runs (and alibi's copy).
// rope, every seed: loss at T0 1.8, unseen plain 2.8 (excess 1.0), with window T0 2.3 (50%
// removed), with log scale 2.6 (20%), offsets 256/1024/3840: 2.0, 2.2, 2.4 (60% of the excess).
// Copy gain at d = 64 (the distance nearest T0/4): 0.7 + 0.1 x seed; at d = 1024 (nearest 4 T0):
// 0.1 x seed; at 512 and 2048: 0.05. alibi seed 1: 0.6 at 64, 0.5 at 1024.
inline void write_probes(const TempDir& d) {
  std::vector<AttributionRow> a;
  std::vector<CopyCsvRow> c;
  std::vector<RopePairRow> p;
  for (long seed = 1; seed <= 3; ++seed) {
    const std::string run = "rope_s" + std::to_string(seed);
    a.push_back({run, "rope", seed, 256, 0, 0, "none", 1.8, NAN});
    a.push_back({run, "rope", seed, 4096, 0, 0, "none", 2.5, 2.8});
    a.push_back({run, "rope", seed, 4096, 0, 256, "none", 2.2, 2.3});
    a.push_back({run, "rope", seed, 4096, 0, 0, "log", 2.4, 2.6});
    for (const auto& [P, loss] : {std::pair{256L, 2.0}, {1024L, 2.2}, {3840L, 2.4}}) {
      a.push_back({run, "rope", seed, 256, P, 0, "none", loss, loss});
    }
    for (const long dist : {64L, 512L, 1024L, 2048L}) {
      const double gain = dist == 64 ? 0.7 + 0.1 * seed : dist == 1024 ? 0.1 * seed : 0.05;
      c.push_back({run, "rope", seed, dist, 200, 1.0, 1.0 + gain});
    }
    p.push_back({run, seed, -1, NAN, 2.8});
    for (long pair = 0; pair < 4; ++pair) {
      p.push_back({run, seed, pair, 6.283 * std::pow(10.0, pair), 2.8 - 0.1 * pair});
    }
  }
  c.push_back({"alibi_s1", "alibi", 1, 64, 200, 1.0, 1.6});
  c.push_back({"alibi_s1", "alibi", 1, 1024, 200, 1.0, 1.5});
  write_rows(d.path + "/attribution.csv", a);
  write_rows(d.path + "/copy.csv", c);
  write_rows(d.path + "/rope_pairs.csv", p);
}

// Curves: the last row's tokens/s is what the throughput table reads, of the main runs alone
// (rope's B/4 branch of seed 1, far faster, must not count).
inline void write_curves(const TempDir& d) {
  const std::vector<std::tuple<std::string, double, double>> last = {
      {"rope_s1", 1.70, 1000}, {"rope_s2", 1.75, 1100}, {"rope_s3", 1.80, 4000},
      {"none_s1", 2.2, 1200},  {"none_s2", 2.25, 1300}, {"rope_b4_s1", 2.0, 9000}};
  for (const auto& [run, loss, tokens_per_s] : last) {
    std::vector<LogRow> rows = {{0, 1e-3, 4.5, 4.6, 1, 1000, 0},
                                {1000, 1e-3, 2.5, NAN, 1, 1000, 0},
                                {2000, 1e-4, loss, loss + 0.1, 1, tokens_per_s, 0}};
    d.write("curves/" + run + ".csv", log_text(rows));
  }
}

// position_loss.csv at 4096. rope, every seed: buckets [0,256), [256,1024), [1024,2048),
// [2048,4096) (widths 3 : 4 : 8 of [T0, 16 T0)) with loss − sliding_loss 0 inside T0, then
// 0.00, 0.15, 0.30 plus 0.01 x seed: width-weighted over [T0, 16 T0) 0.2 + 0.01 x seed (the plain
// mean of the three would be 0.15 + 0.01 x seed). rope + yarn: 0 inside T0, then −0.3, 0, −0.05
// (weighted: −332.8 / 3840 = −0.0867). alibi: four buckets 1024 wide, which do not tile
// [256, 4096). And at 1024, rope: [0, 256) at its sliding loss, [256, 1024) 0.1 x seed above.
inline void write_positions(const TempDir& d) {
  std::vector<PositionRow> pos;
  const long edges[5] = {0, 256, 1024, 2048, 4096};
  const double gap[4] = {0, 0.0, 0.15, 0.30}, yarn[4] = {0, -0.3, 0.0, -0.05};
  for (long seed = 1; seed <= 3; ++seed) {
    const std::string run = "rope_s" + std::to_string(seed);
    for (int b = 0; b < 4; ++b) {
      pos.push_back({run, "rope", seed, "pystdlib", 4096, "none", edges[b], edges[b + 1],
                     1.8 + gap[b] + (b > 0 ? 0.01 * seed : 0), 1.8});
    }
    for (int b = 0; b < 4; ++b) {
      pos.push_back({run, "rope", seed, "pystdlib", 4096, "yarn", edges[b], edges[b + 1],
                     1.8 + yarn[b], 1.8});
    }
    pos.push_back({run, "rope", seed, "pystdlib", 1024, "none", 0, 256, 1.8, 1.8});
    pos.push_back({run, "rope", seed, "pystdlib", 1024, "none", 256, 1024, 1.8 + 0.1 * seed, 1.8});
  }
  for (long seed = 1; seed <= 2; ++seed) {
    for (long b = 0; b < 4; ++b) {
      pos.push_back({"alibi_s" + std::to_string(seed), "alibi", seed, "pystdlib", 4096, "",
                     1024 * b, 1024 * (b + 1), 1.85, 1.9});
    }
  }
  write_rows(d.path + "/position_loss.csv", pos);
}

inline void write_tables(const TempDir& d) {
  write_positions(d);
  // Another corpus's n-grams first: the references are those of the main runs' corpus.
  write_rows<NgramRow>(d.path + "/ngram.csv", {{"fortunes", 3, 0.1, 2.0},
                                               {"fortunes", 5, 0.01, 1.7},
                                               {"pystdlib", 1, 1, 3.3},
                                               {"pystdlib", 2, 0.5, 2.6},
                                               {"pystdlib", 3, 0.1, 2.2},
                                               {"pystdlib", 4, 0.05, 1.95},
                                               {"pystdlib", 5, 0.01, 1.9}});
  write_rows<MlmRow>(d.path + "/mlm.csv", {{"mlm_none_s1", "none", 1, 2.5, 1e-6},
                                           {"mlm_none_s2", "none", 2, 2.6, 2e-6},
                                           {"mlm_rope_s1", "rope", 1, 2.2, 0.3},
                                           {"mlm_rope_s2", "rope", 2, 2.3, 0.4}});
  write_rows<TimingRow>(d.path + "/timing.csv", {{"train rope_s1", 100},
                                                 {"train rope_s2", 110},
                                                 {"eval rope_s1", 20},
                                                 {"probe rope_s1", 15},
                                                 {"ngram pystdlib", 5}});
  write_rows<TuningRow>(d.path + "/tuning.csv", {{"rope", 1e-3, 16, 200, 819200, 2.4, 30},
                                                 {"rope", 3e-3, 16, 200, 819200, 2.3, 31}});
  write_rows<LocRow>(
      d.path + "/loc.csv",
      {{"none", "posenc/none.h+posenc/none.cpp", 10, 790000},
       {"rope", "posenc/rope.h+posenc/rope.cpp", 120, 800000},
       {"rope_scaling", "posenc/rope_scaling.h+posenc/rope_scaling.cpp", 80, 800000}});
}

// corpus.csv, and throughput.csv: the first invocation measured 1,999.6 tokens/s with one run
// on both cores and 2,500 with two runs at once (jobs 2); the second 5,000 and 3,000 on 16 cores
// (jobs 1); the third made no main run and read no load average.
inline std::vector<ThroughputRow> throughput_rows() {
  return {{kFirst, kSmall, 2, 2, 1999.6, 2500, 0.15},
          {kSecond, kBig, 16, 1, 5000, 3000, 1.5},
          {kThird, kSmall, 2, 1, 2100, 1900, NAN}};
}

inline void write_setup(const TempDir& d) {
  write_rows<CorpusRow>(
      d.path + "/corpus.csv",
      {{"pystdlib", "libpython3.11-minimal 3.11.2-6; libpython3.11-stdlib 3.11.2-6", 171, 4742544,
        "0781466e", 154, 17, 481148}});
  write_rows<ThroughputRow>(d.path + "/throughput.csv", throughput_rows());
}

// Tasks: reverse (char_accuracy), unscramble (k), passkey: rope seed 1 learned it in
// distribution (100%), seed 2 did not (50%); at 1024 (4x) seed 1 gets 25%, seed 2 100%.
inline void write_tasks(const TempDir& d) {
  std::vector<TaskRow> t;
  t.push_back({"reverse", "rope", 1, 24, 24, NAN, 100, 99, 0.99, 0.95, 1.0, NAN, 0.995});
  t.push_back({"reverse", "rope", 1, 24, 48, NAN, 100, 90, 0.90, 0.85, 0.94, NAN, 0.97});
  t.push_back({"reverse", "rope", 2, 24, 48, NAN, 100, 88, 0.88, 0.82, 0.92, NAN, 0.96});
  t.push_back({"reverse", "none", 1, 24, 48, NAN, 100, 10, 0.10, 0.06, 0.16, NAN, 0.4});
  t.push_back({"reverse", "none", 2, 24, 48, NAN, 100, 12, 0.12, 0.08, 0.18, NAN, 0.42});
  t.push_back({"unscramble", "rope", 1, 6, 8, NAN, 50, 25, 0.5, 0.37, 0.63, 8, 0.8});
  t.push_back({"passkey", "rope", 1, 256, 256, 0, 20, 20, 1.0, 0.84, 1.0});
  t.push_back({"passkey", "rope", 2, 256, 256, 0, 20, 10, 0.5, 0.3, 0.7});
  t.push_back({"passkey", "rope", 1, 256, 1024, 0.5, 20, 5, 0.25, 0.11, 0.47});
  t.push_back({"passkey", "rope", 2, 256, 1024, 0.5, 20, 20, 1.0, 0.84, 1.0});
  t.push_back({"passkey", "rope", 1, 256, 4096, 0.5, 20, 0, 0.0, 0.0, 0.16});
  t.push_back({"passkey", "alibi", 1, 256, 1024, 0.5, 20, 18, 0.9, 0.70, 0.97});
  write_rows(d.path + "/tasks.csv", t);
}

inline void write_attention(const TempDir& d) {
  std::vector<AttentionRow> a;
  for (const std::string pe : {"rope", "none"}) {
    for (const long layer : {0L, 3L}) {
      for (long head = 0; head < 2; ++head) {
        for (long q = 0; q < 4; ++q) {
          for (long k = 0; k <= q; ++k) {
            a.push_back({pe, pe + "_s1", layer, head, q, k, k == q ? 1.0 : 0.0});
          }
        }
      }
    }
  }
  write_rows(d.path + "/attention.csv", a);
  // rope's head 1 of layer 3 reads further at 4 T0; none's heads stay put
  std::vector<AttentionDistanceRow> dist;
  for (const std::string pe : {"rope", "none"})
    for (const long layer : {0L, 3L})
      for (long head = 0; head < 2; ++head)
        for (const long len : {256L, 1024L})
          dist.push_back({pe, pe + "_s1", len, layer, head, 4,
                          pe == "rope" && layer == 3 && head == 1 && len == 1024 ? 90.5 : 3.25,
                          (len - 1) / 4.0});
  write_rows(d.path + "/attention_distance.csv", dist);
}

inline void write_study(const TempDir& d) {
  write_runs_and_evals(d);
  write_curves(d);
  write_tables(d);
  write_tasks(d);
  write_attention(d);
  write_probes(d);
  write_setup(d);
}

inline const ReportInfo kInfo{
    "poslab study (test)", "poslab experiments --quick", "2024-01-01", "test machine", true, 3725};

inline std::string report_of(const TempDir& d) {
  write_report(d.path, kInfo);
  return read_file(d.path + "/REPORT.md");
}

// The markdown table row whose first cell is `first`, after `after` in the text.
inline std::string row(const std::string& md, const std::string& after, const std::string& first) {
  const size_t a = md.find(after);
  REQUIRE(a != std::string::npos);
  const size_t b = md.find("\n| " + first + " |", a);
  REQUIRE(b != std::string::npos);
  return md.substr(b + 1, md.find('\n', b + 1) - b - 1);
}

}  // namespace report_test
