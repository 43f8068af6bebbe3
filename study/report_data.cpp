// report_data.cpp — loading the study's results folder, the groups of runs, numbers per seed.
// See report.h; the files' columns are in tables.h.
#include <algorithm>
#include <cmath>
#include <filesystem>
#include <set>

#include "study/report.h"

namespace poslab::report_detail {
namespace {

namespace fs = std::filesystem;

// An optional file: nullopt when it is absent or holds a header only (a part not run).
template <class Row>
std::optional<std::vector<Row>> read_optional(const std::string& path) {
  if (!fs::exists(path)) return std::nullopt;
  std::vector<Row> rows = read_rows<Row>(path);
  if (rows.empty()) return std::nullopt;
  return rows;
}

// curves/<run>.csv, every one in the folder (sorted by name: deterministic).
void load_curves(Study& s) {
  const fs::path dir = s.dir + "/curves";
  if (!fs::is_directory(dir)) return;
  std::vector<fs::path> files;
  for (const auto& e : fs::directory_iterator(dir)) {
    if (e.path().extension() == ".csv") files.push_back(e.path());
  }
  std::sort(files.begin(), files.end());
  for (const auto& p : files) s.curves[p.stem().string()] = read_log(p.string());
}

// The schemes of the main runs, in runs.csv or extrapolation.csv; the evaluated lengths.
void find_schemes(Study& s) {
  std::vector<std::string> pes;
  if (s.runs) {
    for (const auto& r : *s.runs) {
      if (r.run == kMain.name(r.pe, r.seed)) pes.push_back(r.pe);
    }
  }
  std::set<long> lens, all;  // the main runs' lengths; any run's if there are no main runs
  if (s.eval) {
    for (const auto& e : *s.eval) {
      if (e.run == kMain.name(e.pe, e.seed)) pes.push_back(e.pe), lens.insert(e.len);
      all.insert(e.len);
    }
  }
  if (lens.empty()) lens = all;
  s.pes = order_pes(pes);
  s.lengths.assign(lens.begin(), lens.end());
}

bool in_group(const std::string& run, const Group& g, const std::string& pe, long seed) {
  return run == g.name(pe, seed);
}

bool scaling_matches(const std::string& cell, const std::string& scaling) {
  return cell == scaling || (scaling == "none" && cell.empty());
}

}  // namespace

Study load_study(const std::string& dir) {
  Study s;
  s.dir = dir;
  s.runs = read_optional<RunRow>(dir + "/runs.csv");
  load_curves(s);
  s.eval = read_optional<EvalRow>(dir + "/extrapolation.csv");
  s.positions = read_optional<PositionRow>(dir + "/position_loss.csv");
  s.attribution = read_optional<AttributionRow>(dir + "/attribution.csv");
  s.copy = read_optional<CopyCsvRow>(dir + "/copy.csv");
  s.rope_pairs = read_optional<RopePairRow>(dir + "/rope_pairs.csv");
  s.mlm = read_optional<MlmRow>(dir + "/mlm.csv");
  s.tasks = read_optional<TaskRow>(dir + "/tasks.csv");
  s.ngram = read_optional<NgramRow>(dir + "/ngram.csv");
  s.timing = read_optional<TimingRow>(dir + "/timing.csv");
  s.attention = read_optional<AttentionRow>(dir + "/attention.csv");
  s.attention_distance = read_optional<AttentionDistanceRow>(dir + "/attention_distance.csv");
  s.tuning = read_optional<TuningRow>(dir + "/tuning.csv");
  s.loc = read_optional<LocRow>(dir + "/loc.csv");
  s.screening = read_optional<ScreeningRow>(dir + "/screening.csv");
  s.passkey_distance = read_optional<PasskeyDistanceRow>(dir + "/passkey_distance.csv");
  s.retrained = read_optional<RetrainedRow>(dir + "/retrained.csv");
  s.corpus = read_optional<CorpusRow>(dir + "/corpus.csv");
  s.throughput = read_optional<ThroughputRow>(dir + "/throughput.csv");
  find_schemes(s);
  return s;
}

std::vector<std::string> order_pes(std::vector<std::string> pes) {
  static const std::vector<std::string> kOrder = {
      "none", "learned", "sinusoidal", "rope",       "alibi", "t5",           "kerple",
      "fire", "prope",   "rope_rand",  "rope_nope4", "xpos",  "learned_rand", "prope25"};
  const auto rank = [](const std::string& pe) {
    return std::find(kOrder.begin(), kOrder.end(), pe) - kOrder.begin();
  };
  std::sort(pes.begin(), pes.end(), [&](const std::string& a, const std::string& b) {
    return rank(a) != rank(b) ? rank(a) < rank(b) : a < b;
  });
  pes.erase(std::unique(pes.begin(), pes.end()), pes.end());
  return pes;
}

std::vector<const RunRow*> group_runs(const Study& s, const Group& g, const std::string& pe) {
  std::vector<const RunRow*> out;
  if (!s.runs) return out;
  for (const auto& r : *s.runs) {
    if (r.pe == pe && in_group(r.run, g, pe, r.seed)) out.push_back(&r);
  }
  std::sort(out.begin(), out.end(),
            [](const RunRow* a, const RunRow* b) { return a->seed < b->seed; });
  return out;
}

std::vector<std::string> group_pes(const Study& s, const Group& g) {
  std::vector<std::string> pes;
  if (s.runs) {
    for (const auto& r : *s.runs) {
      if (in_group(r.run, g, r.pe, r.seed)) pes.push_back(r.pe);
    }
  }
  if (s.eval) {
    for (const auto& e : *s.eval) {
      if (in_group(e.run, g, e.pe, e.seed)) pes.push_back(e.pe);
    }
  }
  return order_pes(pes);
}

std::vector<long> group_seeds(const Study& s, const Group& g, const std::string& pe) {
  std::set<long> seeds;
  for (const RunRow* r : group_runs(s, g, pe)) seeds.insert(r->seed);
  if (s.eval) {
    for (const auto& e : *s.eval) {
      if (e.pe == pe && in_group(e.run, g, pe, e.seed)) seeds.insert(e.seed);
    }
  }
  return {seeds.begin(), seeds.end()};
}

std::vector<long> group_lengths(const Study& s, const Group& g) {
  std::set<long> lens;
  if (s.eval) {
    for (const auto& e : *s.eval) {
      if (in_group(e.run, g, e.pe, e.seed)) lens.insert(e.len);
    }
  }
  return {lens.begin(), lens.end()};
}

PerSeed eval_per_seed(const Study& s, const Group& g, const std::string& pe, long L,
                      const std::string& scaling, Measure m) {
  PerSeed out;
  if (!s.eval) return out;
  for (const auto& e : *s.eval) {
    if (e.pe != pe || e.len != L || !in_group(e.run, g, pe, e.seed) ||
        !scaling_matches(e.rope_scaling, scaling)) {
      continue;
    }
    const double v = m == Measure::loss      ? e.loss
                     : m == Measure::sliding ? e.sliding_loss
                                             : e.loss - e.sliding_loss;
    if (std::isfinite(v)) out[e.seed] = v;
  }
  return out;
}

std::map<long, PerSeed> position_losses(const Study& s, const Group& g, const std::string& pe,
                                        long L, std::map<long, long>* ends,
                                        const std::string& scaling, Measure m) {
  std::map<long, PerSeed> out;
  if (!s.positions) return out;
  for (const auto& p : *s.positions) {
    if (p.pe != pe || p.len != L || !in_group(p.run, g, pe, p.seed) ||
        !scaling_matches(p.rope_scaling, scaling)) {
      continue;
    }
    const double v = m == Measure::loss      ? p.loss
                     : m == Measure::sliding ? p.sliding_loss
                                             : p.loss - p.sliding_loss;
    if (std::isfinite(v)) out[p.start][p.seed] = v;
    if (ends) (*ends)[p.start] = p.end;
  }
  return out;
}

PerSeed val_loss_per_seed(const Study& s, const Group& g, const std::string& pe) {
  PerSeed out;
  for (const RunRow* r : group_runs(s, g, pe)) {
    if (std::isfinite(r->val_loss)) out[r->seed] = r->val_loss;
  }
  return out;
}

double ngram_loss(const Study& s, const std::string& corpus, long n) {
  if (s.ngram) {
    for (const auto& r : *s.ngram) {
      if (r.corpus == corpus && r.n == n) return r.val_loss;
    }
  }
  return NAN;
}

std::vector<std::string> rope_scalings(const Study& s) {
  static const std::vector<std::string> kOrder = {"none", "linear", "ntk", "dynamic", "yarn"};
  std::vector<std::string> out;
  if (!s.eval) return out;
  for (const auto& e : *s.eval) {
    const std::string sc = e.rope_scaling.empty() ? "none" : e.rope_scaling;
    if (e.pe == "rope" && in_group(e.run, kMain, "rope", e.seed) &&
        std::find(out.begin(), out.end(), sc) == out.end()) {
      out.push_back(sc);
    }
  }
  const auto rank = [](const std::string& x) {
    return std::find(kOrder.begin(), kOrder.end(), x) - kOrder.begin();
  };
  std::sort(out.begin(), out.end(), [&](const std::string& a, const std::string& b) {
    return rank(a) != rank(b) ? rank(a) < rank(b) : a < b;
  });
  return out;
}

Interval interval_of(const PerSeed& v) {
  std::vector<double> values;
  for (const auto& [seed, x] : v) values.push_back(x);
  return mean_interval(values);
}

std::string canonical_embedding(const std::string& pe) {
  return pe == "learned" ? "gpt2" : "scaled";
}
std::string swapped_embedding(const std::string& pe) {
  return pe == "learned" ? "scaled" : "gpt2";
}
Group swapped_group(const std::string& pe) {
  return {"", "_" + swapped_embedding(pe)};
}

Budget budget_of(const Study& s, const std::string& pe) {
  Budget b;
  const PerSeed b4 = val_loss_per_seed(s, kB4, pe), b2 = val_loss_per_seed(s, kB2, pe),
                b1 = val_loss_per_seed(s, kMain, pe);
  for (const auto& [seed, v] : b1)  // the seeds that hold all three budgets
    if (b4.count(seed) && b2.count(seed))
      b.at_b4[seed] = b4.at(seed), b.at_b2[seed] = b2.at(seed), b.at_b[seed] = v;
  const auto mean = [](const PerSeed& v) { return v.empty() ? NAN : interval_of(v).mean; };
  b.b4 = mean(b.at_b4), b.b2 = mean(b.at_b2), b.b = mean(b.at_b);
  return b;
}

std::string main_corpus(const Study& s) {
  for (const auto& r : s.runs ? *s.runs : std::vector<RunRow>{})
    if (r.run == kMain.name(r.pe, r.seed)) return r.corpus;
  return s.ngram && !s.ngram->empty() ? s.ngram->front().corpus : "";
}

PerSeed paired_difference(const PerSeed& a, const PerSeed& b) {
  PerSeed out;
  for (const auto& [seed, x] : a) {
    if (b.count(seed)) out[seed] = x - b.at(seed);
  }
  return out;
}

PerSeed unseen_per_seed(const Study& s, const Group& g, const std::string& pe, long L, int which,
                        const std::string& scaling) {
  PerSeed out;
  if (!s.eval) return out;
  for (const auto& e : *s.eval) {
    if (e.pe != pe || e.len != L || !in_group(e.run, g, pe, e.seed) ||
        !scaling_matches(e.rope_scaling, scaling)) {
      continue;
    }
    const double v = which == 1 ? e.loss_unseen_1 : e.loss_unseen_2;
    if (std::isfinite(v)) out[e.seed] = v;
  }
  return out;
}

}  // namespace poslab::report_detail
