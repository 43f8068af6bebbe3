// report_headline.cpp — the table REPORT.md opens with (SPEC 7.10): one row per scheme and per
// reference (RoPE + YaRN, RoPE theta = 10, RoPE read through a sliding window, the 3- and
// 5-gram), every cell read from the CSVs by the rule its caption states.
#include <algorithm>
#include <cmath>
#include <functional>
#include <map>

#include "train/study/report_sections.h"

namespace poslab::report_detail {
namespace {

// One row of the headline: where its losses come from. `pe` names the scheme whose files,
// parameters and timing the row shares; `main` marks the six main schemes (copy, passkey and
// the budget curve are measured on them alone).
struct Line {
  std::string label, pe;
  bool main = false;
  std::function<PerSeed(long L)> loss;           // val loss at length L, per seed
  std::function<PerSeed(long L, int k)> unseen;  // loss_unseen_k at length L, per seed
  std::string loc_key;                           // loc.csv schemes whose lines add up, '+'
};

// The sliding-window loss on positions [T0, 4T0) (k = 1) or [8T0, 16T0) (k = 2) of the
// windows of length L, per seed: the mean of position_loss.csv's sliding_loss over the
// buckets in that range, weighted by their widths; only where the buckets tile the range.
PerSeed sliding_unseen(const Study& s, long L, int k) {
  const long T0 = s.train_len(), a = k == 1 ? T0 : 8 * T0, b = k == 1 ? 4 * T0 : 16 * T0;
  std::map<long, long> ends;
  const auto buckets = position_losses(s, kMain, "rope", L, &ends, "none", Measure::sliding);
  std::map<long, std::pair<double, long>> sums;  // seed -> (sum of loss x width, width)
  for (const auto& [start, per_seed] : buckets) {
    if (start < a || ends[start] > b) continue;
    for (const auto& [seed, v] : per_seed) {
      sums[seed].first += v * (ends[start] - start), sums[seed].second += ends[start] - start;
    }
  }
  PerSeed out;
  for (const auto& [seed, sw] : sums) {
    if (sw.second == b - a) out[seed] = sw.first / sw.second;
  }
  return out;
}

std::vector<Line> headline_lines(const Study& s) {
  std::vector<Line> out;
  const auto group_line = [&](const std::string& label, const Group& g, const std::string& pe,
                              const std::string& scaling, Measure m) {
    Line l{label, pe, false, nullptr, nullptr, pe};
    l.loss = [&s, g, pe, scaling, m](long L) { return eval_per_seed(s, g, pe, L, scaling, m); };
    l.unseen = [&s, g, pe, scaling, m](long L, int k) {
      return m == Measure::loss ? unseen_per_seed(s, g, pe, L, k, scaling)
                                : sliding_unseen(s, L, k);
    };
    return l;
  };
  for (const auto& pe : s.pes) {
    out.push_back(group_line(pe, kMain, pe, "none", Measure::loss));
    out.back().main = true;
  }
  if (!group_seeds(s, kMain, "rope").empty()) {
    out.push_back(group_line("rope + yarn", kMain, "rope", "yarn", Measure::loss));
    out.back().loc_key = "rope+rope_scaling";
    out.push_back(group_line("rope, sliding window", kMain, "rope", "none", Measure::sliding));
  }
  if (!group_seeds(s, kTheta10, "rope").empty()) {
    out.push_back(group_line("rope, theta = 10", kTheta10, "rope", "none", Measure::loss));
  }
  return out;
}

// Lines of the loc.csv schemes in key ("rope+rope_scaling"); -1 if one is missing.
long lines_of(const Study& s, const std::string& key) {
  long total = 0;
  for (size_t a = 0, b = 0; b != std::string::npos; a = b + 1) {
    b = key.find('+', a);
    const std::string pe = key.substr(a, b == std::string::npos ? b : b - a);
    long lines = -1;
    for (const auto& l : s.loc ? *s.loc : std::vector<LocRow>{}) {
      if (l.pe == pe) lines = std::max(0L, lines) + l.lines;
    }
    if (lines < 0) return -1;
    total += lines;
  }
  return total;
}

// loc.csv: the parameters of pe's model minus NoPE's (-1 if either is missing).
long params_added(const Study& s, const std::string& pe) {
  long p = -1, none = -1;
  for (const auto& l : s.loc ? *s.loc : std::vector<LocRow>{}) {
    if (l.pe == pe) p = l.params;
    if (l.pe == "none") none = l.params;
  }
  return p < 0 || none < 0 ? -1 : p - none;
}

// runs.csv: 1000 train_seconds / steps of group g's runs of pe, mean over seeds.
double ms_per_step(const Study& s, const Group& g, const std::string& pe) {
  std::vector<double> v;
  for (const RunRow* r : group_runs(s, g, pe)) {
    if (r->steps > 0) v.push_back(1000 * r->train_seconds / r->steps);
  }
  return mean_interval(v).mean;
}

std::string converged_cell(const Study& s, const std::string& pe) {
  const Budget b = budget_of(s, pe);
  if (!b.known()) return "n/a";
  return std::string(b.converged() ? "yes" : "no") + " (" + fmt_signed(b.last_gain()) + ")";
}

Rows line_rows(const Study& s, const std::vector<Line>& lines, const HeadlineColumns& c) {
  const long T0 = s.train_len();
  const PerSeed rope = eval_per_seed(s, kMain, "rope", T0);
  Rows rows;
  for (const Line& l : lines) {
    const PerSeed at_t0 = l.loss(T0);
    const long lines_n = lines_of(s, l.loc_key), added = params_added(s, l.pe);
    const Group& g = l.label.find("theta") != std::string::npos ? kTheta10 : kMain;
    rows.push_back(
        {l.label, std::to_string(at_t0.size()),
         at_t0.empty() ? "n/a" : fmt(std::exp(interval_of(at_t0).mean)), fmt_ppl(l.loss(c.mid)),
         fmt_ppl(l.loss(c.far)), lines_n < 0 ? "n/a" : fmt_count(lines_n), fmt_loss(at_t0),
         fmt_nats(paired_difference(at_t0, rope)), fmt_loss(l.unseen(c.far, 1)),
         fmt_loss(l.unseen(c.far, 2)),
         l.main ? fmt_nats(copy_gain_per_seed(s, l.pe, c.copy_d)) : "n/a",
         l.main ? passkey_cell(s, l.pe, 4) : "n/a", l.main ? passkey_cell(s, l.pe, 16) : "n/a",
         added < 0 ? "n/a" : fmt_count(added), fmt(ms_per_step(s, g, l.pe), 3),
         l.main ? converged_cell(s, l.pe) : "n/a"});
  }
  return rows;
}

// The n-gram references: a loss independent of position and length, no interval.
void ngram_rows(const Study& s, Rows& rows) {
  const PerSeed rope = eval_per_seed(s, kMain, "rope", s.train_len());
  for (const long n : {3L, 5L}) {
    const double v = ngram_loss(s, "fortunes", n);
    if (std::isnan(v)) continue;
    PerSeed diff;
    for (const auto& [seed, x] : rope) diff[seed] = v - x;
    const std::string ppl = fmt(std::exp(v));
    rows.push_back({std::to_string(n) + "-gram", "", ppl, ppl, ppl, "n/a", fmt(v), fmt_nats(diff),
                    fmt(v), fmt(v), "n/a", "n/a", "n/a", "n/a", "n/a", "n/a"});
  }
}

}  // namespace

HeadlineColumns headline_columns(const Study& s) {
  HeadlineColumns c;
  const long T0 = s.train_len();
  c.mid = 4 * T0, c.far = 16 * T0;
  c.copy_d = nearest_distance(s, 4 * T0);
  return c;
}

void headline_section(Markdown& md, const Study& s) {
  md.heading("Headline");
  if (s.pes.empty()) return md.not_run("runs.csv", "main runs (<pe>_s<seed>)");
  const HeadlineColumns c = headline_columns(s);
  Rows rows = line_rows(s, headline_lines(s), c);
  ngram_rows(s, rows);
  const std::string T0 = std::to_string(s.train_len()), mid = std::to_string(c.mid),
                    far = std::to_string(c.far);
  const std::string d = c.copy_d > 0 ? std::to_string(c.copy_d) : "n/a";
  md.table(
      "Per scheme (main runs, budget B) and per reference. **train ppl** = exp of the mean "
      "over seeds of the val loss at L = T0 = " +
          T0 +
          " (extrapolation.csv), not of the training loss. **ppl L** = exp of the mean val "
          "loss over every val window of length L read from position 0; with 3 or more seeds "
          "(exp of) the 95% Student t interval, with 2 seeds the two seeds' values; a lower "
          "end below 1 is clamped at 1 and printed 1*. **lines** = lines of the scheme's files "
          "under posenc/ (loc.csv; yarn adds rope_scaling). **loss T0** = val loss (nats) at "
          "T0, ± the 95% half-width; **Δ rope** = the loss at T0 minus RoPE's, paired by seed "
          "(n-grams: minus each RoPE seed). **unseen** = loss on positions [T0, 4T0) and "
          "[8T0, 16T0) of the windows of length " +
          far +
          " (loss_unseen_1/2). **copy gain** = loss_control − loss_planted (nats per "
          "character, copy.csv) at d = " +
          d +
          ", the distance nearest 4T0. **passkey** = exact-match accuracy at the test length "
          "nearest 4× and 16× the training length (n/a if none is within a factor √2), mean "
          "over the seeds that reach at least 90% "
          "in distribution (test length ≤ training length), with how many qualified. "
          "**params +** = parameters of the model minus NoPE's (loc.csv). **ms/step** = "
          "train_seconds / steps (runs.csv), mean over seeds. **converged** = whether the last "
          "doubling of the budget, B/2 → B (seed 1), bought at most 0.02 nats; in brackets "
          "the val loss at B/2 minus at B. The sliding-window reference scores the same "
          "targets with a window of T0 moved by T0/4 (sliding_loss; its unseen columns: the "
          "width-weighted mean of position_loss.csv's sliding_loss over the buckets of the "
          "range). The n-grams: one number at every length.",
      {"scheme", "seeds", "train ppl", "ppl " + mid, "ppl " + far, "lines", "loss T0", "Δ rope",
       "unseen [T0,4T0)", "unseen [8T0,16T0)", "copy gain d=" + d, "passkey 4×", "passkey 16×",
       "params +", "ms/step", "converged"},
      rows);
}

}  // namespace poslab::report_detail
