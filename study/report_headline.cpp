// report_headline.cpp — the two tables REPORT.md opens with, every cell read from the CSVs by the
// rule its caption states: Table 1, the seed text's columns and the quality at T0, one row per
// scheme and per reference (RoPE + YaRN, RoPE theta = 10, RoPE read through a sliding window,
// the 3- and 5-gram); Table 2, how much of its context each scheme uses, inside and past T0.
#include <algorithm>
#include <cmath>
#include <functional>
#include <map>

#include "study/report_sections.h"

namespace poslab::report_detail {
namespace {

// One row of the headline: where its losses come from. `pe` names the scheme whose files,
// parameters and timing the row shares; `main` marks the six main schemes (copy, passkey and
// the budget curve are measured on them alone).
struct Line {
  std::string label, pe;
  bool main = false;
  std::function<PerSeed(long L)> loss;  // val loss at length L, per seed
  std::string loc_key;                  // loc.csv schemes whose lines add up, '+'
  Group budget = kMain;                 // Δ rope against RoPE at the same budget
};

// A measure of position_loss.csv on positions [a, b) of the windows of length L, per seed: the
// mean over the buckets in that range, weighted by their widths; only where they tile it.
PerSeed range_measure(const Study& s, const std::string& pe, const std::string& scaling, long L,
                      long a, long b, Measure m, const Group& g = kMain) {
  std::map<long, long> ends;
  const auto buckets = position_losses(s, g, pe, L, &ends, scaling, m);
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

// extrapolation.csv at T0: loss_window32 - loss per seed (what context beyond 32 tokens buys).
PerSeed context_gain(const Study& s, const std::string& pe) {
  PerSeed out;
  for (const auto& e : s.eval ? *s.eval : std::vector<EvalRow>{})
    if (e.pe == pe && e.len == s.train_len() && e.run == kMain.name(pe, e.seed) &&
        (e.rope_scaling.empty() || e.rope_scaling == "none") && std::isfinite(e.loss_window32))
      out[e.seed] = e.loss_window32 - e.loss;
  return out;
}

std::vector<Line> headline_lines(const Study& s) {
  std::vector<Line> out;
  const auto group_line = [&](const std::string& label, const Group& g, const std::string& pe,
                              const std::string& scaling, Measure m) {
    Line l{label, pe, false, nullptr, pe};
    l.loss = [&s, g, pe, scaling, m](long L) { return eval_per_seed(s, g, pe, L, scaling, m); };
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
    out.push_back(group_line("rope, theta = 10 (B/4)", kTheta10, "rope", "none", Measure::loss));
    out.back().budget = kB4;  // trained at B/4 like the other breaks
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

// The ranks of the main schemes by mean val loss at B/4 and at B: "3 → 2", "held" when equal.
std::string rank_cell(const Study& s, const std::string& pe) {
  const auto rank_at = [&](double Budget::*at) {
    const double mine = budget_of(s, pe).*at;
    if (!std::isfinite(mine)) return 0;
    int r = 1;
    for (const auto& other : s.pes) r += (budget_of(s, other).*at) < mine;
    return r;
  };
  const int r4 = rank_at(&Budget::b4), r1 = rank_at(&Budget::b);
  if (r4 == 0 || r1 == 0) return "n/a";
  return std::to_string(r4) + " → " + std::to_string(r1) + (r4 == r1 ? " (held)" : "");
}

Rows line_rows(const Study& s, const std::vector<Line>& lines, const HeadlineColumns& c) {
  const long T0 = s.train_len();
  Rows rows;
  for (const Line& l : lines) {
    const PerSeed at_t0 = l.loss(T0), rope = eval_per_seed(s, l.budget, "rope", T0);
    const long lines_n = lines_of(s, l.loc_key), added = params_added(s, l.pe);
    rows.push_back({l.label, std::to_string(at_t0.size()),
                    at_t0.empty() ? "n/a" : fmt(std::exp(interval_of(at_t0).mean)),
                    fmt_ppl(l.loss(c.mid)), fmt_ppl(l.loss(c.far)),
                    lines_n < 0 ? "n/a" : fmt_count(lines_n), fmt_loss(at_t0),
                    fmt_nats(paired_difference(at_t0, rope)), added < 0 ? "n/a" : fmt_count(added),
                    l.main ? rank_cell(s, l.pe) : "n/a"});
  }
  return rows;
}

// The n-gram references: a loss independent of position and length, no interval.
void ngram_rows(const Study& s, Rows& rows) {
  const PerSeed rope = eval_per_seed(s, kMain, "rope", s.train_len());
  for (const long n : {3L, 5L}) {
    const double v = ngram_loss(s, main_corpus(s), n);
    if (std::isnan(v)) continue;
    PerSeed diff;
    for (const auto& [seed, x] : rope) diff[seed] = v - x;
    const std::string ppl = fmt(std::exp(v));
    rows.push_back({std::to_string(n) + "-gram", "", ppl, ppl, ppl, "n/a", fmt(v), fmt_nats(diff),
                    "n/a", "n/a"});
  }
}

// The fine-tunes at 4 T0 (plan.cpp): the run group, its scheme and scaling, its label.
struct Finetune {
  Group g;
  std::string pe, scaling, label;
};
const std::vector<Finetune>& finetunes() {
  static const std::vector<Finetune> kFinetunes{
      {{"", "_pi4"}, "rope", "linear", "rope, linear fine-tune at 4 T0"},
      {{"", "_yarn4"}, "rope", "yarn", "rope, yarn fine-tune at 4 T0"},
      {{"", "_ft4"}, "alibi", "none", "alibi trained on at 4 T0 (control)"}};
  return kFinetunes;
}

// Table 2: the main schemes, RoPE + YaRN zero-shot, and the fine-tunes at 4 T0. "unseen [T0,
// 4T0) − sliding": on the windows of 4 T0, a fine-tune's loss against its main run's sliding
// window (it has none of its own: its T0 is 4 T0), paired by seed.
Rows context_rows(const Study& s, const HeadlineColumns& c) {
  const long T0 = s.train_len();
  Rows rows;
  const auto add = [&](const std::string& label, const std::string& pe,
                       const std::string& scaling) {
    const bool main = scaling == "none";
    rows.push_back({label, main ? fmt_nats(context_gain(s, pe)) : "n/a",
                    fmt_nats(range_measure(s, pe, scaling, c.far, T0, c.far, Measure::gap)),
                    fmt_nats(range_measure(s, pe, scaling, c.mid, T0, c.mid, Measure::gap)),
                    main ? fmt_nats(copy_gain_per_seed(s, pe, c.copy_near)) : "n/a",
                    main ? fmt_nats(copy_gain_per_seed(s, pe, c.copy_d)) : "n/a",
                    fmt_loss(unseen_per_seed(s, kMain, pe, c.far, 1, scaling)),
                    fmt_loss(unseen_per_seed(s, kMain, pe, c.far, 2, scaling)),
                    main ? passkey_cell(s, pe, 4) : "n/a", main ? passkey_cell(s, pe, 16) : "n/a"});
  };
  for (const auto& pe : s.pes) add(pe, pe, "none");
  if (!group_seeds(s, kMain, "rope").empty()) add("rope + yarn", "rope", "yarn");
  for (const Finetune& f : finetunes()) {
    if (group_seeds(s, f.g, f.pe).empty()) continue;
    const PerSeed own = range_measure(s, f.pe, f.scaling, c.mid, T0, c.mid, Measure::loss, f.g);
    const PerSeed parent = range_measure(s, f.pe, "none", c.mid, T0, c.mid, Measure::sliding);
    rows.push_back({f.label + " (" + f.pe + f.g.suffix + ")", "n/a", "n/a",
                    fmt_nats(paired_difference(own, parent)), "n/a", "n/a",
                    fmt_loss(unseen_per_seed(s, f.g, f.pe, c.far, 1, f.scaling)),
                    fmt_loss(unseen_per_seed(s, f.g, f.pe, c.far, 2, f.scaling)), "n/a", "n/a"});
  }
  return rows;
}

}  // namespace

HeadlineColumns headline_columns(const Study& s) {
  HeadlineColumns c;
  const long T0 = s.train_len();
  c.mid = 4 * T0, c.far = 16 * T0;
  c.copy_d = nearest_distance(s, 4 * T0);
  c.copy_near = nearest_distance(s, T0 / 4);
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
  const std::string d = c.copy_d > 0 ? std::to_string(c.copy_d) : "n/a",
                    near = c.copy_near > 0 ? std::to_string(c.copy_near) : "n/a";
  md.table(
      "Per scheme (main runs, budget B) and per reference. **train ppl** = exp of "
      "the mean over seeds of the val loss at L = T0 = " +
          T0 +
          " (extrapolation.csv), not of the training loss. **ppl L** = exp of the mean val "
          "loss over every val window of length L read from position 0; with 3 or more seeds "
          "(exp of) the 95% Student t interval, with 2 seeds the two seeds' values; a lower "
          "end below 1 is clamped at 1 and printed 1*. **lines** = lines of the scheme's files "
          "under posenc/ (loc.csv; yarn adds rope_scaling). **loss T0** = val loss (nats) at "
          "T0, ± the 95% half-width; **Δ rope** = the loss at T0 minus RoPE's, paired by seed "
          "(n-grams: minus each RoPE seed; theta = 10, trained at B/4 like the other break "
          "experiments: minus RoPE's B/4 branches). **params +** = parameters of the model minus "
          "NoPE's (loc.csv). **rank B/4 → B** = the scheme's place among the six by mean val "
          "loss at T0 at B/4 (the cooldown branches) and at B (Budget curve). The "
          "sliding-window reference scores the same targets with a window of T0 moved by T0/4 "
          "(sliding_loss). The n-grams: one number at every length.",
      {"scheme", "seeds", "train ppl", "ppl " + mid, "ppl " + far, "lines", "loss T0", "Δ rope",
       "params +", "rank B/4 → B"},
      rows);
  md.table(
      "How much of its context each scheme uses, mean over seeds ± the 95% "
      "half-width (nats; 2 seeds: both values). **context > 32** = the loss at T0 with "
      "attention limited to the last 32 tokens minus the plain loss, on the same windows "
      "(loss_window32 − loss; > 0: the model gains from context beyond 32 characters). "
      "**vs sliding past T0** = the loss minus the sliding-window loss on the same targets, "
      "positions [T0, " +
          far + ") of the windows of length " + far +
          " (position_loss.csv, width-weighted; < 0: the model reads further than it was "
          "trained, > 0: reading further hurts it). **unseen [T0,4T0) − sliding** = the same on "
          "positions [T0, 4T0) of the windows of length " +
          mid +
          ", the mean over seeds of each seed's difference (paired by seed) ± the 95% "
          "half-width; a fine-tune at 4 T0 against the sliding window of the main run it "
          "continues, seed by seed (it has no window of T0 of its own). **copy d** = "
          "loss_control − loss_planted "
          "(nats per character, copy.csv) with the two copies d = " +
          near + " (inside T0) and d = " + d +
          " characters apart. **unseen** = loss on positions [T0, 4T0) and [8T0, 16T0) of the "
          "windows of length " +
          far +
          " (loss_unseen_1/2). **passkey** = exact-match accuracy at the test length nearest 4× "
          "and 16× the training length (n/a if none is within a factor √2), mean over the "
          "seeds that reach at least 90% in distribution, with how many qualified.",
      {"scheme", "context > 32", "vs sliding past T0", "unseen [T0,4T0) − sliding",
       "copy d=" + near, "copy d=" + d, "unseen [T0,4T0)", "unseen [8T0,16T0)", "passkey 4×",
       "passkey 16×"},
      context_rows(s, c));
}

}  // namespace poslab::report_detail
