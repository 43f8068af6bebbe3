// report_convergence.cpp — the sections about training: the budget curve (B/4, B/2, B: did
// the last doubling still pay), the learning-rate grid per scheme, the n-gram reference
// lines, what the study cost (timing, lines of code) and the table of every run.
#include <algorithm>
#include <cmath>
#include <map>
#include <set>

#include "study/report_sections.h"

namespace poslab::report_detail {
namespace {

// The rank (1 = lowest loss) of each scheme's value among the finite ones; 0 if not finite.
std::map<std::string, int> ranks(const std::map<std::string, double>& v) {
  std::map<std::string, int> out;
  for (const auto& [pe, x] : v) {
    if (!std::isfinite(x)) continue;
    int r = 1;
    for (const auto& [other, y] : v) r += std::isfinite(y) && y < x;
    out[pe] = r;
  }
  return out;
}

// Whether pe has a rank in both and they differ.
bool changed(const std::map<std::string, int>& a, const std::string& pe,
             const std::map<std::string, int>& b) {
  return a.count(pe) && b.count(pe) && a.at(pe) != b.at(pe);
}

void budget_table(Markdown& md, const Study& s) {
  std::map<std::string, double> at4, at2, at1;
  for (const auto& pe : s.pes) {
    const Budget b = budget_of(s, pe);
    at4[pe] = b.b4, at2[pe] = b.b2, at1[pe] = b.b;
  }
  const auto r4 = ranks(at4), r2 = ranks(at2), r1 = ranks(at1);
  const auto rank_text = [](const std::map<std::string, int>& r, const std::string& pe) {
    return r.count(pe) ? std::to_string(r.at(pe)) : std::string("n/a");
  };
  Rows rows;
  for (const auto& pe : s.pes) {
    const Budget b = budget_of(s, pe);
    const std::string r = rank_text(r4, pe) + ", " + rank_text(r2, pe) + ", " + rank_text(r1, pe);
    rows.push_back({pe, std::to_string(b.at_b.size()), fmt_loss(b.at_b4), fmt_loss(b.at_b2),
                    fmt_loss(b.at_b), fmt_nats(paired_difference(b.at_b4, b.at_b2)),
                    fmt_nats(paired_difference(b.at_b2, b.at_b)),
                    b.known() ? (b.converged() ? "yes" : "no") : "n/a", r,
                    changed(r4, pe, r1) || changed(r2, pe, r1) ? "changes" : ""});
  }
  md.table(
      "The budget curve: val loss (nats) at T0 at B/4, B/2 and B tokens, mean over the seeds "
      "± the 95% half-width (3+ seeds; runs.csv val_loss). B is the main run <pe>_s<seed>; B/4 "
      "and B/2 are its cooldown branches <pe>_b4_s<seed>, <pe>_b2_s<seed>: its constant-phase "
      "state at 0.8 B/4 (0.8 B/2) decayed over the last 0.2 B/4 (0.2 B/2) steps, the same model "
      "as a run trained straight to that budget with the same schedule. gain = the loss at the "
      "smaller budget minus at the larger, paired by seed. converged = the last doubling "
      "B/2 → B bought at most 0.02 nats (mean over seeds). rank = the scheme's place by mean "
      "val loss at B/4, B/2, B (1 = lowest); `changes` where the ranks differ.",
      {"pe", "seeds", "B/4", "B/2", "B", "gain B/4→B/2", "gain B/2→B", "converged",
       "rank B/4, B/2, B", ""},
      rows);
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
      "train split of each corpus, scored on its val split (loss in nats, ppl = exp(loss)).",
      {"corpus", "n", "k", "val loss", "ppl"}, rows);
}

}  // namespace

void budget_section(Markdown& md, const Study& s) {
  md.heading("Budget curve and training");
  if (!s.runs || s.pes.empty()) return md.not_run("runs.csv", "main runs");
  budget_table(md, s);
  md.figure(plot_budget(s), "budget curve",
            "val loss at T0 against the training budget (tokens, log x axis), mean over seeds, "
            "one line per scheme: B/4, B/2, B; grey dashed: the add-k n-gram models.");
  ngram_table(md, s);
  md.figure(plot_training_curves(s, kMain, main_corpus(s), "training_curves"), "training curves",
            "val loss (nats) against training step, one line per main run (seed 1 solid, later "
            "seeds dashed), one colour per scheme; grey dashed: the add-k n-gram models.");
}

// One scheme's tuning (tuning.csv, its first batch size): loss by (seed, lr).
struct Grid {
  long batch = 0;
  std::map<std::pair<long, double>, double> loss;
  // The rate its runs use (tune.h): a scheme with seed-2 rows is a kept one whose choice sat at
  // its grid's edge; it takes the largest rate only where that wins on every seed, else its
  // seed-1 choice among the others. Any other scheme: its lowest seed-1 loss.
  double chosen(bool& moved) const {
    double best = INFINITY, choice = NAN, largest = 0;
    bool checked = false;
    for (const auto& [key, l] : loss) {
      checked = checked || key.first > 1;
      if (key.first == 1) largest = std::max(largest, key.second);
    }
    for (const auto& [key, l] : loss)
      if (key.first == 1 && (!checked || key.second != largest) && l < best)
        best = l, choice = key.second;
    moved = false;
    if (!checked) return choice;
    moved = true;
    for (const auto& [key, l] : loss)
      if (key.second == largest) {
        const auto other = loss.find({key.first, choice});
        moved = moved && other != loss.end() && l < other->second;
      }
    return moved ? largest : choice;
  }
};

void tuning_section(Markdown& md, const Study& s) {
  md.heading("Learning rate per scheme");
  if (!s.tuning) return md.not_run("tuning.csv");
  std::map<std::string, Grid> grids;
  std::vector<std::string> pes;
  std::set<std::pair<long, double>> columns;  // (seed, lr)
  for (const auto& r : *s.tuning) {
    Grid& g = grids[r.pe];
    if (g.loss.empty()) g.batch = r.batch, pes.push_back(r.pe);
    if (r.batch != g.batch) continue;
    g.loss[{r.seed, r.lr}] = r.val_loss, columns.insert({r.seed, r.lr});
  }
  Rows rows;
  std::string moved_pes;
  for (const auto& pe : order_pes(pes)) {
    const Grid& g = grids[pe];
    rows.push_back({pe, std::to_string(g.batch)});
    for (const auto& col : columns) {
      const auto it = g.loss.find(col);
      rows.back().push_back(it == g.loss.end() ? "" : fmt(it->second));
    }
    bool moved = false;
    const double chosen = g.chosen(moved);
    double low = INFINITY, high = 0;  // the rates tried
    for (const auto& [key, l] : g.loss)
      low = std::min(low, key.second), high = std::max(high, key.second);
    const bool edge = g.loss.size() >= 3 && (chosen == low || chosen == high);
    rows.back().push_back(fmt_plain(chosen) + (edge ? " (grid's edge)" : "") +
                          (moved ? " (moved)" : ""));
    if (moved) moved_pes += (moved_pes.empty() ? "" : ", ") + pe;
  }
  std::vector<std::string> h = {"pe", "batch"};
  for (const auto& [seed, lr] : columns)
    h.push_back("lr " + fmt_plain(lr) + (seed > 1 ? " seed " + std::to_string(seed) : ""));
  h.push_back("chosen lr");
  md.table(
      "The learning-rate grid: val loss (nats) at the end of each short tuning run (tuning.csv, "
      "the first batch size of each scheme; seed 1 unless a column names another; empty: not "
      "tried). chosen = the learning rate the scheme's runs use: the lowest seed-1 loss; a scheme "
      "tried on a second seed (a kept scheme whose choice sat at the edge of the grid it was "
      "tuned on) takes the grown grid's largest rate only if its loss is the lower one on each "
      "seed tried. (grid's "
      "edge): the chosen rate is the smallest or largest the scheme tried, so a rate beyond it "
      "may do better. (moved): trained again at the larger rate: its main runs, branches and "
      "fine-tunes; its break experiments, ablations and tasks keep the rate they were made "
      "with. Moved: " +
          (moved_pes.empty() ? std::string("none") : moved_pes) + ".",
      h, rows);
}

void screening_section(Markdown& md, const Study& s) {
  md.heading("Screened schemes: promoted or not");
  if (!s.screening) return md.not_run("screening.csv", "screening decisions");
  Rows rows;
  std::vector<std::string> promoted;
  for (const auto& r : *s.screening) {
    rows.push_back({r.pe, std::to_string(r.seeds), fmt(r.loss_t0), fmt_signed(r.vs_sliding),
                    r.best_loss_t0_pe + " " + fmt(r.best_loss_t0),
                    r.best_vs_sliding_pe + " " + fmt_signed(r.best_vs_sliding), r.promoted});
    if (r.promoted == "yes") promoted.push_back(r.pe);
  }
  md.table(
      "Each screened scheme's B/4 cooldown branch (the constant phase of a run on B's schedule, "
      "<pe>_screen_s<seed>, decayed like a main run's B/4 branch) against the main schemes' B/4 "
      "branches, means over the same seeds (screening.csv): **loss T0** = val loss at T0; **vs "
      "sliding** = loss − sliding-window loss on positions [T0, 16 T0) of the longest windows; "
      "**best main** = the lowest main scheme's mean and which. A scheme that beats every main "
      "scheme on either measure is promoted: its constant phase continues to B and it gains "
      "the main runs' seeds, branches and tasks. Promoted: " +
          (promoted.empty() ? std::string("none") : join(promoted)) + ".",
      {"scheme", "seeds", "loss T0", "vs sliding", "best main: loss T0", "best main: vs sliding",
       "promoted"},
      rows);
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
  const double evals = by_kind["eval"].second + by_kind["probe"].second;
  rows.push_back({"evaluation (eval + probe)",
                  std::to_string(by_kind["eval"].first + by_kind["probe"].first), duration(evals),
                  fmt_percent(evals / total)});
  rows.push_back({"**total**", std::to_string(s.timing->size()), duration(total), "100.0%"});
  md.table(
      "Compute time of the study: timing.csv holds every stage that computed something (a "
      "stage reused from an earlier invocation keeps the time it took then), summed here by "
      "kind (the first word of the stage). Stages made at the same time (`--jobs N`, one run "
      "per core) each count their own wall time, so with N jobs the sum is up to N times the "
      "wall time of the study.",
      {"stage kind", "stages", "seconds", "share"}, rows);
}

// Per invocation: what it measured first (throughput.csv), and the training tokens/s its main
// runs made (the last row of each log), summed over the runs it made at once. The sum is the
// mean rate of a main run times jobs, which stands for the study only when the invocation made
// at least jobs main runs: with fewer, the other cores trained shorter runs (branches, tasks,
// ablations) or nothing, and one run's rate times jobs says nothing about them.
void throughput_table(Markdown& md, const Study& s) {
  if (!s.throughput) return md.not_run("throughput.csv");
  Rows rows;
  for (const auto& t : *s.throughput) {
    std::vector<double> tps;
    for (const auto& r : s.runs ? *s.runs : std::vector<RunRow>{}) {
      const auto it = s.curves.find(r.run);
      if (r.invocation == t.invocation && r.run == kMain.name(r.pe, r.seed) &&
          it != s.curves.end() && !it->second.empty())
        tps.push_back(it->second.back().tokens_per_s);
    }
    const bool enough = !tps.empty() && static_cast<long>(tps.size()) >= t.jobs;
    const double sum = enough ? mean_interval(tps).mean * t.jobs : NAN;
    rows.push_back(
        {t.invocation, t.machine, std::to_string(t.cores), fmt(t.load, 2), std::to_string(t.jobs),
         fmt_count(std::lround(t.one_run)), fmt_count(std::lround(t.runs_at_once)),
         std::to_string(tps.size()), std::isfinite(sum) ? fmt_count(std::lround(sum)) : "n/a",
         std::isfinite(sum) ? fmt_percent(sum / std::max(t.one_run, t.runs_at_once)) : "n/a"});
  }
  md.table(
      "Training throughput (tokens/s) per invocation of the study. Measured first, with short "
      "copies of a main run (load = the 1-minute load average just before: near 0 means the "
      "machine was idle): one run on every core, and one run per core on one thread each, "
      "summed; the faster way sets how many runs it made at once (jobs). Then the main runs it "
      "made: the throughput of each (its log's last row, training steps only), their mean times "
      "jobs, against the faster of the two measured first; n/a where the invocation made fewer "
      "main runs than jobs (the other cores then trained other runs, or nothing).",
      {"invocation (UTC)", "machine", "cores", "load", "jobs", "one run, all cores",
       "runs at once, summed", "main runs", "study, summed", "of measured"},
      rows);
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
  md.heading("Cost: compute time, lines of code");
  timing_table(md, s);
  throughput_table(md, s);
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
