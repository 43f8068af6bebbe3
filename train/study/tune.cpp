// tune.cpp — the learning-rate x batch-size tuning. See tune.h.
#include "train/study/tune.h"

#include <cmath>
#include <cstdio>
#include <filesystem>
#include <map>

#include "train/study/archive.h"
#include "train/study/runner.h"
#include "train/study/schedule.h"
#include "train/study/tables.h"
#include "train/study/timing.h"

namespace poslab {
namespace {

// One row of tuning.csv from a finished tuning run: its loss at T0 and its seconds (train and
// eval stages).
TuningRow tuning_row(const StudyConfig& c, const RunSpec& r, const EvalSpec& e) {
  const int64_t T0 = r.train.model.block_size;
  std::optional<EvalResult> res = read_eval(eval_path(c, e, T0), eval_windows(c, r, T0));
  if (!res) fail("--tune: ", eval_path(c, e, T0), " is missing or unreadable");
  const std::string dir = c.run_dir(r.name);
  TuningRow row;
  row.pe = e.pe;
  row.lr = r.train.adam.lr;
  row.batch = r.train.batch;
  row.steps = r.train.steps;
  row.tokens = r.train.steps * r.train.batch * T0;
  row.val_loss = res->loss;
  row.seconds = stage_seconds(dir, "train " + r.name) + stage_seconds(dir, "eval " + r.name);
  return row;
}

// Each scheme's learning rate of lowest loss among the rows (at the first batch size of each).
std::map<std::string, double> best_lrs(const std::vector<TuningRow>& rows) {
  std::map<std::string, std::pair<double, double>> best;  // pe -> (loss, lr)
  for (const TuningRow& t : rows) {
    auto it = best.find(t.pe);
    if (it == best.end() || t.val_loss < it->second.first) best[t.pe] = {t.val_loss, t.lr};
  }
  std::map<std::string, double> out;
  for (const auto& [pe, b] : best) out[pe] = b.second;
  return out;
}

}  // namespace

std::map<std::string, double> tune_study(const StudyConfig& config) {
  StudyConfig c = config;
  c.lens = {c.ctx};  // the tuning runs are scored at T0 only
  const StudyPlan p = tuning_plan(c);
  import_archived_runs(c, p);
  prepare_study_data(c, p);
  const std::vector<const RunSpec*> pending = pending_runs(c, p);
  std::fprintf(stderr, "tuning: %zu of %zu short runs to make, %lld steps each (B/%lld)\n",
               pending.size(), p.runs.size(),
               p.runs.empty() ? 0LL : (long long)p.runs.front().train.steps,
               (long long)c.tune_divisor);
  run_in_process(c, p, pending);
  std::vector<TuningRow> rows;
  for (size_t i = 0; i < p.runs.size(); ++i) {
    rows.push_back(tuning_row(c, p.runs[i], p.evals[i]));
    const TuningRow& t = rows.back();
    std::printf("%-12s lr %-8g batch %-4ld %6ld steps  val loss %.4f  %.0f s\n", t.pe.c_str(), t.lr,
                t.batch, t.steps, t.val_loss, t.seconds);
  }
  write_rows(c.out + "/tuning.csv", rows);
  const std::map<std::string, double> lrs = best_lrs(rows);
  for (const auto& [pe, lr] : lrs) std::printf("choice: %s lr %g\n", pe.c_str(), lr);
  return lrs;
}

std::map<std::string, double> read_tuning(const StudyConfig& c) {
  import_archived_tables(c);
  const std::string path = c.out + "/tuning.csv";
  if (!std::filesystem::exists(path)) return {};
  return best_lrs(read_rows<TuningRow>(path));
}

}  // namespace poslab
