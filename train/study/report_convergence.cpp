// report_convergence.cpp — the sections about training: how near convergence each run is (its
// last-20% gain, the n-gram reference lines), what the study cost (timing, tuning, lines of
// code) and the table of every run.
#include <algorithm>
#include <cmath>

#include "train/study/report_sections.h"

namespace poslab::report_detail {
namespace {

void gains_table(Markdown& md, const Study& s) {
  Rows rows;
  for (const auto& pe : s.pes) {
    for (const RunRow* r : group_runs(s, kMain, pe)) {
      rows.push_back({r->run, fmt_count(r->steps), fmt_count(r->tokens), fmt(r->train_seconds),
                      fmt(r->val_loss), fmt(r->last20_gain)});
    }
  }
  md.table(
      "Each main run: val loss = loss (nats) on every window of the val split at T0; "
      "last20_gain = that loss at 80% of the steps minus at the end (how much the last fifth "
      "of training still bought: near 0 = near convergence); tokens = steps × batch × T0.",
      {"run", "steps", "tokens", "train s", "val loss", "last20_gain"}, rows);
}

void ngram_table(Markdown& md, const Study& s) {
  if (!s.ngram) return md.not_run("ngram.csv");
  Rows rows;
  for (const auto& r : *s.ngram) {
    rows.push_back({r.corpus, std::to_string(r.n), fmt_plain(r.k), fmt(r.val_loss),
                    fmt(std::exp(r.val_loss))});
  }
  md.table(
      "Reference lines: add-k smoothed character n-gram models, fitted by the study on the "
      "train split of each corpus, scored on its val split (loss in nats, ppl = exp(loss)). A "
      "transformer that has learned its corpus should at least beat the 3-gram.",
      {"corpus", "n", "k", "val loss", "ppl"}, rows);
}

}  // namespace

void convergence_section(Markdown& md, const Study& s) {
  md.heading("2. Near convergence");
  if (!s.runs || s.pes.empty()) return md.not_run("runs.csv", "main runs");
  gains_table(md, s);
  ngram_table(md, s);
  const auto verdicts = convergence_verdicts(s, kMain, "fortunes", s.pes);
  if (verdicts.empty()) {
    md.para("*Near convergence not checked: no n-gram reference for fortunes.*");
  } else {
    md.para(
        "The criterion: every main scheme below the 3-gram on val at T0 on every seed, and "
        "rope, alibi and t5 also below the 4-gram.");
    md.bullets(verdicts);
  }
  md.figure(plot_training_curves(s, kMain, "fortunes", "training_curves"), "training curves",
            "val loss (nats) against training step, one line per main run (seed 1 solid, later "
            "seeds dashed), one colour per scheme; grey dashed: the add-k n-gram models.");
}

namespace {

void timing_table(Markdown& md, const Study& s) {
  if (!s.timing) return md.not_run("timing.csv");
  std::vector<std::string> kinds;  // first word of the stage: train, eval, tasks, ngram, ...
  std::map<std::string, std::pair<int, double>> by_kind;
  double total = 0;
  for (const auto& r : *s.timing) {
    const std::string kind = r.stage.substr(0, r.stage.find(' '));
    if (!by_kind.count(kind)) kinds.push_back(kind);
    by_kind[kind].first += 1, by_kind[kind].second += r.seconds;
    total += r.seconds;
  }
  Rows rows;
  for (const auto& k : kinds) {
    const auto [n, secs] = by_kind[k];
    rows.push_back({k, std::to_string(n), duration(secs), fmt_percent(secs / total)});
  }
  rows.push_back({"**total**", std::to_string(s.timing->size()), duration(total), "100.0%"});
  md.table(
      "Compute time of the study: timing.csv holds every stage that computed something (a "
      "stage reused from an earlier invocation keeps the time it took then), summed here by "
      "kind (the first word of the stage). Stages made at the same time (`--jobs N`, one run "
      "per core) each count their own wall time, so with N jobs the sum is up to N times the "
      "wall time of the study.",
      {"stage kind", "stages", "seconds", "share"}, rows);
}

void tuning_table(Markdown& md, const Study& s) {
  if (!s.tuning) return md.not_run("tuning.csv");
  std::map<std::string, double> best;  // lowest val loss per scheme
  for (const auto& r : *s.tuning) {
    if (!best.count(r.pe) || r.val_loss < best[r.pe]) best[r.pe] = r.val_loss;
  }
  Rows rows;
  for (const auto& r : *s.tuning) {
    rows.push_back({r.pe, fmt_plain(r.lr), std::to_string(r.batch), fmt_count(r.steps),
                    fmt_count(r.tokens), fmt(r.val_loss), fmt(r.seconds),
                    r.val_loss == best[r.pe] ? "lowest" : ""});
  }
  md.table(
      "Tuning: the short runs that chose the learning rate and batch size (val loss in nats "
      "at the end of each short run; `lowest` marks the lowest per scheme).",
      {"pe", "lr", "batch", "steps", "tokens", "val loss", "seconds", ""}, rows);
}

void loc_table(Markdown& md, const Study& s) {
  if (!s.loc) return md.not_run("loc.csv");
  std::vector<std::string> pes;
  long none_params = -1;
  for (const auto& l : *s.loc) {
    pes.push_back(l.pe);
    if (l.pe == "none") none_params = l.params;
  }
  Rows rows;
  for (const auto& pe : order_pes(pes)) {
    std::vector<std::string> files;
    long lines = 0, params = 0;
    for (const auto& l : *s.loc) {
      if (l.pe != pe) continue;
      for (size_t a = 0, b = 0; b != std::string::npos; a = b + 1) {  // "x.h+x.cpp"
        b = l.file.find('+', a);
        files.push_back("`" + l.file.substr(a, b == std::string::npos ? b : b - a) + "`");
      }
      lines += l.lines, params = l.params;
    }
    rows.push_back({pe, join(files), fmt_count(lines), fmt_count(params),
                    none_params < 0 ? "n/a" : fmt_count(params - none_params)});
  }
  md.table(
      "Lines of each scheme's source files under posenc/ and the parameter count of the whole "
      "model with that scheme; the last column is what the scheme adds over NoPE.",
      {"pe", "files", "lines", "params", "params over none"}, rows);
}

}  // namespace

void cost_section(Markdown& md, const Study& s) {
  md.heading("10. Cost: compute time, tuning, lines of code");
  timing_table(md, s);
  tuning_table(md, s);
  loc_table(md, s);
}

void runs_section(Markdown& md, const Study& s) {
  md.heading("Every trained model");
  if (!s.runs) return md.not_run("runs.csv");
  Rows rows;
  for (const auto& r : *s.runs) {
    rows.push_back({r.run, r.pe, std::to_string(r.seed), r.objective, r.corpus, r.embedding,
                    fmt_count(r.steps), fmt_count(r.tokens), fmt(r.train_seconds), fmt(r.val_loss),
                    fmt(r.last20_gain)});
  }
  md.table(
      "All rows of runs.csv: val loss in nats at T0 (masked-LM runs: on the masked tokens; task "
      "runs: on the answer tokens), last20_gain = val loss at 80% of the steps minus at the end.",
      {"run", "pe", "seed", "objective", "corpus", "embedding", "steps", "tokens", "train s",
       "val loss", "last20_gain"},
      rows);
}

}  // namespace poslab::report_detail
