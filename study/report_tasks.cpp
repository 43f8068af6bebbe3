// report_tasks.cpp — the order and retrieval tasks (SPEC 7.8): every scheme and seed on its
// own (seeds that disagree are never pooled), the seeds that learned a task in distribution
// (>= 90% exact match) counted, and the passkey cells of the headline table.
#include <algorithm>
#include <cmath>
#include <map>
#include <set>
#include <tuple>

#include "study/report_sections.h"

namespace poslab::report_detail {
namespace {

constexpr double kLearned = 0.9;  // exact match in distribution that makes a seed count

// Exact match of (task, pe, seed) over its rows at test lengths <= the training length,
// pooled over depths (correct / n); NaN without such rows.
double in_distribution(const Study& s, const std::string& task, const std::string& pe, long seed) {
  long correct = 0, n = 0;
  for (const auto& t : *s.tasks) {
    if (t.task == task && t.pe == pe && t.seed == seed && t.test_len <= t.train_len) {
      correct += t.correct, n += t.n;
    }
  }
  return n ? double(correct) / n : NAN;
}

std::set<long> task_seeds(const Study& s, const std::string& task, const std::string& pe) {
  std::set<long> seeds;
  for (const auto& t : *s.tasks) {
    if (t.task == task && t.pe == pe) seeds.insert(t.seed);
  }
  return seeds;
}

// Rows of tasks.csv for one task; `passkey` rows also split by depth.
Rows task_rows(const Study& s, const std::string& task, const std::vector<long>& lens) {
  std::set<std::tuple<int, long, double>> keys;  // (rank of pe, seed, depth)
  std::vector<std::string> pes;
  for (const auto& t : *s.tasks) {
    if (t.task == task) pes.push_back(t.pe);
  }
  pes = order_pes(pes);
  for (const auto& t : *s.tasks) {
    if (t.task != task) continue;
    const int rank = std::find(pes.begin(), pes.end(), t.pe) - pes.begin();
    keys.insert({rank, t.seed, std::isnan(t.depth) ? -1.0 : t.depth});
  }
  Rows rows;
  for (const auto& [rank, seed, depth] : keys) {
    rows.push_back({pes[rank], std::to_string(seed)});
    if (task == "passkey") rows.back().push_back(depth < 0 ? "n/a" : fmt_plain(depth));
    for (const long L : lens) {
      std::string cell = "n/a";
      for (const auto& t : *s.tasks) {
        const double d = std::isnan(t.depth) ? -1.0 : t.depth;
        if (t.task == task && t.pe == pes[rank] && t.seed == seed && d == depth &&
            t.test_len == L) {
          cell = fmt_accuracy(t);
          if (std::isfinite(t.char_accuracy)) cell += "; chars " + fmt_percent(t.char_accuracy);
        }
      }
      rows.back().push_back(cell);
    }
  }
  return rows;
}

void task_table(Markdown& md, const Study& s, const std::string& task) {
  std::set<long> lens, train;
  for (const auto& t : *s.tasks) {
    if (t.task == task) lens.insert(t.test_len), train.insert(t.train_len);
  }
  std::vector<std::string> h = {"pe", "seed"};
  if (task == "passkey") h.push_back("depth");
  const std::string unit = task == "unscramble" ? "k=" : "";
  for (const long L : lens) {
    h.push_back(unit + std::to_string(L) + (L > *train.begin() ? "†" : ""));
  }
  std::vector<std::string> tl;
  for (const long L : train) tl.push_back(std::to_string(L));
  const std::vector<long> lv(lens.begin(), lens.end());
  const std::string what = task == "unscramble" ? "word count k"
                           : task == "reverse"
                               ? "string length (letters)"
                               : "depth of the key in the filler (0 = start, 1 = end) and length "
                                 "(characters)";
  md.table("Task `" + task +
               "`: exact-match accuracy (whole answer right, greedy decoding) "
               "per scheme, seed and " +
               what +
               ", with the Wilson 95% interval (percent) of its n test examples; after `chars`: "
               "the share of answer characters right (char_accuracy, per-character accuracy); "
               "trained up to " +
               join(tl) + "; † = longer than training.",
           h, task_rows(s, task, lv));
}

// passkey_distance.csv: exact match by the key's distance from the question, per scheme and seed
// (every test cell's examples, bucketed by their own distance).
void passkey_distance_table(Markdown& md, const Study& s) {
  if (!s.passkey_distance) return md.not_run("passkey_distance.csv");
  std::set<std::pair<long, long>> buckets;
  std::vector<std::string> pes;
  for (const auto& r : *s.passkey_distance) buckets.insert({r.lo, r.hi}), pes.push_back(r.pe);
  Rows rows;
  long train = 0;
  for (const auto& pe : order_pes(pes))
    for (const auto& r0 : *s.passkey_distance) {
      if (r0.pe != pe || r0.lo != buckets.begin()->first) continue;
      rows.push_back({pe, std::to_string(r0.seed)});
      for (const auto& [lo, hi] : buckets) {
        std::string cell = "n/a";
        for (const auto& r : *s.passkey_distance)
          if (r.pe == pe && r.seed == r0.seed && r.lo == lo)
            cell = fmt_percent(r.accuracy) + " (" + fmt_percent(r.ci_low) + "–" +
                   fmt_percent(r.ci_high) + "; n " + std::to_string(r.n) + ")",
            train = r.train_len;
        rows.back().push_back(cell);
      }
    }
  std::vector<std::string> h = {"pe", "seed"};
  for (const auto& [lo, hi] : buckets)
    h.push_back("[" + std::to_string(lo) + ", " + std::to_string(hi) + ")" +
                (lo >= train ? "†" : ""));
  md.table(
      "Task `passkey` by distance: exact match of every test example, bucketed by the key's "
      "distance from the question (the index of the question's first character minus that of "
      "the key's last; buckets doubling from 64 characters), per scheme and seed, with the "
      "Wilson 95% interval and n; trained on examples up to " +
          std::to_string(train) + " characters; † = a distance no training example had.",
      h, rows);
}

void qualified_table(Markdown& md, const Study& s, const std::vector<std::string>& tasks) {
  std::vector<std::string> pes;
  for (const auto& t : *s.tasks) pes.push_back(t.pe);
  Rows rows;
  for (const auto& pe : order_pes(pes)) {
    rows.push_back({pe});
    for (const auto& task : tasks) {
      const auto seeds = task_seeds(s, task, pe);
      long ok = 0;
      for (const long seed : seeds) ok += in_distribution(s, task, pe, seed) >= kLearned;
      rows.back().push_back(std::to_string(ok) + " of " + std::to_string(seeds.size()));
    }
  }
  std::vector<std::string> h = {"pe"};
  h.insert(h.end(), tasks.begin(), tasks.end());
  md.table(
      "Seeds that learned each task: exact match at least 90% over the test lengths up to the "
      "training length (pooled over depths). Accuracy past the training length is read only "
      "for these seeds (the headline's passkey columns).",
      h, rows);
}

}  // namespace

std::string passkey_cell(const Study& s, const std::string& pe, long factor) {
  if (!s.tasks) return "n/a";
  long train = 0;
  std::set<long> lens;
  for (const auto& t : *s.tasks) {
    if (t.task == "passkey" && t.pe == pe) train = t.train_len, lens.insert(t.test_len);
  }
  if (lens.empty()) return "n/a";
  long L = *lens.begin();  // the test length nearest factor x train on a log scale
  for (const long x : lens) {
    if (std::abs(std::log(double(x) / (factor * train))) <
        std::abs(std::log(double(L) / (factor * train)))) {
      L = x;
    }
  }
  if (std::abs(std::log(double(L) / (factor * train))) > std::log(std::sqrt(2.0))) {
    return "n/a (not tested near " + std::to_string(factor * train) + ")";
  }
  const auto seeds = task_seeds(s, "passkey", pe);
  std::vector<double> acc;
  for (const long seed : seeds) {
    if (!(in_distribution(s, "passkey", pe, seed) >= kLearned)) continue;
    long correct = 0, n = 0;
    for (const auto& t : *s.tasks) {
      if (t.task == "passkey" && t.pe == pe && t.seed == seed && t.test_len == L) {
        correct += t.correct, n += t.n;
      }
    }
    if (n) acc.push_back(double(correct) / n);
  }
  const std::string count = "L=" + std::to_string(L) + "; " + std::to_string(acc.size()) + " of " +
                            std::to_string(seeds.size()) + " seeds";
  if (acc.empty()) return "n/a (" + count + ")";
  return fmt_percent(mean_interval(acc).mean) + " (" + count + ")";
}

void tasks_section(Markdown& md, const Study& s) {
  md.heading("Order and retrieval tasks");
  if (!s.tasks) return md.not_run("tasks.csv");
  md.para(
      "**unscramble**: the k words of a sentence in a shuffled order -> the sentence. "
      "**reverse**: a string -> the string backwards. **passkey**: a 5-digit key after a fixed "
      "phrase at a chosen depth of filler text holding other 5-digit numbers, asked for at the "
      "end. Loss on the answer tokens only.");
  std::vector<std::string> tasks;
  for (const auto& t : *s.tasks) {
    if (std::find(tasks.begin(), tasks.end(), t.task) == tasks.end()) tasks.push_back(t.task);
  }
  qualified_table(md, s, tasks);
  for (const auto& task : tasks) {
    md.heading("Task " + task, 3);
    task_table(md, s, task);
    if (task == "passkey") {
      passkey_distance_table(md, s);
      md.figure(plot_passkey(s), "passkey accuracy",
                "passkey exact match per depth (rows) and test length (columns), one panel per "
                "scheme and seed (correct / n of that seed); linear colour scale 0 to 1.");
    } else {
      md.figure(plot_task_accuracy(s, task), task + " accuracy",
                task +
                    " exact match against test length, one line per scheme and seed (later "
                    "seeds dashed), Wilson 95% intervals as bars; grey: training length.");
    }
  }
}

}  // namespace poslab::report_detail
