// collect.cpp — the study's tables from the run and corpus folders. See collect.h.
#include "study/collect.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <stdexcept>

#include "data/atomic_file.h"
#include "data/corpus.h"
#include "data/json.h"
#include "study/ngram.h"
#include "study/runner.h"
#include "study/schedule.h"
#include "study/tables.h"
#include "study/timing.h"
#include "study/tune.h"
#include "tensor/check.h"
#include "train/attend.h"
#include "train/checkpoint.h"
#include "train/log.h"

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

// A cached evaluation of run r (runner.h), which must be there.
EvalResult need_eval(const StudyConfig& c, const RunSpec& r, const EvalSpec& e, int64_t L) {
  const std::string path = need(c, r, eval_path(c, e, L));
  std::optional<EvalResult> res = read_eval(path, eval_windows(c, r, L));
  if (!res)
    fail("collect: ", path, " is unreadable or made with other settings; redo it with `",
         job_command_line(c, r), "`");
  res->len = L;
  return *res;
}

// Another cached evaluation file of run r at length L (the 32-token window), which must be there.
EvalResult need_eval_file(const StudyConfig& c, const RunSpec& r, const std::string& file,
                          int64_t L) {
  std::optional<EvalResult> res = read_eval(need(c, r, file), eval_windows(c, r, L));
  if (!res) fail("collect: ", file, " is unreadable or made with other settings");
  return *res;
}

// The val loss of the trainer's log at 80% of the steps (the last row at or before that step)
// minus at the end: last20_gain of the runs that keep no model (masked LM, tasks).
double log_last20_gain(const std::vector<LogRow>& log, int64_t steps) {
  const LogRow* at = nullptr;
  for (const LogRow& row : log)
    if (row.step <= last20_step(steps)) at = &row;
  return at && at != &log.back() ? at->val_loss - log.back().val_loss : NAN;
}

// val_loss and last20_gain of runs.csv (tables.h). Next-token runs: both from the evaluations
// at T0 over the same val windows (the final model, the one kept at 80% of the steps). Masked
// LMs: val_loss is the loss on fixed masks (mlm.csv). Masked LMs, task runs and cooldown
// branches (which keep no model: their state at 80% is the main run's): last20_gain from the val
// losses of the trainer's log; task runs: val_loss too.
void fill_losses(const StudyConfig& c, const StudyPlan& p, const RunSpec& r,
                 const std::vector<LogRow>& log, RunRow& row) {
  row.val_loss = log.empty() ? NAN : log.back().val_loss;
  row.last20_gain = log_last20_gain(log, r.train.steps);
  const std::string dir = c.run_dir(r.name);
  if (r.mlm_check) row.val_loss = read_rows<MlmRow>(need(c, r, dir + "/mlm.csv")).at(0).val_loss;
  const int64_t T0 = r.train.model.block_size;
  for (const EvalSpec& e : p.evals)
    if (e.run == r.name && e.scaling == ScalingKind::none) {
      row.val_loss = need_eval(c, r, e, T0).loss;
      const std::string kept = last20_eval_path(c, r);
      if (!kept.empty())  // the kept model at T0 over the same windows, else the log's
        row.last20_gain =
            fs::exists(kept)
                ? json_parse(read_file(kept), kept).find("loss")->as_number() - row.val_loss
                : NAN;
    }
}

// runs.csv, and curves/<run>.csv: a copy of each run's log.
void collect_runs(const StudyConfig& c, const StudyPlan& p) {
  std::vector<RunRow> rows;
  std::error_code ec;
  for (const RunSpec& r : p.runs) {
    rows.push_back(run_row(c, p, r));
    fs::copy_file(c.run_dir(r.name) + "/log.csv", c.out + "/curves/" + r.name + ".csv",
                  fs::copy_options::overwrite_existing, ec);
  }
  write_rows(c.out + "/runs.csv", rows);
}

// The loss on positions [a, b) from an evaluation's buckets: the size-weighted mean of the
// buckets inside [a, b), NaN unless they cover it exactly (a window shorter than b, or buckets
// that straddle a or b).
double range_loss(const EvalResult& res, int64_t a, int64_t b) {
  double sum = 0;
  int64_t covered = 0;
  for (const EvalBucket& k : res.buckets)
    if (k.start >= a && k.end <= b) sum += k.loss * (k.end - k.start), covered += k.end - k.start;
  return covered == b - a && covered > 0 ? sum / covered : NAN;
}

// extrapolation.csv and position_loss.csv: every evaluation of the plan at every length; the
// unseen columns from the position buckets: [T0, 4T0) and [8T0, 16T0).
// rope_scaling is empty for the schemes that have none, "none" for unscaled RoPE.
void collect_evals(const StudyConfig& c, const StudyPlan& p) {
  std::vector<EvalRow> extra;
  std::vector<PositionRow> positions;
  for (const EvalSpec& e : p.evals) {
    const RunSpec& r = p.run(e.run);
    const std::string sc = study_scheme(e.pe).pe == PeKind::rope ? scaling_label(e) : "";
    const long seed = static_cast<long>(e.seed);
    for (int64_t L : c.lens) {
      if (!evaluates_at(r, L)) continue;
      const EvalResult res = need_eval(c, r, e, L);
      const int64_t T0 = c.ctx;  // the study's training length (a fine-tune's trains longer)
      extra.push_back({e.run, e.pe, seed, r.corpus, L, sc, res.loss, res.sliding_loss, res.windows,
                       range_loss(res, T0, 4 * T0), range_loss(res, 8 * T0, 16 * T0)});
      extra.back().loss_se = res.loss_se;
      if (const std::string w = window_eval_path(c, r);
          !w.empty() && L == r.train.model.block_size && e.scaling == ScalingKind::none)
        extra.back().loss_window32 = need_eval_file(c, r, w, L).loss;
      for (const EvalBucket& b : res.buckets)
        positions.push_back(
            {e.run, e.pe, seed, r.corpus, L, sc, b.start, b.end, b.loss, b.sliding_loss});
    }
  }
  write_rows(c.out + "/extrapolation.csv", extra);
  write_rows(c.out + "/position_loss.csv", positions);
}

// mlm.csv, tasks.csv and passkey_distance.csv: the rows each run wrote, in the order of the plan.
void collect_scores(const StudyConfig& c, const StudyPlan& p) {
  std::vector<MlmRow> mlm;
  std::vector<TaskRow> tasks;
  std::vector<PasskeyDistanceRow> distances;
  for (const RunSpec& r : p.runs) {
    const std::string dir = c.run_dir(r.name);
    if (r.mlm_check)
      for (const MlmRow& m : read_rows<MlmRow>(need(c, r, dir + "/mlm.csv"))) mlm.push_back(m);
    if (r.task)
      for (const TaskRow& t : read_rows<TaskRow>(need(c, r, dir + "/tasks.csv")))
        tasks.push_back(t);
    if (r.task && r.task->name == "passkey")
      for (const PasskeyDistanceRow& t :
           read_rows<PasskeyDistanceRow>(need(c, r, dir + "/passkey_distance.csv")))
        distances.push_back(t);
  }
  write_rows(c.out + "/mlm.csv", mlm);
  write_rows(c.out + "/tasks.csv", tasks);
  write_rows(c.out + "/passkey_distance.csv", distances);
}

// retrained.csv: every run whose model was made again here (runner.h: retrain.json).
void collect_retrained(const StudyConfig& c, const StudyPlan& p) {
  std::vector<RetrainedRow> rows;
  for (const RunSpec& r : p.runs) {
    const std::string path = c.run_dir(r.name) + "/retrain.json";
    if (!fs::exists(path)) continue;
    const Json j = json_parse(read_file(path), path);
    const double diff = j.find("max_log_difference")->as_number();
    rows.push_back({r.name, j.find("same_log")->as_bool() ? 1L : 0L, diff < 0 ? NAN : diff});
  }
  write_rows(c.out + "/retrained.csv", rows);
}

// attribution.csv, copy.csv and rope_pairs.csv: the probes of every main run (probes.h).
void collect_probes(const StudyConfig& c, const StudyPlan& p) {
  std::vector<AttributionRow> attribution;
  std::vector<CopyCsvRow> copy;
  std::vector<RopePairRow> pairs;
  auto append = [](auto& all, const auto& rows) {
    all.insert(all.end(), rows.begin(), rows.end());
  };
  for (const RunSpec& r : p.runs) {
    if (!r.probes) continue;
    const std::string dir = c.run_dir(r.name);
    append(attribution, read_rows<AttributionRow>(need(c, r, dir + "/attribution.csv")));
    append(copy, read_rows<CopyCsvRow>(need(c, r, dir + "/copy.csv")));
    if (r.scheme == "rope")
      append(pairs, read_rows<RopePairRow>(need(c, r, dir + "/rope_pairs.csv")));
  }
  write_rows(c.out + "/attribution.csv", attribution);
  write_rows(c.out + "/copy.csv", copy);
  write_rows(c.out + "/rope_pairs.csv", pairs);
}

// ngram.csv: the add-k n-gram reference lines of the study's corpus, fitted once and cached in
// its folder (data/<corpus>/ngram.csv), the fit's time there as "ngram <corpus>". Returns the
// seconds spent fitting now.
double collect_ngrams(const StudyConfig& c, const StudyPlan& p) {
  std::vector<NgramRow> rows;
  double fitting = 0;
  for (const std::string& corpus : p.corpora()) {
    if (corpus != StudyConfig::kStudyCorpus) continue;
    const std::string dir = c.corpus_dir(corpus), cache = dir + "/ngram.csv";
    if (c.force || !fs::exists(cache)) {
      auto t0 = std::chrono::steady_clock::now();
      write_rows(cache, ngram_rows(corpus, dir));
      record_stage(dir, "ngram " + corpus, seconds_since(t0), true);
      fitting += seconds_since(t0);
    }
    for (const NgramRow& n : read_rows<NgramRow>(cache)) rows.push_back(n);
  }
  write_rows(c.out + "/ngram.csv", rows);
  return fitting;
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

// One row per weight of every layer and head (key <= query when causal), as `poslab attend`
// computes them.
void append_attention(const AttentionMaps& m, const std::string& pe, const std::string& run,
                      std::vector<AttentionRow>& rows) {
  for (int64_t l = 0; l < m.layers; ++l)
    for (int64_t h = 0; h < m.heads; ++h)
      for (int64_t i = 0; i < m.size(); ++i)
        for (int64_t j = 0; j < (m.causal ? i + 1 : m.size()); ++j)
          rows.push_back({pe, run, l, h, i, j, m.at(l, h, i, j)});
}

// corpus.csv: the study corpus's corpus.json (data/corpus_info.h), one row.
void collect_corpus(const StudyConfig& c) {
  const std::string path = c.data() + "/corpus.json";
  if (!fs::exists(path)) return write_rows<CorpusRow>(c.out + "/corpus.csv", {});
  const Json j = json_parse(read_file(path), path);
  auto count = [&](const char* key) {
    const Json* v = j.find(key);
    return v ? static_cast<long>(v->as_number()) : 0L;
  };
  auto text = [&](const char* key) {  // a CSV cell holds no comma (data/csv.h)
    const Json* v = j.find(key);
    std::string t = v ? v->as_string() : std::string();
    std::replace(t.begin(), t.end(), ',', ';');
    return t;
  };
  write_rows<CorpusRow>(
      c.out + "/corpus.csv",
      {{text("corpus"), text("source"), count("files"), count("bytes"), text("sha256"),
        count("train_files"), count("val_files"), count("val_file_bytes")}});
}

// attention_distance.csv rows of one model: every layer and head at T0 and 4 T0, over the
// first c.attention_windows val windows of each length that the val split holds.
void append_distances(const StudyConfig& c, const GPT& model, const std::vector<uint16_t>& val,
                      const std::string& pe, const std::string& run,
                      std::vector<AttentionDistanceRow>& rows) {
  for (const int64_t L : {c.ctx, 4 * c.ctx}) {
    const int64_t windows = std::min<int64_t>(c.attention_windows, int64_t(val.size()) / L);
    if (windows == 0) continue;
    const int64_t first = static_cast<int64_t>(rows.size());
    for (int64_t w = 0; w < windows; ++w) {
      const Ids ids{std::vector<int32_t>(val.begin() + w * L, val.begin() + (w + 1) * L), {1, L}};
      const std::vector<Tensor> maps = model.attention_maps(ids, c.layers - 1);
      for (int64_t l = 0; l < c.layers; ++l) {
        const std::vector<double> d = mean_attention_distance(maps[l]);
        for (int64_t h = 0; h < static_cast<int64_t>(d.size()); ++h) {
          if (w == 0)
            rows.push_back({pe, run, static_cast<long>(L), static_cast<long>(l),
                            static_cast<long>(h), static_cast<long>(windows), 0, (L - 1) / 4.0});
          rows[first + l * d.size() + h].distance += d[h] / windows;
        }
      }
    }
  }
}

// attention.csv (the first attention_len val tokens of the study corpus), attention_distance.csv
// and loc.csv (the lines of code and parameters of each scheme), all from the main model of seed
// 1 of each scheme.
void collect_models(const StudyConfig& c, const StudyPlan& p) {
  std::vector<std::string> vocab = load_vocab(c.data() + "/vocab.json");
  std::vector<uint16_t> val = load_tokens(c.data() + "/val.bin", vocab.size());
  const std::vector<int32_t> window(val.begin(), val.begin() + c.attention_len);
  std::vector<AttentionRow> attention;
  std::vector<AttentionDistanceRow> distances;
  std::vector<LocRow> loc;
  long rope_params = 0;
  for (const std::string& pe : p.pes) {
    auto it = std::find_if(p.runs.begin(), p.runs.end(),
                           [&](const RunSpec& x) { return x.name == main_run_name(pe, 1); });
    if (it == p.runs.end()) continue;  // not done: cut by the time limit
    const RunSpec& r = *it;
    Checkpoint ck = load_checkpoint(need(c, r, c.run_dir(r.name) + "/model.safetensors"), c.device);
    append_attention(attention_maps(*ck.model, window, vocab, ""), pe, r.name, attention);
    append_distances(c, *ck.model, val, pe, r.name, distances);
    long params = ck.model->num_parameters();
    loc.push_back(loc_row(pe, pe_name(study_scheme(pe).pe), params));
    if (pe == "rope") rope_params = params;
  }
  if (rope_params) loc.push_back(loc_row("rope_scaling", "rope_scaling", rope_params));
  write_rows(c.out + "/attention.csv", attention);
  write_rows(c.out + "/attention_distance.csv", distances);
  write_rows(c.out + "/loc.csv", loc);
}

// timing.csv: the stage times of every corpus and run folder (the tuning runs' as "tune <stage>"),
// then this gathering ("report":
// the tables, attention and lines of code; the n-gram fits are their own stages; writing
// REPORT.md afterwards, well under a second, is not counted).
void collect_timing(const StudyConfig& c, const StudyPlan& p, double report_seconds) {
  std::vector<TimingRow> rows;
  for (const std::string& corpus : p.corpora())
    for (const TimingRow& t : read_stages(c.corpus_dir(corpus))) rows.push_back(t);
  for (const RunSpec& r : p.runs)
    for (const TimingRow& t : read_stages(c.run_dir(r.name)))
      rows.push_back({(r.tuning ? "tune " : "") + t.stage, t.seconds});
  rows.push_back({"report", report_seconds});
  write_rows(c.out + "/timing.csv", rows);
}

}  // namespace

RunRow run_row(const StudyConfig& c, const StudyPlan& p, const RunSpec& r) {
  const std::string dir = c.run_dir(r.name);
  std::vector<LogRow> log = read_log(need(c, r, dir + "/log.csv"));
  RunRow row;
  row.run = r.name;
  row.pe = r.scheme;
  row.seed = static_cast<long>(r.train.seed);
  row.objective = objective_name(r.train.objective);
  row.corpus = r.corpus;
  row.embedding = embedding_name(r.train.model.embedding);
  row.lr = r.train.adam.lr;
  // a screened run's constant phase pauses where its B/4 branch starts
  row.steps = r.train.stop_after > 0 ? r.train.stop_after : r.train.steps;
  row.tokens = row.steps * r.train.batch * r.train.model.block_size;
  row.train_seconds = stage_seconds(dir, "train " + r.name);
  row.schedule = schedule_name(r.train.schedule);
  row.branch_of = r.start_step > 0 ? r.after : "";
  row.machine = done_field(c, r, "machine");
  std::replace(row.machine.begin(), row.machine.end(), ',', ';');  // a CSV cell holds no comma
  row.invocation = done_field(c, r, "invocation");
  fill_losses(c, p, r, log, row);
  return row;
}

// The plan without the runs that are not done (a --time-limit left them for later) and, with
// `tuning` false, without the tuning runs (tuning.csv's): the report is made of what is there,
// and its "what was cut" lists the rest.
static StudyPlan done_part(const StudyConfig& config, const StudyPlan& p, bool tuning) {
  StudyConfig c = config;
  c.force = false;
  StudyPlan done = p;
  done.runs.clear();
  done.evals.clear();
  std::string left;
  for (const RunSpec& r : p.runs) {
    if (r.tuning && !tuning) continue;
    if (run_done(c, p, r))
      done.runs.push_back(r);
    else
      left += (left.empty() ? "" : ", ") + r.name;
  }
  for (const EvalSpec& e : p.evals)
    for (const RunSpec& r : done.runs)
      if (r.name == e.run) done.evals.push_back(e);
  if (!left.empty() && !tuning)
    std::fprintf(stderr, "collect: not done, so not in the tables (the report lists them): %s\n",
                 left.c_str());
  return done;
}

void collect_results(const StudyConfig& c, const StudyPlan& plan) {
  auto t0 = std::chrono::steady_clock::now();
  const StudyPlan p = done_part(c, plan, false);
  std::error_code ec;
  fs::create_directories(c.out + "/curves", ec);
  collect_runs(c, p);
  collect_evals(c, p);
  collect_scores(c, p);
  collect_probes(c, p);
  collect_retrained(c, p);
  const double fitting = collect_ngrams(c, p);
  collect_models(c, p);
  collect_corpus(c);
  write_rows(c.out + "/tuning.csv", tuning_rows(c));
  collect_timing(c, done_part(c, plan, true), seconds_since(t0) - fitting);
}

std::vector<double> mean_attention_distance(const Tensor& p) {
  if (p.dim() != 4 || p.size(0) != 1 || p.size(2) != p.size(3))
    throw std::invalid_argument("mean_attention_distance: expected (1,H,T,T), but got " +
                                shape_str(p.shape()));
  const int64_t H = p.size(1), T = p.size(2);
  const std::vector<double> v = p.to_vector();
  std::vector<double> out(H, 0.0);
  for (int64_t h = 0; h < H; ++h) {
    double sum = 0;
    for (int64_t i = 0; i < T; ++i)
      for (int64_t j = 0; j <= i; ++j) sum += v[(h * T + i) * T + j] * double(i - j);
    out[h] = sum / T;
  }
  return out;
}

}  // namespace poslab
