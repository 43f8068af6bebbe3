// report.cpp — write_report: REPORT.md, section by section, from the study's CSVs. This file
// holds the setup, the headline table, near-convergence, cost and the raw data; the other
// sections are in report_extrapolation.cpp and report_ablations.cpp (report_sections.h).
#include "train/study/report.h"

#include <cmath>
#include <filesystem>
#include <set>

#include "data/atomic_file.h"
#include "train/study/report_markdown.h"
#include "train/study/report_sections.h"

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

void setup_section(Markdown& md, const Study& s, const ReportInfo& info) {
  md.heading(info.title, 1);
  md.para(
      "Same corpus, network, data order, token budget and seeds; only the positional encoding "
      "(PE) changes. Every number below is read from the CSV files in this folder (listed at "
      "the end); nothing is typed in by hand.");
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
            {"runs in runs.csv", s.runs ? std::to_string(s.runs->size()) : "0"}});
  md.para(
      "The schemes: **none** (NoPE) adds nothing; **learned** adds a trained vector per "
      "position to the token embedding; **sinusoidal** adds fixed sin/cos vectors; **rope** "
      "rotates each pair of query/key dimensions by an angle proportional to the position; "
      "**alibi** subtracts a fixed per-head slope times the distance from each attention "
      "score; **t5** adds a learned bias per head and bucket of relative distance. Perplexity "
      "(ppl) = exp(mean cross-entropy per token in nats); lower is better.");
  md.para(
      "**How the numbers are summarised.** Each model is trained with several seeds. A number "
      "over seeds is the mean of the *losses* (nats), and a perplexity is exp of that mean "
      "(the geometric mean of the seeds' perplexities, so one diverged seed does not dominate). "
      "Its 95% interval is mean ± t(n−1)·s/√n, s the standard deviation over the n seeds and "
      "t the Student t quantile (12.71 for 2 seeds, 4.30 for 3), then exponentiated. With one "
      "seed there is no interval and the cell says \"1 seed\". Task accuracies carry the "
      "Wilson 95% interval of their n test examples. A statement in \"What the numbers say\" is "
      "made only when it holds for every seed or the intervals do not overlap.");
}

// Lines of a scheme's files under posenc/ and its model's parameter count (loc.csv).
std::pair<long, long> loc_of(const Study& s, const std::string& pe) {
  long lines = 0, params = -1;
  if (s.loc) {
    for (const auto& l : *s.loc) {
      if (l.pe == pe) lines += l.lines, params = l.params;
    }
  }
  return {params < 0 ? -1 : lines, params};
}

void headline_section(Markdown& md, const Study& s) {
  md.heading("1. Headline");
  if (s.pes.empty()) return md.not_run("runs.csv", "main runs (<pe>_s<seed>)");
  Rows rows;
  bool any_flag = false;
  for (const auto& pe : s.pes) {
    const auto [lines, params] = loc_of(s, pe);
    const bool ok = near_converged(s, pe);
    any_flag |= !ok;
    rows.push_back({pe + (ok ? "" : " ‡"), std::to_string(group_seeds(s, kMain, pe).size()),
                    params < 0 ? "n/a" : fmt_count(params), lines < 0 ? "n/a" : fmt_count(lines),
                    fmt_ppl(interval_of(train_loss_per_seed(s, kMain, pe)))});
    for (const long L : s.lengths)
      rows.back().push_back(fmt_ppl(interval_of(eval_per_seed(s, kMain, pe, L))));
  }
  std::vector<std::string> h = {"pe", "seeds", "params", "lines", "train ppl"};
  for (const long L : s.lengths) h.push_back("ppl L=" + std::to_string(L));
  md.table(
      "Per scheme: train ppl = exp of the last training loss of each run's curve; ppl L = "
      "perplexity on every window of the val split at length L (trained at T0 = " +
          std::to_string(s.train_len()) +
          "), mean over seeds of the loss, exponentiated, with its 95% interval in brackets; "
          "params = parameters of the whole model; lines = lines of the scheme's files under "
          "posenc/." +
          (any_flag ? " ‡ = not near convergence (section 2): its numbers past T0 are not "
                      "interpretable."
                    : ""),
      h, rows);
  md.figure(plot_ppl_vs_length(s, kMain, "ppl_vs_length"), "perplexity against length",
            "val perplexity against evaluation length, mean over seeds (of the loss, "
            "exponentiated) with the 95% interval over seeds shaded; log axes, values past the "
            "clip line drawn as triangles.");
}

void raw_section(Markdown& md, const Study& s) {
  md.heading("Raw data");
  namespace fs = std::filesystem;
  std::string list;
  for (const char* f :
       {"runs.csv", "extrapolation.csv", "position_loss.csv", "mlm.csv", "tasks.csv", "ngram.csv",
        "timing.csv", "attention.csv", "tuning.csv", "loc.csv"}) {
    list += fs::exists(s.dir + "/" + f) ? std::string("- [") + f + "](" + f + ")\n"
                                        : std::string("- ") + f + ": not produced\n";
  }
  list += "- curves/<run>.csv: the training log of each run (" + std::to_string(s.curves.size()) +
          " files)\n";
  md.para(
      "The numbers behind every table and figure, as written by the experiment runner "
      "(columns in train/study/tables.h and train/log.h):\n\n" +
      list);
}

}  // namespace

// Near convergence: one bullet per scheme of group g, against the n-grams of `corpus`.
std::vector<std::string> convergence_verdicts(const Study& s, const Group& g,
                                              const std::string& corpus,
                                              const std::vector<std::string>& pes) {
  std::vector<std::string> out;
  const double tri = ngram_loss(s, corpus, 3), four = ngram_loss(s, corpus, 4);
  for (const auto& pe : pes) {
    const PerSeed val = val_loss_per_seed(s, g, pe);
    if (val.empty() || std::isnan(tri)) continue;
    const bool modern = pe == "rope" || pe == "alibi" || pe == "t5";
    std::string seeds;
    for (const auto& [seed, v] : val)
      seeds += (seeds.empty() ? "" : ", ") + std::to_string(seed) + ": " + fmt(v);
    std::string t = "**" + pe + "** (val loss at T0 per seed " + seeds + "): ";
    const bool below3 = all_below(val, tri);
    t += below3 ? "below the 3-gram (" + fmt(tri) + ") on every seed"
                : "**not below the 3-gram (" + fmt(tri) + ") on every seed**";
    if (modern && !std::isnan(four)) {
      t += all_below(val, four) ? "; below the 4-gram (" + fmt(four) + ") on every seed"
                                : "; **not below the 4-gram (" + fmt(four) + ") on every seed**";
    }
    t += near_converged(s, pe, corpus, g)
             ? "."
             : ". Not near convergence within this budget: its extrapolation numbers are "
               "**not interpretable**, and no conclusion is drawn from them.";
    out.push_back(t);
  }
  return out;
}

void write_report_to(Markdown& md, const Study& s, const ReportInfo& info) {
  setup_section(md, s, info);
  headline_section(md, s);
  convergence_section(md, s);
  extrapolation_section(md, s);
  sliding_section(md, s);
  scaling_section(md, s);
  ablation_section(md, s);
  tasks_section(md, s);
  kjv_section(md, s);
  figures_section(md, s);
  cost_section(md, s);
  md.heading("What the numbers say");
  md.para(
      "Generated from the tables above; each point quotes the numbers it rests on and is made "
      "only where it holds for every seed or the 95% intervals separate.");
  md.bullets(findings(s));
  if (s.review) {
    md.heading("Review");
    md.para(*s.review);
  }
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
