// report_findings_parts.cpp — the findings about the ablations and the tasks (see
// report_findings.cpp for the rules: a difference is claimed only when it holds for every seed,
// or, for task accuracies, when the Wilson intervals of every seed separate).
#include <algorithm>
#include <cmath>
#include <map>
#include <set>

#include "train/study/report.h"
#include "train/study/report_markdown.h"

namespace poslab::report_detail {
namespace {

std::string ppl_of(const PerSeed& v) {
  return fmt(std::exp(interval_of(v).mean));
}

PerSeed only(const PerSeed& v, const PerSeed& seeds_of) {
  PerSeed out;
  for (const auto& [seed, x] : seeds_of) {
    if (v.count(seed)) out[seed] = v.at(seed);
  }
  return out;
}

// "X: below ... on every seed (a vs b)" or "within seed noise (a vs b)".
std::string versus(const PerSeed& a, const PerSeed& b, const std::string& baseline) {
  const std::string rel = paired(a, b),
                    nums = " (ppl " + ppl_of(a) + " vs " + ppl_of(only(b, a)) + ")";
  if (only(b, a).size() < 2) return "one seed, no claim" + nums;
  if (rel.empty()) return "not of one sign on every seed" + nums;
  return rel + " " + baseline + " on every seed" + nums;
}

void scaling_finding(const Study& s, std::vector<std::string>& out) {
  const auto scalings = rope_scalings(s);
  if (scalings.size() <= 1 || s.lengths.size() < 2 || !near_converged(s, "rope")) return;
  const long L = s.lengths.back();
  const PerSeed plain = eval_per_seed(s, kMain, "rope", L);
  std::string t = "**RoPE scaling** at L=" + std::to_string(L) + ", against plain RoPE (ppl " +
                  ppl_of(plain) + "):";
  for (const auto& sc : scalings) {
    if (sc == "none") continue;
    const PerSeed v = eval_per_seed(s, kMain, "rope", L, sc);
    const std::string rel = paired(v, plain);
    t += " " + sc + " " + ppl_of(v) + " (" +
         (only(plain, v).size() < 2 ? "one seed, no claim"
          : rel.empty()             ? "within seed noise"
                                    : rel + " on every seed") +
         ");";
  }
  t.back() = '.';
  out.push_back(t);
}

void theta_embedding_findings(const Study& s, std::vector<std::string>& out) {
  if (s.lengths.empty()) return;
  const long T0 = s.lengths.front(), Lmax = s.lengths.back();
  for (const auto& [g, label] : {std::pair{kTheta10, "10"}, std::pair{kTheta1e6, "1e6"}}) {
    if (group_seeds(s, g, "rope").empty()) continue;
    std::string t = "**RoPE theta " + std::string(label) + "** against theta 10000 (same seeds):";
    for (const long L : {T0, Lmax}) {
      t += " at L=" + std::to_string(L) + " " +
           versus(eval_per_seed(s, g, "rope", L), eval_per_seed(s, kMain, "rope", L),
                  "theta 10000") +
           ";";
      if (T0 == Lmax) break;
    }
    t.back() = '.';
    out.push_back(t);
  }
  for (const char* pe : {"sinusoidal", "learned"}) {
    if (group_seeds(s, kGpt2, pe).empty()) continue;
    out.push_back(
        "**" + std::string(pe) + ", embedding gpt2** against scaled at L=" + std::to_string(T0) +
        ": " + versus(eval_per_seed(s, kGpt2, pe, T0), eval_per_seed(s, kMain, pe, T0), "scaled") +
        ".");
  }
}

void mlm_findings(const Study& s, std::vector<std::string>& out) {
  if (!s.mlm) return;
  std::map<std::string, PerSeed> loss, shuffle;
  for (const auto& m : *s.mlm)
    loss[m.pe][m.seed] = m.val_loss, shuffle[m.pe][m.seed] = m.shuffle_max_diff;
  for (const auto& [pe, v] : loss) {
    if (pe == "none" || !loss.count("none")) continue;
    const std::string rel = only(loss["none"], v).size() < 2 ? "one seed" : paired(loss["none"], v);
    out.push_back("**Masked LM** (no causal mask): NoPE's masked-token loss " +
                  fmt(interval_of(loss["none"]).mean) + " nats against " +
                  fmt(interval_of(v).mean) + " with " + pe + ": " +
                  (rel == "one seed" ? "one seed, no claim."
                   : rel.empty()     ? "not of one sign on every seed."
                                     : rel + " it on every seed."));
  }
  for (const auto& [pe, v] : shuffle) {
    double worst = 0;
    for (const auto& [seed, x] : v) worst = std::max(worst, x);
    const bool rounding = worst < 1e-4;
    out.push_back("**Shuffle check**, masked LM with " + pe + ": outputs change by at most " +
                  fmt(worst) + " over " + std::to_string(v.size()) +
                  " seed(s) when the input is "
                  "shuffled: " +
                  (rounding ? "float rounding, the model cannot see order."
                            : "more than float rounding, the model sees order."));
  }
}

}  // namespace

void ablation_findings(const Study& s, std::vector<std::string>& out) {
  scaling_finding(s, out);
  theta_embedding_findings(s, out);
  mlm_findings(s, out);
}

namespace {

// One task at its longest test length: every (seed, depth) row's accuracy per scheme, and the
// schemes whose every Wilson interval lies above every interval of another scheme.
void task_finding(const Study& s, const std::string& task, std::vector<std::string>& out) {
  long Lmax = 0, train = 0;
  for (const auto& t : *s.tasks) {
    if (t.task == task) Lmax = std::max(Lmax, t.test_len), train = t.train_len;
  }
  std::map<std::string, std::pair<double, double>> range;  // pe -> (min ci_low, max ci_high)
  std::map<std::string, std::vector<std::string>> accs;
  std::map<std::string, std::set<long>> seeds;
  for (const auto& t : *s.tasks) {
    if (t.task != task || t.test_len != Lmax) continue;
    seeds[t.pe].insert(t.seed);
    auto [it, fresh] = range.try_emplace(t.pe, t.ci_low, t.ci_high);
    if (!fresh)
      it->second = {std::min(it->second.first, t.ci_low), std::max(it->second.second, t.ci_high)};
    accs[t.pe].push_back(fmt_percent(t.accuracy));
  }
  std::vector<std::string> pes;
  for (const auto& [pe, r] : range) pes.push_back(pe);
  pes = order_pes(pes);
  std::string t = "**Task " + task + "** at test length " + std::to_string(Lmax) + " (trained at " +
                  std::to_string(train) + "), accuracy of every seed" +
                  (task == "passkey" ? " and depth" : "") + ":";
  for (const auto& pe : pes) t += " " + pe + " " + join(accs[pe], "/") + ";";
  t.back() = '.';
  std::vector<std::string> claims;
  for (const auto& a : pes) {  // claims need two seeds on each side
    std::vector<std::string> below;
    for (const auto& b : pes) {
      if (seeds[a].size() >= 2 && seeds[b].size() >= 2 && range[a].first > range[b].second) {
        below.push_back(b);
      }
    }
    if (!below.empty()) claims.push_back(a + " above " + join(below));
  }
  t += claims.empty() ? " No two schemes (with 2 seeds or more) whose Wilson intervals separate on "
                        "every seed."
                      : " Separate on every seed (Wilson 95%): " + join(claims, "; ") + ".";
  out.push_back(t);
}

}  // namespace

void task_findings(const Study& s, std::vector<std::string>& out) {
  if (!s.tasks) return;
  std::vector<std::string> tasks;
  for (const auto& t : *s.tasks) {
    if (std::find(tasks.begin(), tasks.end(), t.task) == tasks.end()) tasks.push_back(t.task);
  }
  for (const auto& task : tasks) task_finding(s, task, out);
}

}  // namespace poslab::report_detail
