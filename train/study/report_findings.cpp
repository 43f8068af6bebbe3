// report_findings.cpp — "What the numbers say": bullet points generated from the CSVs.
//
// Each finding quotes the numbers it rests on and is only written when those numbers exist.
// Comparisons are stated as measured, also where they disagree with what papers or folklore
// say; the words ("rises", "stays flat") come from fixed thresholds on the ratios:
//   flat: within ±10%; rises / falls otherwise; "blows up" above 10x.
#include <algorithm>
#include <cmath>

#include "train/study/report.h"

namespace poslab::report_detail {
namespace {

std::string L_(long L) {
  return "L=" + std::to_string(L);
}

double ppl(const Study& s, const std::string& pe, long L, const std::string& scaling = "none") {
  return eval_ppl(s, pe, scaling, L).mean;
}

bool has(const Study& s, const std::string& pe) {
  return std::find(s.pes.begin(), s.pes.end(), pe) != s.pes.end();
}

// "rises from 5.1 to 9.3 (x1.82)", "stays flat (5.1 to 5.2)", ...
std::string change(double from, double to) {
  const double r = to / from;
  const std::string nums = fmt(from) + " to " + fmt(to);
  if (!std::isfinite(r)) return "goes from " + nums;
  const std::string x = " (×" + fmt(r, 3) + ")";
  if (r > 10) return "blows up from " + nums + x;
  if (r > 1.1) return "rises from " + nums + x;
  if (r < 0.9) return "falls from " + nums + x;
  return "stays flat: " + nums + x;
}

// Mean val ppl at T0 of the main runs (from runs.csv).
Stat train_val_ppl(const Study& s, const std::string& pe) {
  std::vector<double> v;
  for (const Run* r : s.main_runs(pe)) v.push_back(std::exp(r->val_loss));
  return stat_of(v);
}

// The learned table from T0 to the next length (and the longest it was evaluated at).
void learned_finding(const Study& s, std::vector<std::string>& out) {
  const long T0 = s.train_len(), L1 = s.lengths[1];
  if (has(s, "learned")) {
    const double a = ppl(s, "learned", T0), b = ppl(s, "learned", L1);
    long last = T0;
    for (const long L : s.lengths) {
      if (std::isfinite(ppl(s, "learned", L))) last = L;
    }
    const std::string untrained = "positions past its trained " + std::to_string(T0) +
                                  " are rows of its table that training never updated";
    std::string t = "**learned**: val ppl " + change(a, b) + " from " + L_(T0) + " to " + L_(L1) +
                    (b / a > 1.1 ? ": " + untrained + "."
                                 : ", although " + untrained +
                                       ": little of what it predicts rests on those rows.");
    if (last == T0) {
      t = "**learned**: val ppl " + fmt(a) + " at " + L_(T0) +
          "; not evaluated at longer lengths (its table has no rows there).";
    } else if (last > L1) {
      t += " At " + L_(last) + ": " + fmt(ppl(s, "learned", last)) + ".";
    }
    out.push_back(t);
  }
}

// The schemes without a table (sinusoidal, alibi, none) from T0 to the longest length.
void fixed_scheme_findings(const Study& s, std::vector<std::string>& out) {
  const long T0 = s.train_len(), Lmax = s.lengths.back();
  for (const char* pe : {"sinusoidal", "alibi", "none"}) {
    if (!has(s, pe)) continue;
    const double a = ppl(s, pe, T0), b = ppl(s, pe, Lmax);
    std::string t = "**" + std::string(pe) + "** from " + L_(T0) + " to " + L_(Lmax) +
                    ": val ppl " + change(a, b) + ".";
    const double r = b / a;
    if (std::string(pe) == "alibi" && std::isfinite(r)) {
      t += r <= 1.1 ? " As the ALiBi paper claims, it extrapolates: a distance penalty has no "
                      "notion of absolute position."
                    : " The ALiBi paper's claim (train short, test long at flat perplexity) "
                      "does not hold here at this length.";
    }
    if (std::string(pe) == "sinusoidal" && std::isfinite(r) && r > 1.1) {
      t += " The sinusoids are defined at every position, yet the network never saw the "
           "vectors past T0, so it does not extrapolate.";
    }
    out.push_back(t);
  }
}

// RoPE at the longest length, without and with the best scaling.
void rope_finding(const Study& s, std::vector<std::string>& out) {
  const long T0 = s.train_len(), Lmax = s.lengths.back();
  if (has(s, "rope")) {
    const double a = ppl(s, "rope", T0), b = ppl(s, "rope", Lmax);
    std::string t = "**rope without scaling** at " + L_(Lmax) + ": val ppl " + change(a, b) +
                    "; last-quarter ppl " + fmt(eval_ppl(s, "rope", "none", Lmax, true).mean) + ".";
    std::string best;
    double best_ppl = INFINITY;
    for (const auto& sc : rope_scalings(s)) {
      if (sc != "none" && scaled_rope_ppl(s, sc, Lmax).mean < best_ppl) {
        best = sc, best_ppl = scaled_rope_ppl(s, sc, Lmax).mean;
      }
    }
    if (!best.empty()) {  // compared on the same model: the one evaluated with every scaling
      const double plain = scaled_rope_ppl(s, "none", Lmax).mean;
      t += " Best scaling there (seed-1 model): **" + best + "** at " + fmt(best_ppl) + " (" +
           (best_ppl < plain ? "×" + fmt(plain / best_ppl, 3) + " lower than its " + fmt(plain) +
                                   " without scaling"
                             : "no better than its " + fmt(plain) + " without scaling") +
           ").";
    }
    if (std::isfinite(b / a) && b / a > 2) {
      t += " Relative positions alone do not make RoPE extrapolate: angles past T0 were never "
           "seen in training.";
    }
    out.push_back(t);
  }
}

void extrapolation_findings(const Study& s, std::vector<std::string>& out) {
  if (s.lengths.size() < 2) return;
  learned_finding(s, out);
  fixed_scheme_findings(s, out);
  rope_finding(s, out);
  // Ranking at the longest length.
  const long Lmax = s.lengths.back();
  std::vector<std::pair<double, std::string>> rank;
  for (const auto& pe : s.pes) {
    if (std::isfinite(ppl(s, pe, Lmax))) rank.push_back({ppl(s, pe, Lmax), pe});
  }
  std::sort(rank.begin(), rank.end());
  if (rank.size() >= 2) {
    std::string t = "At " + L_(Lmax) + " the schemes rank (lowest val ppl first): ";
    for (size_t i = 0; i < rank.size(); ++i) {
      t += (i ? " < " : "") + rank[i].second + " " + fmt(rank[i].first);
    }
    out.push_back(t + ".");
  }
}

void training_findings(const Study& s, std::vector<std::string>& out) {
  std::vector<std::pair<Stat, std::string>> rank;  // (val ppl over seeds, pe), best first
  for (const auto& pe : s.pes) {
    const Stat st = train_val_ppl(s, pe);
    if (st.n == 0 || !std::isfinite(st.mean)) continue;
    rank.push_back({st, pe});
  }
  std::sort(rank.begin(), rank.end(),
            [](const auto& a, const auto& b) { return a.first.mean < b.first.mean; });
  if (rank.size() >= 2) {
    std::string t = "At the training length the schemes rank (val ppl, mean over seeds): ";
    for (size_t i = 0; i < rank.size(); ++i) {
      t += (i ? " < " : "") + rank[i].second + " " + fmt(rank[i].first.mean);
    }
    t += ".";
    // Seed noise of the two best: do their min-max ranges over the seeds overlap?
    const Stat &a = rank[0].first, &b = rank[1].first;
    if (std::min(a.n, b.n) >= 2) {
      t += " The two best, " + rank[0].second + " (" + fmt(a.min) + "–" + fmt(a.max) + ") and " +
           rank[1].second + " (" + fmt(b.min) + "–" + fmt(b.max) + " over " +
           std::to_string(std::min(a.n, b.n)) + " seeds), " +
           (a.max < b.min ? "do not overlap: the order holds for every seed."
                          : "overlap: their order is within seed noise.");
    } else {
      t += " One seed only: small differences may be noise.";
    }
    out.push_back(t);
  }
  if (has(s, "none")) {
    const Run* r = s.main_runs("none").front();
    std::string t = "**NoPE (causal)** trains to val ppl " + fmt(train_val_ppl(s, "none").mean);
    if (has(s, "rope")) t += " against " + fmt(train_val_ppl(s, "rope").mean) + " for rope";
    const auto it = s.curves.find(r->run);
    double first = NAN, last = NAN;
    if (it != s.curves.end()) {
      for (const auto& c : it->second) {
        if (!std::isfinite(c.val_loss)) continue;
        if (std::isnan(first)) first = c.val_loss;
        last = c.val_loss;
      }
    }
    if (std::isfinite(first) && std::isfinite(last)) {
      t += "; during training its val loss went from " + fmt(first) + " to " + fmt(last) +
           " nats (" + r->run + ")";
      t += last < first - 0.1 ? ". A causal model without PE does learn: the causal mask leaks "
                                "position (a token can tell how many tokens it attends to)."
                              : ". It barely learned.";
    } else {
      t += ". A causal model without PE can learn because the mask leaks position.";
    }
    out.push_back(t);
  }
}

void ablation_findings(const Study& s, std::vector<std::string>& out) {
  const auto thetas = theta_runs(s);
  if (!thetas.empty() && !s.lengths.empty()) {
    std::string t = "**RoPE theta**:";
    for (const long L : {s.lengths.front(), s.lengths.back()}) {
      t += " at " + L_(L);
      for (size_t i = 0; i < thetas.size(); ++i) {
        t += std::string(i ? "," : "") + " theta " + fmt_plain(thetas[i]->theta) + " → " +
             fmt(eval_ppl_run(s, thetas[i]->run, "none", L).mean);
      }
      t += ";";
      if (s.lengths.size() == 1) break;
    }
    t.back() = '.';
    out.push_back(t);
  }
  if (s.mlm) {
    const MlmRow* none = nullptr;
    for (const auto& m : *s.mlm) {
      if (m.pe == "none") none = &m;
    }
    for (const auto& m : *s.mlm) {
      if (!none || m.pe == "none") continue;
      out.push_back("**Masked LM** (no causal mask): NoPE reaches masked-token loss " +
                    fmt(none->val_loss) + " nats against " + fmt(m.val_loss) + " with " + m.pe +
                    (none->val_loss > m.val_loss ? ": without mask and PE, order is lost."
                                                 : ": order seems to matter little for this "
                                                   "objective on this corpus."));
    }
    if (none) {
      out.push_back(
          "**Shuffle check**: shuffling the NoPE masked-LM's input changes its (un-shuffled) "
          "outputs by at most " +
          fmt(none->shuffle_max_diff) +
          (std::abs(none->shuffle_max_diff) < 1e-4 ? ": permutation-equivariant, as expected."
                                                   : ": NOT equivariant, which the theory "
                                                     "says it should be."));
    }
  }
}

void task_findings(const Study& s, std::vector<std::string>& out) {
  if (!s.tasks) return;
  std::vector<std::string> tasks;
  for (const auto& t : *s.tasks) {
    if (std::find(tasks.begin(), tasks.end(), t.task) == tasks.end()) tasks.push_back(t.task);
  }
  for (const auto& task : tasks) {
    long Lmax = 0;
    for (const auto& t : *s.tasks) {
      if (t.task == task) Lmax = std::max(Lmax, t.test_len);
    }
    std::vector<std::pair<double, std::string>> acc;
    for (const auto& t : *s.tasks) {
      if (t.task == task && t.test_len == Lmax && std::isfinite(t.accuracy)) {
        acc.push_back({-t.accuracy, t.pe});
      }
    }
    if (acc.empty()) continue;
    std::sort(acc.begin(), acc.end());
    std::string t = "**Task " + task + "** at test length " + std::to_string(Lmax) + ": ";
    for (size_t i = 0; i < acc.size(); ++i) {
      t += (i ? ", " : "") + acc[i].second + " " + fmt_percent(-acc[i].first);
    }
    out.push_back(t + ".");
  }
}

void cost_findings(const Study& s, std::vector<std::string>& out) {
  if (!s.loc) return;
  long none_params = -1;
  for (const auto& l : *s.loc) {
    if (l.pe == "none") none_params = l.params;
  }
  if (none_params <= 0) return;
  std::string t = "**Cost**: parameters added over NoPE:";
  std::vector<std::string> pes;
  for (const auto& l : *s.loc) pes.push_back(l.pe);
  for (const auto& pe : order_pes(pes)) {
    long lines = 0, params = 0;
    for (const auto& l : *s.loc) {
      if (l.pe == pe) lines += l.lines, params = l.params;
    }
    if (pe == "none") continue;
    const long extra = params - none_params;
    t += " " + pe + " +" + fmt_count(extra) + " (" +
         (extra ? fmt(100.0 * extra / none_params, 3) + "% of NoPE's model, " : "") +
         std::to_string(lines) + " lines);";
  }
  t.back() = '.';
  out.push_back(t);
}

// The short review the study ends with: why RoPE and ALiBi displaced learned and sinusoidal,
// told from this study's numbers.
void review(const Study& s, std::vector<std::string>& out) {
  if (s.lengths.size() < 2) return;
  const long T0 = s.train_len(), Lmax = s.lengths.back();
  std::vector<std::string> newer, older;
  for (const char* pe : {"rope", "alibi"}) {
    if (has(s, pe)) newer.push_back(pe);
  }
  for (const char* pe : {"learned", "sinusoidal"}) {
    if (has(s, pe)) older.push_back(pe);
  }
  if (newer.empty() || older.empty()) return;
  const auto best = [&](const std::vector<std::string>& pes, long L) {
    double b = INFINITY;
    for (const auto& pe : pes) {
      if (std::isfinite(ppl(s, pe, L))) b = std::min(b, ppl(s, pe, L));
    }
    return b;
  };
  const double n0 = best(newer, T0), o0 = best(older, T0);
  const double n1 = best(newer, Lmax), o1 = best(older, Lmax);
  if (!std::isfinite(n0) || !std::isfinite(o0) || !std::isfinite(n1)) return;
  const char* at_t0 = n0 < o0 * 0.98 ? "better" : n0 > o0 * 1.02 ? "worse" : "about even";
  std::string t = "**Review — RoPE/ALiBi against learned/sinusoidal**: at " + L_(T0) +
                  " the better of rope/alibi reaches " + fmt(n0) + " vs " + fmt(o0) +
                  " for the better of learned/sinusoidal (" + at_t0 + ")";
  if (std::isfinite(o1)) {
    t += "; at " + L_(Lmax) + ": " + fmt(n1) + " vs " + fmt(o1) + ".";
  } else {
    t += "; at " + L_(Lmax) + " rope/alibi give " + fmt(n1) +
         " while learned/sinusoidal have no usable number.";
  }
  t += !(n1 >= o1) ? " Measured here, the newer schemes win past the training length"
                   : " Measured here, the newer schemes do not win past the training length";
  t += std::string(", and at the training length they are ") + at_t0 + ".";
  out.push_back(t);
}

}  // namespace

std::vector<std::string> findings(const Study& s) {
  std::vector<std::string> out;
  training_findings(s, out);
  extrapolation_findings(s, out);
  ablation_findings(s, out);
  task_findings(s, out);
  cost_findings(s, out);
  review(s, out);
  if (out.empty()) out.push_back("Not enough results for any finding.");
  return out;
}

}  // namespace poslab::report_detail
