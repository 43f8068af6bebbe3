// collect.cpp — the study's tables from the run folders. See collect.h.
#include "train/study/collect.h"

#include <cmath>
#include <filesystem>
#include <fstream>

#include "data/atomic_file.h"
#include "data/corpus.h"
#include "train/checkpoint.h"
#include "train/log.h"
#include "train/study/runner.h"
#include "train/study/schedule.h"
#include "train/study/tables.h"

#ifndef POSLAB_SOURCE_DIR
#define POSLAB_SOURCE_DIR "."
#endif

namespace poslab {
namespace fs = std::filesystem;

namespace {

// `path`, which run `r` makes; a missing one names the command that makes it.
std::string need(const StudyConfig& c, const RunSpec& r, const std::string& path) {
  if (!fs::exists(path))
    fail("collect: ", path, " is missing: run ", r.name, " is not done; make it with `",
         job_command_line(c, r), "` (or run the study without --report)");
  return path;
}

// runs.csv: the options of each run, the last row of its log, its training time, its size.
RunRow run_row(const StudyConfig& c, const RunSpec& r) {
  const std::string dir = c.run_dir(r.name);
  std::vector<LogRow> log = read_log(need(c, r, dir + "/log.csv"));
  Checkpoint ck = load_checkpoint(need(c, r, dir + "/model.safetensors"));
  RunRow row;
  row.run = r.name;
  row.pe = pe_name(r.train.model.pe);
  row.seed = static_cast<long>(r.train.seed);
  row.steps = r.train.steps;
  row.theta = r.train.model.rope_theta;
  row.causal = r.train.model.causal ? "true" : "false";
  row.objective = r.train.objective;
  row.params = ck.model->num_parameters();
  row.train_loss = log.empty() ? NAN : log.back().train_loss;
  row.val_loss = log.empty() ? NAN : log.back().val_loss;
  row.tokens_per_s = log.empty() ? NAN : log.back().tokens_per_s;
  const std::string secs = dir + "/train_seconds.txt";
  row.train_seconds = fs::exists(secs) ? std::stod(read_file(secs)) : NAN;
  return row;
}

void collect_runs(const StudyConfig& c, const StudyPlan& p) {
  std::vector<RunRow> rows;
  std::error_code ec;
  for (const RunSpec& r : p.runs) {
    rows.push_back(run_row(c, r));
    fs::copy_file(c.run_dir(r.name) + "/log.csv", c.out + "/curves/" + r.name + ".csv",
                  fs::copy_options::overwrite_existing, ec);
  }
  write_rows(c.out + "/runs.csv", rows);
}

double last_quarter(const EvalResult& r) {  // mean loss over buckets covering the last 25%
  double acc = 0;
  int64_t n = 0;
  for (const auto& b : r.buckets)
    if (b.start >= r.len * 3 / 4) acc += b.loss * (b.end - b.start), n += b.end - b.start;
  return n ? acc / n : NAN;
}

void collect_evals(const StudyConfig& c, const StudyPlan& p) {
  std::vector<EvalRow> extra;
  std::vector<PositionRow> positions;
  for (const EvalSpec& e : p.evals)
    for (int64_t L : c.lens) {
      if (!evaluates_at(p.run(e.run), L)) continue;
      const std::string path = need(c, p.run(e.run), eval_path(c, e, L));
      std::optional<EvalResult> r = read_eval(path, eval_windows(c, L));
      if (!r)
        fail("collect: ", path, " is unreadable or made with other settings; redo it with `",
             "poslab experiments --out ", c.out, " --job ", e.run, "`");
      r->len = L;
      const double lq = last_quarter(*r);
      const std::string sc = scaling_name(e.scaling);
      extra.push_back({e.run, e.pe, sc, static_cast<long>(e.seed), L, r->tokens, r->windows,
                       r->loss, r->ppl, lq, std::exp(lq)});
      for (const auto& b : r->buckets)
        positions.push_back({e.run, e.pe, sc, L, b.start, b.end, b.loss});
    }
  write_rows(c.out + "/extrapolation.csv", extra);
  write_rows(c.out + "/position_loss.csv", positions);
}

// mlm.csv and tasks.csv: the rows each run wrote, in the order of the plan.
void collect_scores(const StudyConfig& c, const StudyPlan& p) {
  std::vector<MlmRow> mlm;
  std::vector<TaskRow> tasks;
  for (const RunSpec& r : p.runs) {
    const std::string dir = c.run_dir(r.name);
    if (r.mlm_check)
      for (const MlmRow& m : read_rows<MlmRow>(need(c, r, dir + "/mlm.csv"))) mlm.push_back(m);
    if (r.task)
      for (const TaskRow& t : read_rows<TaskRow>(need(c, r, dir + "/tasks.csv")))
        tasks.push_back(t);
  }
  write_rows(c.out + "/mlm.csv", mlm);
  write_rows(c.out + "/tasks.csv", tasks);
}

int64_t count_lines(const std::string& rel) {
  std::ifstream in(std::string(POSLAB_SOURCE_DIR) + "/" + rel);
  if (!in) in.open(rel);  // a binary built elsewhere, run from a checkout's root
  if (!in) return 0;
  int64_t n = 0;
  std::string line;
  while (std::getline(in, line)) ++n;
  return n;
}

bool source_exists(const std::string& rel) {
  return fs::exists(std::string(POSLAB_SOURCE_DIR) + "/" + rel) || fs::exists(rel);
}

// A scheme's source files under posenc/: <pe>.h and, where there is one, <pe>.cpp.
LocRow loc_row(const std::string& pe, const std::string& stem, long params) {
  std::string files = "posenc/" + stem + ".h";
  int64_t lines = count_lines(files);
  if (source_exists("posenc/" + stem + ".cpp")) {
    files += "+posenc/" + stem + ".cpp";
    lines += count_lines("posenc/" + stem + ".cpp");
  }
  return {pe, files, lines, params};
}

// Layer-0 attention, mean over heads, on the first 64 val tokens; and the lines of code and
// parameters of each scheme. Both use the main run of the first seed of each scheme.
void collect_models(const StudyConfig& c, const StudyPlan& p) {
  std::vector<std::string> vocab = load_vocab(c.data() + "/vocab.json");
  std::vector<uint16_t> val = load_tokens(c.data() + "/val.bin", vocab.size());
  Ids first{std::vector<int32_t>(val.begin(), val.begin() + 64), {1, 64}};
  std::vector<LocRow> loc;
  long rope_params = 0;
  for (const std::string& pe : p.pes) {
    const std::string run = main_run_name(pe, c.seeds.front());
    Checkpoint ck = load_checkpoint(c.run_dir(run) + "/model.safetensors", c.device);
    Tensor P = ck.model->attention_map(first, 0);  // (1,H,64,64)
    std::vector<double> v = P.to_vector();
    int64_t H = P.size(1);
    std::string m;
    for (int64_t i = 0; i < 64; ++i) {
      for (int64_t j = 0; j < 64; ++j) {
        double acc = 0;
        for (int64_t h = 0; h < H; ++h) acc += v[(h * 64 + i) * 64 + j];
        m += (j ? "," : "") + csv_number(acc / H);
      }
      m += "\n";
    }
    write_file_atomic(c.out + "/attention_" + pe + ".csv", m);
    long params = ck.model->num_parameters();
    loc.push_back(loc_row(pe, pe, params));
    if (pe == "rope") rope_params = params;
  }
  if (rope_params) loc.push_back(loc_row("rope_scaling", "rope_scaling", rope_params));
  write_rows(c.out + "/loc.csv", loc);
}

}  // namespace

void collect_results(const StudyConfig& c, const StudyPlan& p) {
  std::error_code ec;
  fs::create_directories(c.out + "/curves", ec);
  collect_runs(c, p);
  collect_evals(c, p);
  collect_scores(c, p);
  collect_models(c, p);
}

}  // namespace poslab
