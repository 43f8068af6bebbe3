// report_findings.cpp — "What the numbers say": bullet points generated from the CSVs.
//
// Each finding quotes the numbers it rests on, and claims a difference only where it holds for
// every seed (paired by seed) or the 95% intervals over seeds separate; otherwise it says that
// the difference is within seed noise. With one seed nothing is claimed. Schemes that are not
// near convergence (report.h, near_converged) get no claim about their extrapolation.
#include <algorithm>
#include <cmath>

#include "train/study/report.h"
#include "train/study/report_markdown.h"

namespace poslab::report_detail {
namespace {

constexpr double kFlat = 0.02;  // nats: a change within ±0.02 (about 2% in ppl) is "flat"

std::string L_(long L) {
  return "L=" + std::to_string(L);
}

std::string ppl_text(const PerSeed& v) {
  return fmt(std::exp(interval_of(v).mean));
}

// "a < b ≈ c": schemes by mean (lowest first), '<' where the intervals separate.
std::string ranking(const std::vector<std::pair<std::string, PerSeed>>& by_pe) {
  std::vector<std::pair<Interval, std::string>> rank;
  for (const auto& [pe, v] : by_pe) {
    if (!v.empty()) rank.push_back({interval_of(v), pe});
  }
  std::sort(rank.begin(), rank.end(),
            [](const auto& a, const auto& b) { return a.first.mean < b.first.mean; });
  std::string t;
  for (size_t i = 0; i < rank.size(); ++i) {
    if (i) t += separated(rank[i - 1].first, rank[i].first) ? " < " : " ≈ ";
    t += rank[i].second + " " + fmt(std::exp(rank[i].first.mean));
  }
  return rank.size() >= 2 ? t : "";
}

// What holds for every seed of the per-seed changes d: "rises", "falls", "flat" or "".
std::string direction(const PerSeed& d) {
  if (d.size() < 2) return "";
  const auto every = [&](auto pred) {
    return std::all_of(d.begin(), d.end(), [&](const auto& kv) { return pred(kv.second); });
  };
  if (every([](double x) { return x > kFlat; })) return "rises";
  if (every([](double x) { return x < -kFlat; })) return "falls";
  if (every([](double x) { return std::abs(x) <= kFlat; })) return "flat";
  return "";
}

PerSeed difference(const PerSeed& a, const PerSeed& b) {  // a - b on the seeds they share
  PerSeed d;
  for (const auto& [seed, x] : a) {
    if (b.count(seed)) d[seed] = x - b.at(seed);
  }
  return d;
}

void convergence_finding(const Study& s, std::vector<std::string>& out) {
  if (!s.ngram || !s.runs) return;
  std::vector<std::string> yes, no;
  for (const auto& pe : s.pes) (near_converged(s, pe) ? yes : no).push_back(pe);
  std::string t =
      "**Near convergence** (val loss at T0 below the add-k 3-gram on every seed; "
      "rope, alibi, t5 also below the 4-gram): ";
  t += yes.empty() ? "met by no scheme" : "met by " + join(yes);
  if (!no.empty()) {
    t += "; **not met by " + join(no) +
         "**, whose extrapolation numbers are therefore not interpretable (no claim below)";
  }
  out.push_back(t + ".");
}

void ranking_findings(const Study& s, std::vector<std::string>& out) {
  if (s.lengths.empty()) return;
  for (const long L : {s.lengths.front(), s.lengths.back()}) {
    std::vector<std::pair<std::string, PerSeed>> by_pe;
    for (const auto& pe : s.pes) {
      if (L == s.train_len() || near_converged(s, pe))
        by_pe.push_back({pe, eval_per_seed(s, kMain, pe, L)});
    }
    const std::string r = ranking(by_pe);
    if (!r.empty()) {
      out.push_back("At " + L_(L) +
                    " (ppl, mean over seeds; `<` where the 95% intervals "
                    "separate, `≈` where they overlap or a scheme has one seed): " +
                    r + ".");
    }
    if (s.lengths.size() == 1) break;
  }
}

// From T0 to the longest length, per scheme of group g, only where it holds for every seed.
void extrapolation_findings(const Study& s, const Group& g, const std::string& corpus,
                            std::vector<std::string>& out) {
  const auto lens = group_lengths(s, g);
  if (lens.size() < 2) return;
  const long T0 = lens.front(), Lmax = lens.back();
  const std::string where = corpus == "kjv" ? " on kjv" : "";
  for (const auto& pe : group_pes(s, g)) {
    if (!near_converged(s, pe, corpus, g)) continue;
    const PerSeed a = eval_per_seed(s, g, pe, T0), b = eval_per_seed(s, g, pe, Lmax);
    const PerSeed d = difference(b, a);
    if (d.empty()) continue;
    const std::string dir = direction(d);
    std::string t = "**" + pe + "**" + where + " from " + L_(T0) + " to " + L_(Lmax) + ": ppl " +
                    ppl_text(a) + " → " + ppl_text(b) + "; ";
    if (d.size() < 2) {
      t += "one seed, no claim.";
    } else if (dir.empty()) {
      t += "the change is not of one sign on every seed (within seed noise).";
    } else {
      t += dir == "flat" ? "flat (within ±" + fmt(kFlat, 1) + " nats) on every seed."
                         : dir + " on every seed.";
    }
    out.push_back(t);
  }
}

void sliding_findings(const Study& s, std::vector<std::string>& out) {
  if (s.lengths.size() < 2) return;
  const long Lmax = s.lengths.back();
  std::vector<std::string> uses, hurt, neither;
  for (const auto& pe : s.pes) {
    if (!near_converged(s, pe)) continue;
    const PerSeed gap = eval_per_seed(s, kMain, pe, Lmax, "none", Measure::gap);
    if (gap.empty()) continue;
    const Interval v = interval_of(gap);
    const std::string item = pe + " (" + fmt_nats(v) + ")";
    if (v.has_spread() && v.high() < 0 && all_below(gap, 0)) {
      uses.push_back(item);
    } else if (v.has_spread() && v.low() > 0 &&
               std::all_of(gap.begin(), gap.end(), [](const auto& kv) { return kv.second > 0; })) {
      hurt.push_back(item);
    } else {
      neither.push_back(item);
    }
  }
  if (uses.empty() && hurt.empty() && neither.empty()) return;
  std::string t = "**Sliding window** at " + L_(Lmax) + " (loss − sliding-window loss, nats): ";
  if (!uses.empty())
    t += "uses the longer context on every seed, interval below 0: " + join(uses) + ". ";
  if (!hurt.empty())
    t += "Hurt by the longer context on every seed, interval above 0: " + join(hurt) + ". ";
  if (!neither.empty()) t += "No difference that holds for every seed: " + join(neither) + ".";
  out.push_back(t);
}

}  // namespace

std::vector<std::string> findings(const Study& s) {
  std::vector<std::string> out;
  convergence_finding(s, out);
  ranking_findings(s, out);
  extrapolation_findings(s, kMain, "fortunes", out);
  sliding_findings(s, out);
  ablation_findings(s, out);
  task_findings(s, out);
  extrapolation_findings(s, kKjv, "kjv", out);
  if (out.empty()) out.push_back("Not enough results for any finding.");
  return out;
}

// Paired by seed: "below on every seed", "above on every seed" or "" (not of one sign).
std::string paired(const PerSeed& a, const PerSeed& b) {
  const PerSeed d = difference(a, b);
  if (d.size() < 2) return "";
  if (std::all_of(d.begin(), d.end(), [](const auto& kv) { return kv.second < 0; })) return "below";
  if (std::all_of(d.begin(), d.end(), [](const auto& kv) { return kv.second > 0; })) return "above";
  return "";
}

}  // namespace poslab::report_detail
