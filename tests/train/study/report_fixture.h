// report_fixture.h — a synthetic results folder with the study's v2 columns (written through
// tables.h, so the columns are the contract's), for the report tests. The numbers are chosen so
// that each rule of the report shows: a scheme above the 3-gram (none), a scheme whose change
// with length differs in sign between seeds (learned), one seed only (sinusoidal), a change
// of one sign on every seed (rope rises, alibi falls), a gap of one sign on every seed whose
// interval still contains 0 (alibi's sliding window).
#pragma once
#include <stdlib.h>

#include <catch2/catch.hpp>

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "data/atomic_file.h"
#include "train/log.h"
#include "train/study/report.h"

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
// 4096 (at the shorter lengths it equals the loss: a window of T0 sees the same context).
struct Scheme {
  std::string run_prefix, pe;
  std::vector<double> at256, at1024, at4096, sliding4096;
};

inline std::vector<Scheme> schemes() {
  return {
      {"", "none", {2.30, 2.35}, {2.30, 2.35}, {2.30, 2.35}, {2.30, 2.35}},
      {"", "learned", {2.05, 2.10}, {2.50, 2.00}, {3.00, 1.90}, {2.05, 2.10}},
      {"", "sinusoidal", {2.00}, {3.00}, {5.00}, {2.00}},
      {"", "rope", {1.80, 1.85, 1.90}, {2.00, 2.05, 2.10}, {2.30, 2.40, 2.50}, {1.80, 1.85, 1.90}},
      {"", "alibi", {1.88, 1.92}, {1.85, 1.88}, {1.80, 1.83}, {1.85, 1.90}},
      {"kjv_", "rope", {1.70, 1.75}, {1.72, 1.78}, {1.90, 2.00}, {1.70, 1.75}},
      {"kjv_", "none", {1.90, 1.95}, {1.90, 1.95}, {1.90, 1.95}, {1.90, 1.95}},
      {"", "rope_theta10", {2.00, 2.10}, {2.10, 2.20}, {2.20, 2.30}, {2.00, 2.10}},
      {"", "rope_theta1e6", {1.85}, {1.90}, {2.00}, {1.85}},
      {"", "learned_gpt2", {2.50, 2.60}, {2.70, 2.80}, {2.90, 3.00}, {2.50, 2.60}},
  };
}

// "rope_theta10" -> pe "rope"; "learned_gpt2" -> "learned".
inline std::string pe_of(const std::string& name) {
  return name.substr(0, name.find('_'));
}

inline void write_runs_and_evals(const TempDir& d) {
  std::vector<RunRow> runs;
  std::vector<EvalRow> evals;
  for (const Scheme& s : schemes()) {
    for (size_t i = 0; i < s.at256.size(); ++i) {
      const long seed = static_cast<long>(i + 1);
      const std::string run = s.run_prefix + s.pe + "_s" + std::to_string(seed);
      const std::string corpus = s.run_prefix.empty() ? "fortunes" : "kjv";
      runs.push_back({run, pe_of(s.pe), seed, "lm", corpus, "scaled", 2000, 2000 * 16 * 256, 300,
                      s.at256[i], 0.01 * seed});
      const double lens[3] = {256, 1024, 4096};
      const double loss[3] = {s.at256[i], s.at1024[i], s.at4096[i]};
      for (int k = 0; k < 3; ++k) {
        const double sliding = k == 2 ? s.sliding4096[i] : s.at256[i];
        evals.push_back({run, pe_of(s.pe), seed, corpus, long(lens[k]),
                         pe_of(s.pe) == "rope" ? "none" : "", loss[k], sliding, 40 / (1 << k)});
      }
      if (s.pe == "rope" && s.run_prefix.empty()) {  // RoPE scaling on every main seed
        const double ntk[3] = {s.at256[i], s.at1024[i] - 0.1, s.at4096[i] - 0.3};
        const double linear[3] = {s.at256[i], 2.2, std::vector<double>{2.5, 2.3, 2.6}[i]};
        for (int k = 0; k < 3; ++k) {
          evals.push_back({run, "rope", seed, corpus, long(lens[k]), "ntk", ntk[k], NAN, 10});
          evals.push_back({run, "rope", seed, corpus, long(lens[k]), "linear", linear[k], NAN, 10});
        }
      }
    }
  }
  write_rows(d.path + "/runs.csv", runs);
  write_rows(d.path + "/extrapolation.csv", evals);
}

// Curves: the last row's train_loss is what the headline's train ppl reads.
inline void write_curves(const TempDir& d) {
  const std::vector<std::pair<std::string, double>> last = {
      {"rope_s1", 1.70}, {"rope_s2", 1.75},    {"rope_s3", 1.80},    {"none_s1", 2.2},
      {"none_s2", 2.25}, {"kjv_rope_s1", 1.6}, {"kjv_rope_s2", 1.65}};
  for (const auto& [run, loss] : last) {
    std::vector<LogRow> rows = {{0, 1e-3, 4.5, 4.6, 1, 1000, 0},
                                {1000, 1e-3, 2.5, NAN, 1, 1000, 0},
                                {2000, 1e-4, loss, loss + 0.1, 1, 1000, 0}};
    d.write("curves/" + run + ".csv", log_text(rows));
  }
}

inline void write_tables(const TempDir& d) {
  std::vector<PositionRow> pos;
  for (long seed = 1; seed <= 3; ++seed) {
    for (long b = 0; b < 4; ++b) {
      pos.push_back({"rope_s" + std::to_string(seed), "rope", seed, "fortunes", 4096, "none",
                     1024 * b, 1024 * (b + 1), 1.8 + 0.2 * b + 0.01 * seed, 1.8});
    }
  }
  write_rows(d.path + "/position_loss.csv", pos);
  write_rows<NgramRow>(d.path + "/ngram.csv", {{"fortunes", 1, 1, 3.3},
                                               {"fortunes", 2, 0.5, 2.6},
                                               {"fortunes", 3, 0.1, 2.2},
                                               {"fortunes", 4, 0.05, 1.95},
                                               {"fortunes", 5, 0.01, 1.9},
                                               {"kjv", 3, 0.1, 2.0},
                                               {"kjv", 4, 0.05, 1.8}});
  write_rows<MlmRow>(d.path + "/mlm.csv", {{"mlm_none_s1", "none", 1, 2.5, 1e-6},
                                           {"mlm_none_s2", "none", 2, 2.6, 2e-6},
                                           {"mlm_rope_s1", "rope", 1, 2.2, 0.3},
                                           {"mlm_rope_s2", "rope", 2, 2.3, 0.4}});
  write_rows<TimingRow>(d.path + "/timing.csv", {{"train rope_s1", 100},
                                                 {"train rope_s2", 110},
                                                 {"eval rope_s1", 20},
                                                 {"ngram fortunes", 5}});
  write_rows<TuningRow>(d.path + "/tuning.csv", {{"rope", 1e-3, 16, 200, 819200, 2.4, 30},
                                                 {"rope", 3e-3, 16, 200, 819200, 2.3, 31}});
  write_rows<LocRow>(d.path + "/loc.csv", {{"none", "posenc/none.h+posenc/none.cpp", 10, 790000},
                                           {"rope", "posenc/rope.h+posenc/rope.cpp", 120, 800000}});
}

inline void write_tasks(const TempDir& d) {
  std::vector<TaskRow> t;
  t.push_back({"reverse", "rope", 1, 24, 24, NAN, 100, 99, 0.99, 0.95, 1.0});
  t.push_back({"reverse", "rope", 1, 24, 48, NAN, 100, 90, 0.90, 0.85, 0.94});
  t.push_back({"reverse", "rope", 2, 24, 48, NAN, 100, 88, 0.88, 0.82, 0.92});
  t.push_back({"reverse", "none", 1, 24, 48, NAN, 100, 10, 0.10, 0.06, 0.16});
  t.push_back({"reverse", "none", 2, 24, 48, NAN, 100, 12, 0.12, 0.08, 0.18});
  t.push_back({"passkey", "rope", 1, 256, 256, 0, 20, 20, 1.0, 0.84, 1.0});
  t.push_back({"passkey", "rope", 1, 256, 1024, 0.5, 20, 5, 0.25, 0.11, 0.47});
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
}

inline void write_study(const TempDir& d) {
  write_runs_and_evals(d);
  write_curves(d);
  write_tables(d);
  write_tasks(d);
  write_attention(d);
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

// The bullet of "What the numbers say" that contains `key` ("" if none).
inline std::string finding(const std::string& md, const std::string& key) {
  const size_t says = md.find("## What the numbers say");
  REQUIRE(says != std::string::npos);
  const size_t end = md.find("\n## ", says + 1);
  const size_t at = md.find(key, says);
  if (at == std::string::npos || at > end) return "";
  const size_t start = md.rfind("\n- ", at) + 1;
  return md.substr(start, md.find('\n', at) - start);
}

}  // namespace report_test
