// report.cpp — write_report: REPORT.md, section by section, from the study's CSVs. This file
// holds the setup, what was cut and the raw data; the other sections are in the report_*.cpp
// files (report_sections.h).
#include "study/report.h"

#include <cmath>
#include <filesystem>
#include <map>
#include <set>
#include <tuple>

#include "data/atomic_file.h"
#include "study/report_markdown.h"
#include "study/report_sections.h"

namespace poslab {
namespace report_detail {
namespace {

std::string seed_list(const std::set<long>& v) {
  std::vector<std::string> t;
  for (const long x : v) t.push_back(std::to_string(x));
  return t.empty() ? std::string("n/a") : join(t);
}

double sum_timing(const Study& s) {
  double t = 0;
  if (s.timing) {
    for (const auto& r : *s.timing) {
      if (std::isfinite(r.seconds)) t += r.seconds;
    }
  }
  return t;
}

// The corpus the runs were trained on (corpus.csv): files, bytes, SHA-256, source packages.
std::string corpus_text(const Study& s) {
  if (!s.corpus || s.corpus->empty()) return "not recorded (no corpus.csv)";
  const CorpusRow& c = s.corpus->front();
  return c.corpus + ": " + fmt_count(c.files) + " files, " + fmt_count(c.bytes) +
         " bytes prepared, SHA-256 `" + c.sha256 + "`, from " + c.source +
         "; val: " + fmt_count(c.val_files) + " whole files, " + fmt_count(c.val_bytes) +
         " bytes as installed";
}

// The machines and invocations runs.csv records, with how many runs each made.
std::string made_text(const Study& s, std::string RunRow::*field) {
  std::map<std::string, long> n;
  for (const auto& r : s.runs ? *s.runs : std::vector<RunRow>{})
    ++n[(r.*field).empty() ? "not recorded" : r.*field];
  std::vector<std::string> t;
  for (const auto& [what, count] : n) t.push_back(what + " (" + std::to_string(count) + " runs)");
  return t.empty() ? "n/a" : std::to_string(n.size()) + ": " + join(t);
}

// Val windows per evaluation length and the standard error of a main run's loss there (the
// largest over main runs; extrapolation.csv loss_se).
std::string windows_text(const Study& s) {
  std::map<long, std::pair<long, double>> by_len;
  for (const auto& e : s.eval ? *s.eval : std::vector<EvalRow>{}) {
    if (e.run != kMain.name(e.pe, e.seed) || !(e.rope_scaling.empty() || e.rope_scaling == "none"))
      continue;
    auto& [windows, se] = by_len.try_emplace(e.len, 0, NAN).first->second;
    windows = e.windows;
    if (std::isfinite(e.loss_se)) se = std::isnan(se) ? e.loss_se : std::max(se, e.loss_se);
  }
  std::vector<std::string> t;
  for (const auto& [L, w] : by_len)
    t.push_back(std::to_string(L) + ": " + fmt_count(w.first) + " (SE ≤ " + fmt(w.second, 2) + ")");
  return t.empty() ? "n/a" : join(t);
}

void setup_section(Markdown& md, const Study& s, const ReportInfo& info) {
  md.heading("Setup");
  md.para(
      "Same corpus, network, data order and seeds; only the positional encoding (PE) "
      "changes. Every number in this report is read from the CSV files in this folder (listed "
      "at the end); nothing is typed in by hand.");
  std::set<long> steps, seeds;
  for (const auto& pe : s.pes) {
    for (const RunRow* r : group_runs(s, kMain, pe)) steps.insert(r->steps);
    for (const long seed : group_seeds(s, kMain, pe)) seeds.insert(seed);
  }
  std::vector<std::string> lens;
  for (const long L : s.lengths) lens.push_back(std::to_string(L));
  md.table("How this study was run.", {"setting", "value"},
           {{"date", info.date},
            {"machine", info.machine},
            {"command", "`" + info.command + "`"},
            {"corpus", corpus_text(s)},
            {"machines that made the runs", made_text(s, &RunRow::machine)},
            {"invocations (start, UTC) that made the runs", made_text(s, &RunRow::invocation)},
            {"wall time of the invocation that wrote this report",
             duration(info.total_seconds) + " (finished runs and evaluations are reused)"},
            {"compute time of the study (sum of timing.csv)",
             s.timing ? duration(sum_timing(s)) : "not recorded (no timing.csv)"},
            {"mode",
             info.quick ? "quick (a reduced study; skipped parts say \"not run\")" : "full study"},
            {"schemes (main runs)", s.pes.empty() ? "none found" : join(s.pes)},
            {"training steps per main run", seed_list(steps)},
            {"seeds of the main runs", seed_list(seeds)},
            {"training length T0 (= shortest eval length)",
             s.train_len() ? std::to_string(s.train_len()) : "n/a"},
            {"evaluation lengths", lens.empty() ? "not run" : join(lens)},
            {"val windows per length, every main run (the largest standard error of a main "
             "run's loss over its windows, nats)",
             windows_text(s)},
            {"runs in runs.csv", s.runs ? std::to_string(s.runs->size()) : "0"}});
  md.para(
      "The schemes: **none** (NoPE) adds nothing; **learned** adds a trained vector per "
      "position to the token embedding; **sinusoidal** adds fixed sin/cos vectors; **rope** "
      "rotates each pair of query/key dimensions by an angle proportional to the position; "
      "**alibi** subtracts a fixed per-head slope times the distance from each attention "
      "score; **t5** adds a learned bias per head and bucket of relative distance; **kerple** "
      "subtracts a learned per-head log of the distance; **fire** adds a learned function of "
      "the distance normalised by the query's position; **xpos** is rope with a per-pair decay "
      "over the distance; **prope** is rope with 7 of its 16 pairs turning (**prope25**: a "
      "quarter), "
      "the others carrying no position; **rope_rand** (learned_rand) trains rope (a learned "
      "table) on sorted positions drawn at random up to 16 T0, and is read with such a draw at "
      "every length (seed 0), so it takes no RoPE scaling, pair surgery or position offset: its "
      "cells there are empty; **rope_nope4** leaves the last of every 4 layers without rope. "
      "Weight decay (AdamW, 0.1) acts on the Linear layers' weight matrices only: no positional "
      "scheme's parameters get it (T5's table in every run, KERPLE's, FIRE's MLP), nor the "
      "embeddings. Perplexity (ppl) = exp(mean cross-entropy per token in nats); lower is "
      "better.");
  md.para(
      "**How the numbers are summarised.** A number over seeds is the mean of the *losses* "
      "(nats); a perplexity is exp of that mean. With 3 or more seeds it carries its 95% "
      "Student t interval, mean ± t(n−1)·s/√n (s the standard deviation over the n seeds), "
      "exponentiated for a perplexity, whose lower end is clamped at 1 and then printed 1*. "
      "With 2 seeds the two seeds' values are printed, not an interval; with 1 seed the value "
      "and \"(1 seed)\". Task accuracies carry the Wilson 95% interval of their n examples.");
}

void raw_section(Markdown& md, const Study& s) {
  md.heading("Raw data");
  namespace fs = std::filesystem;
  std::string list;
  for (const char* f :
       {"runs.csv", "extrapolation.csv", "position_loss.csv", "attribution.csv", "copy.csv",
        "rope_pairs.csv", "mlm.csv", "tasks.csv", "ngram.csv", "timing.csv", "attention.csv",
        "attention_distance.csv", "tuning.csv", "loc.csv", "corpus.csv", "throughput.csv",
        "screening.csv", "passkey_distance.csv", "retrained.csv"}) {
    list += fs::exists(s.dir + "/" + f) ? std::string("- [") + f + "](" + f + ")\n"
                                        : std::string("- ") + f + ": not produced\n";
  }
  list += "- curves/<run>.csv: the training log of each run (" + std::to_string(s.curves.size()) +
          " files)\n";
  md.para(
      "The numbers behind every table and figure, as written by the experiment runner "
      "(columns in study/tables.h and train/log.h):\n\n" +
      list);
}

}  // namespace

namespace {

// Rows of the plan's part: (part, file, rows found).
long count_runs(const Study& s, const std::string& prefix, const std::string& suffix_start) {
  long n = 0;
  for (const auto& r : s.runs ? *s.runs : std::vector<RunRow>{}) {
    const bool pre = r.run.rfind(prefix, 0) == 0;
    const size_t at = r.run.find(suffix_start, prefix.size());
    if (pre && (suffix_start.empty() || at != std::string::npos)) ++n;
  }
  return n;
}

template <class Row>
long count_rows(const std::optional<std::vector<Row>>& rows) {
  return rows ? static_cast<long>(rows->size()) : 0;
}

long count_tasks(const Study& s, const std::string& task) {
  long n = 0;
  for (const auto& t : s.tasks ? *s.tasks : std::vector<TaskRow>{}) n += t.task == task;
  return n;
}

long count_scaling(const Study& s) {
  long n = 0;
  for (const auto& e : s.eval ? *s.eval : std::vector<EvalRow>{}) {
    n += !e.rope_scaling.empty() && e.rope_scaling != "none";
  }
  return n;
}

// The parts of the plan, in the order a time limit leaves them for a later invocation, with
// the rows the results folder holds for each; 0 rows = not in the results (not run yet).
void cut_section(Markdown& md, const Study& s) {
  md.heading("Parts of the plan: what is done");
  long main = 0;
  for (const auto& pe : s.pes) main += group_runs(s, kMain, pe).size();
  const std::vector<std::tuple<std::string, std::string, long>> parts = {
      {"main runs <pe>_s<seed>", "runs.csv", main},
      {"budget curve (branches) <pe>_b4_s<seed>, <pe>_b2_s<seed>", "runs.csv",
       count_runs(s, "", "_b4_s") + count_runs(s, "", "_b2_s")},
      {"attribution", "attribution.csv", count_rows(s.attribution)},
      {"copy at a distance", "copy.csv", count_rows(s.copy)},
      {"RoPE pairs", "rope_pairs.csv", count_rows(s.rope_pairs)},
      {"RoPE scaling (linear, ntk, dynamic, yarn, llama3, yarn untruncated)", "extrapolation.csv",
       count_scaling(s)},
      {"screened schemes <pe>_screen_s<seed>", "runs.csv", count_runs(s, "", "_screen_s")},
      {"screening decisions", "screening.csv", count_rows(s.screening)},
      {"task unscramble", "tasks.csv", count_tasks(s, "unscramble")},
      {"task reverse", "tasks.csv", count_tasks(s, "reverse")},
      {"task passkey", "tasks.csv", count_tasks(s, "passkey")},
      {"passkey by distance", "passkey_distance.csv", count_rows(s.passkey_distance)},
      {"fine-tune at 4 T0: RoPE linear rope_pi*", "runs.csv", count_runs(s, "rope_pi", "")},
      {"fine-tune at 4 T0: RoPE yarn rope_yarn*", "runs.csv", count_runs(s, "rope_yarn", "")},
      {"fine-tune at 4 T0: ALiBi, the control alibi_ft*", "runs.csv",
       count_runs(s, "alibi_ft", "")},
      {"theta ablation rope_theta*", "runs.csv", count_runs(s, "rope_theta", "")},
      {"embedding swapped <pe>_<embedding>", "runs.csv",
       count_runs(s, "", "_gpt2_s") + count_runs(s, "learned_scaled", "")},
      {"t5 max_distance = T0 t5_dist*", "runs.csv", count_runs(s, "t5_dist", "")},
      {"masked LM (break 2)", "mlm.csv", count_rows(s.mlm)},
      {"learning-rate grid", "tuning.csv", count_rows(s.tuning)}};
  Rows rows;
  long missing = 0;
  for (const auto& [part, file, n] : parts) {
    missing += n == 0;
    rows.push_back({part, file, std::to_string(n), n == 0 ? "**not in the results**" : ""});
  }
  md.para(missing == 0 ? "Every part of the plan is in the results."
                       : std::to_string(missing) + " of " + std::to_string(parts.size()) +
                             " parts are not in the results yet: `make experiments` continues "
                             "them (finished runs are reused).");
  md.table(
      "The parts of the study plan with the rows of their file in this folder (runs.csv: the "
      "runs of that name).",
      {"part", "file", "rows", ""}, rows);
}

}  // namespace

void write_report_to(Markdown& md, const Study& s, const ReportInfo& info) {
  md.heading(info.title, 1);
  headline_section(md, s);
  setup_section(md, s, info);
  budget_section(md, s);
  tuning_section(md, s);
  screening_section(md, s);
  extrapolation_section(md, s);
  sliding_section(md, s);
  attribution_section(md, s);
  copy_section(md, s);
  rope_pairs_section(md, s);
  scaling_section(md, s);
  ablation_section(md, s);
  tasks_section(md, s);
  figures_section(md, s);
  cost_section(md, s);
  cut_section(md, s);
  runs_section(md, s);
  raw_section(md, s);
}

}  // namespace report_detail

void write_report(const std::string& dir, const ReportInfo& info) {
  using namespace report_detail;
  const Study s = load_study(dir);
  std::filesystem::create_directories(dir + "/plots");
  Markdown md;
  md.quick = info.quick, md.dir = dir;
  write_report_to(md, s, info);
  write_file_atomic(dir + "/REPORT.md", md.out);
}

}  // namespace poslab
