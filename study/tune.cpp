// tune.cpp — the learning-rate x batch-size tuning. See tune.h.
#include "study/tune.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <optional>

#include "study/archive.h"
#include "study/runner.h"
#include "study/schedule.h"
#include "study/timing.h"

namespace poslab {
namespace fs = std::filesystem;

namespace {

bool kept(const StudyConfig& c, const std::string& pe) {
  return std::find(c.kept_pes.begin(), c.kept_pes.end(), pe) != c.kept_pes.end();
}

// Every scheme the study trains: the main ones, then the screened ones.
std::vector<std::string> tuned_pes(const StudyConfig& c) {
  std::vector<std::string> pes = c.main_pes;
  pes.insert(pes.end(), c.screened_pes.begin(), c.screened_pes.end());
  return pes;
}

// A scheme's grid on seed 1: the kept schemes' lacks the last (new) rate.
std::vector<double> grid(const StudyConfig& c, const std::string& pe) {
  std::vector<double> lrs = c.tune_lrs;
  if (kept(c, pe) && lrs.size() > 1) lrs.pop_back();
  return lrs;
}

std::string tune_run_name(const std::string& pe, double lr, int64_t batch, uint64_t seed) {
  char name[128];
  std::snprintf(name, sizeof name, "tune_%s_lr%s_b%lld", pe.c_str(), tune_lr_label(lr).c_str(),
                (long long)batch);
  return seed > 1 ? std::string(name) + "_s" + std::to_string(seed) : name;
}

// One tuning run: B / tune_divisor training tokens at this rate and batch size.
void add_tune_run(const StudyConfig& c, StudyPlan& p, const std::string& pe, double lr,
                  int64_t batch, uint64_t seed) {
  TrainOptions o = base_options(c, StudyConfig::kStudyCorpus, pe, seed);
  o.adam.lr = lr;
  o.batch = batch;
  const int64_t tokens = budget_steps(c, c.tune_divisor) * c.batch * c.ctx;
  o = with_steps(o, std::max<int64_t>(1, tokens / (batch * c.ctx)));
  const std::string name = tune_run_name(pe, lr, batch, seed);
  p.runs.push_back(run_spec(c, name, StudyConfig::kStudyCorpus, pe, o));
  p.runs.back().t0_only = true;  // scored at T0 only
  p.runs.back().tuning = true;
  p.evals.push_back({name, pe, seed, ScalingKind::none});
}

// The row of a finished tuning run (its loss at T0 and its seconds, train and eval stages) from
// the folder `out` (c.out or the archive's parent); nullopt when it is not there.
std::optional<TuningRow> tuning_row(const StudyConfig& c, const std::string& out,
                                    const RunSpec& r) {
  StudyConfig at = c;
  at.out = out;
  const int64_t T0 = r.train.model.block_size;
  const EvalSpec e{r.name, r.scheme, r.train.seed, ScalingKind::none};
  std::optional<EvalResult> res = read_eval(eval_path(at, e, T0), eval_windows(c, r, T0));
  if (!res) return std::nullopt;
  const std::string dir = at.run_dir(r.name);
  TuningRow row;
  row.pe = r.scheme;
  row.lr = r.train.adam.lr;
  row.batch = r.train.batch;
  row.steps = r.train.steps;
  row.tokens = r.train.steps * r.train.batch * T0;
  row.val_loss = res->loss;
  row.seconds = stage_seconds(dir, "train " + r.name) + stage_seconds(dir, "eval " + r.name);
  row.seed = static_cast<long>(r.train.seed);
  return row;
}

// The rows of the runs of p that are finished here or in the archive.
std::vector<TuningRow> rows_of(const StudyConfig& c, const StudyPlan& p) {
  const std::string archived = archive_dir(c);
  std::vector<TuningRow> rows;
  for (const RunSpec& r : p.runs) {
    std::optional<TuningRow> row = tuning_row(c, c.out, r);
    if (!row && !archived.empty()) row = tuning_row(c, fs::path(archived).parent_path(), r);
    if (row) rows.push_back(*row);
  }
  return rows;
}

// The loss of a scheme at a rate and seed (the first batch size); nullopt when not measured.
std::optional<double> loss_at(const StudyConfig& c, const std::vector<TuningRow>& rows,
                              const std::string& pe, double lr, long seed) {
  for (const TuningRow& t : rows)
    if (t.pe == pe && t.lr == lr && t.seed == seed && t.batch == c.tune_batches.front())
      return t.val_loss;
  return std::nullopt;
}

// The rate of lowest loss on seed 1 over `lrs`; nullopt while one is not measured.
std::optional<double> best_of(const StudyConfig& c, const std::vector<TuningRow>& rows,
                              const std::string& pe, const std::vector<double>& lrs) {
  std::optional<double> best;
  double best_loss = INFINITY;
  for (double lr : lrs) {
    const std::optional<double> l = loss_at(c, rows, pe, lr, 1);
    if (!l) return std::nullopt;
    if (*l < best_loss) best_loss = *l, best = lr;
  }
  return best;
}

// A kept scheme whose choice sits at its grid's top edge: checked at the new rate.
bool needs_edge_check(const StudyConfig& c, const std::string& pe, std::optional<double> choice) {
  return kept(c, pe) && c.tune_lrs.size() > 1 && choice && *choice == grid(c, pe).back();
}

// The seed-1 grid of every scheme (the first part of the tuning).
StudyPlan grid_plan(const StudyConfig& c) {
  StudyPlan p;
  for (const std::string& pe : tuned_pes(c))
    for (double lr : grid(c, pe))
      for (int64_t batch : c.tune_batches) add_tune_run(c, p, pe, lr, batch, 1);
  return p;
}

}  // namespace

std::string tune_lr_label(double lr) {
  char b[32];
  std::snprintf(b, sizeof b, "%g", lr);
  return b;
}

StudyConfig tuning_config(const StudyConfig& config) {
  StudyConfig c = config;
  c.lens = {c.ctx};  // the tuning runs are scored at T0 only
  return c;
}

void tuning_runs(const StudyConfig& config, StudyPlan& p) {
  if (config.tune_lrs.empty()) return;
  const StudyConfig c = tuning_config(config);
  StudyPlan q = grid_plan(c);
  const std::vector<TuningRow> rows = rows_of(c, q);
  const int64_t batch = c.tune_batches.front();
  for (const std::string& pe : c.kept_pes) {
    const std::optional<double> choice = best_of(c, rows, pe, grid(c, pe));
    if (!needs_edge_check(c, pe, choice)) continue;
    for (uint64_t seed : first_seeds(c.tune_edge_seeds)) {
      add_tune_run(c, q, pe, c.tune_lrs.back(), batch, seed);
      if (seed > 1) add_tune_run(c, q, pe, *choice, batch, seed);
    }
  }
  p.runs.insert(p.runs.end(), q.runs.begin(), q.runs.end());
  p.evals.insert(p.evals.end(), q.evals.begin(), q.evals.end());
}

std::vector<TuningRow> tuning_rows(const StudyConfig& config) {
  StudyPlan p;
  tuning_runs(config, p);
  return rows_of(tuning_config(config), p);
}

void choose_learning_rates(StudyConfig& c) {
  c.lr_by_pe.clear(), c.kept_lr_by_pe.clear(), c.lr_pending.clear(), c.lr_undecided.clear();
  if (c.tune_lrs.empty()) return;
  const std::vector<TuningRow> rows = tuning_rows(c);
  for (const std::string& pe : tuned_pes(c)) {
    const std::optional<double> choice = best_of(c, rows, pe, grid(c, pe));
    if (!choice) {
      if (c.tune_first) c.lr_pending.push_back(pe);  // else it trains at c.lr
      continue;
    }
    c.lr_by_pe[pe] = c.kept_lr_by_pe[pe] = *choice;
    if (!needs_edge_check(c, pe, choice)) continue;
    bool wins = true, measured = true;
    for (uint64_t seed : first_seeds(c.tune_edge_seeds)) {
      const long s = static_cast<long>(seed);
      const std::optional<double> at_new = loss_at(c, rows, pe, c.tune_lrs.back(), s);
      const std::optional<double> at_choice = loss_at(c, rows, pe, *choice, s);
      if (!at_new || !at_choice) measured = false;
      if (at_new && at_choice && !(*at_new < *at_choice)) wins = false;
    }
    if (!measured)
      c.lr_undecided.push_back(pe);
    else if (wins)
      c.lr_by_pe[pe] = c.tune_lrs.back();
  }
}

void tune_study(const StudyConfig& config) {
  const StudyConfig c = tuning_config(config);
  for (int pass = 0; pass < 2; ++pass) {  // the grid, then the edge checks it calls for
    StudyPlan p;
    tuning_runs(config, p);
    import_archived_runs(c, p);
    prepare_study_data(c, p);
    const std::vector<const RunSpec*> pending = pending_runs(c, p);
    std::fprintf(stderr, "tuning: %zu of %zu short runs to make (B/%lld)\n", pending.size(),
                 p.runs.size(), (long long)c.tune_divisor);
    run_in_process(c, p, pending);
  }
  const std::vector<TuningRow> rows = tuning_rows(config);
  for (const TuningRow& t : rows)
    std::printf("%-12s lr %-8g batch %-4ld seed %ld %6ld steps  val loss %.4f  %.0f s\n",
                t.pe.c_str(), t.lr, t.batch, t.seed, t.steps, t.val_loss, t.seconds);
  write_rows(c.out + "/tuning.csv", rows);
  StudyConfig chosen = config;
  choose_learning_rates(chosen);
  for (const auto& [pe, lr] : chosen.lr_by_pe) std::printf("choice: %s lr %g\n", pe.c_str(), lr);
}

}  // namespace poslab
