// report_data.cpp — loading the study's results folder, averaging over seeds, formatting
// numbers for the report. See report.h; the files' columns are in tables.h.
#include <algorithm>
#include <charconv>
#include <cmath>
#include <filesystem>
#include <set>

#include "data/csv.h"
#include "train/study/report.h"

namespace poslab::report_detail {
namespace {

namespace fs = std::filesystem;

// An optional file: nullopt when it is absent or holds a header only (a part that was skipped).
template <class Row>
std::optional<std::vector<Row>> read_optional(const std::string& path) {
  if (!fs::exists(path)) return std::nullopt;
  std::vector<Row> rows = read_rows<Row>(path);
  if (rows.empty()) return std::nullopt;
  return rows;
}

// attention_<pe>.csv, in directory order sorted by name (deterministic).
void load_attention(Study& s) {
  std::vector<fs::path> files;
  for (const auto& e : fs::directory_iterator(s.dir)) files.push_back(e.path());
  std::sort(files.begin(), files.end());
  for (const auto& p : files) {
    const std::string name = p.filename().string();
    if (name.rfind("attention_", 0) == 0 && p.extension() == ".csv") {
      s.attention[name.substr(10, name.size() - 14)] = read_matrix(p.string());
    }
  }
}

}  // namespace

// ---------------------------------------------------------------- the study

bool is_main_name(const std::string& run, const std::string& pe, long seed) {
  return run == pe + "_s" + std::to_string(seed);
}

std::vector<std::string> order_pes(std::vector<std::string> pes) {
  static const std::vector<std::string> kOrder = {"none", "learned", "sinusoidal",
                                                  "rope", "alibi",   "t5"};
  const auto rank = [](const std::string& pe) {
    return std::find(kOrder.begin(), kOrder.end(), pe) - kOrder.begin();
  };
  std::sort(pes.begin(), pes.end(), [&](const std::string& a, const std::string& b) {
    return rank(a) != rank(b) ? rank(a) < rank(b) : a < b;
  });
  pes.erase(std::unique(pes.begin(), pes.end()), pes.end());
  return pes;
}

std::vector<const Run*> Study::main_runs(const std::string& pe) const {
  std::vector<const Run*> out;
  for (const auto& r : runs) {
    if (r.pe == pe && r.objective == "lm" && (pe != "rope" || r.theta == 10000) &&
        is_main_name(r.run, pe, r.seed)) {
      out.push_back(&r);
    }
  }
  std::sort(out.begin(), out.end(), [](const Run* a, const Run* b) { return a->seed < b->seed; });
  return out;
}

Study load_study(const std::string& dir) {
  Study s;
  s.dir = dir;
  s.runs = read_rows<Run>(dir + "/runs.csv");
  std::vector<std::string> pes;
  for (const auto& r : s.runs) {
    const std::string curve = dir + "/curves/" + r.run + ".csv";
    if (fs::exists(curve)) s.curves[r.run] = read_log(curve);
    if (!s.main_runs(r.pe).empty()) pes.push_back(r.pe);
  }
  s.pes = order_pes(pes);
  s.eval = read_optional<EvalRow>(dir + "/extrapolation.csv");
  if (s.eval) {
    std::set<long> lens;
    for (const auto& e : *s.eval) lens.insert(e.len);
    s.lengths.assign(lens.begin(), lens.end());
  }
  s.positions = read_optional<PositionRow>(dir + "/position_loss.csv");
  s.mlm = read_optional<MlmRow>(dir + "/mlm.csv");
  s.tasks = read_optional<TaskRow>(dir + "/tasks.csv");
  s.loc = read_optional<LocRow>(dir + "/loc.csv");
  load_attention(s);
  return s;
}

// ---------------------------------------------------------------- averages

Stat stat_of(const std::vector<double>& values) {
  Stat st{0, INFINITY, -INFINITY, 0};
  for (const double v : values) {
    if (std::isnan(v)) continue;
    st.mean += v, st.min = std::min(st.min, v), st.max = std::max(st.max, v), ++st.n;
  }
  if (st.n == 0) return {NAN, NAN, NAN, 0};
  st.mean /= st.n;
  return st;
}

Stat eval_ppl(const Study& s, const std::string& pe, const std::string& scaling, long len,
              bool last_quarter) {
  std::vector<double> v;
  if (s.eval) {
    for (const auto& r : *s.eval) {
      if (r.pe == pe && r.scaling == scaling && r.len == len && is_main_name(r.run, pe, r.seed)) {
        v.push_back(last_quarter ? r.last_quarter_ppl : r.ppl);
      }
    }
  }
  return stat_of(v);
}

Stat eval_ppl_run(const Study& s, const std::string& run, const std::string& scaling, long len) {
  std::vector<double> v;
  if (s.eval) {
    for (const auto& r : *s.eval) {
      if (r.run == run && r.scaling == scaling && r.len == len) v.push_back(r.ppl);
    }
  }
  return stat_of(v);
}

Stat scaled_rope_ppl(const Study& s, const std::string& scaling, long len, bool last_quarter) {
  std::vector<std::string> runs;  // main RoPE runs with at least one scaled evaluation
  if (s.eval)
    for (const auto& r : *s.eval)
      if (r.pe == "rope" && r.scaling != "none" && is_main_name(r.run, r.pe, r.seed) &&
          std::find(runs.begin(), runs.end(), r.run) == runs.end())
        runs.push_back(r.run);
  std::vector<double> v;
  if (s.eval)
    for (const auto& r : *s.eval)
      if (r.scaling == scaling && r.len == len &&
          std::find(runs.begin(), runs.end(), r.run) != runs.end())
        v.push_back(last_quarter ? r.last_quarter_ppl : r.ppl);
  return stat_of(v);
}

std::vector<std::string> rope_scalings(const Study& s) {
  static const std::vector<std::string> kOrder = {"none", "linear", "ntk", "dynamic", "yarn"};
  std::vector<std::string> out;
  if (!s.eval) return out;
  for (const auto& r : *s.eval) {
    if (r.pe == "rope" && is_main_name(r.run, r.pe, r.seed) &&
        std::find(out.begin(), out.end(), r.scaling) == out.end()) {
      out.push_back(r.scaling);
    }
  }
  const auto rank = [](const std::string& x) {
    return std::find(kOrder.begin(), kOrder.end(), x) - kOrder.begin();
  };
  std::sort(out.begin(), out.end(), [&](const std::string& a, const std::string& b) {
    return rank(a) != rank(b) ? rank(a) < rank(b) : a < b;
  });
  return out;
}

std::vector<const Run*> theta_runs(const Study& s) {
  std::vector<const Run*> out;
  long seed = -1;
  for (const auto& r : s.runs) {
    if (r.pe == "rope" && r.objective == "lm" && r.theta != 10000) {
      out.push_back(&r);
      if (seed < 0) seed = r.seed;
    }
  }
  if (out.empty()) return out;
  for (const Run* r : s.main_runs("rope")) {  // the theta = 10000 baseline, same seed
    if (r->seed == seed) out.push_back(r);
  }
  std::stable_sort(out.begin(), out.end(),
                   [](const Run* a, const Run* b) { return a->theta < b->theta; });
  return out;
}

// ---------------------------------------------------------------- numbers as text

std::string fmt(double v, int significant) {
  if (std::isnan(v)) return "n/a";
  if (std::isinf(v)) return v > 0 ? "inf" : "-inf";
  char buf[64];
  const double a = std::abs(v);
  if (a != 0 && (a >= 1e5 || a < 1e-3)) {
    // "3.210e+07" -> mantissa without trailing zeros, exponent without '+' and leading zeros.
    const auto r = std::to_chars(buf, buf + sizeof buf, v, std::chars_format::scientific,
                                 std::max(0, significant - 2));
    std::string t(buf, r.ptr);
    const size_t e = t.find('e');
    std::string mant = t.substr(0, e), exp = t.substr(e + 1);
    if (mant.find('.') != std::string::npos) {
      mant.erase(mant.find_last_not_of('0') + 1);
      if (mant.back() == '.') mant.pop_back();
    }
    const bool neg = exp[0] == '-';
    exp.erase(0, exp.find_first_not_of("+-0"));
    return mant + "e" + (neg ? "-" : "") + exp;
  }
  int decimals = 0;
  if (a >= 1000) {
    decimals = 0;  // "1235", "12346": whole numbers, never "1.235e3"
  } else if (a > 0) {
    decimals = std::max(0, significant - 1 - static_cast<int>(std::floor(std::log10(a))));
  } else {
    decimals = significant - 1;
  }
  const auto r = std::to_chars(buf, buf + sizeof buf, v, std::chars_format::fixed, decimals);
  return std::string(buf, r.ptr);
}

std::string fmt_plain(double v) {
  if (!std::isfinite(v)) return fmt(v);
  char buf[64];
  const auto r = std::to_chars(buf, buf + sizeof buf, v);  // shortest round-trip: "1e+06"
  std::string t(buf, r.ptr);
  const size_t e = t.find('e');
  if (e == std::string::npos) return t;
  std::string exp = t.substr(e + 1);
  const bool neg = exp[0] == '-';
  exp.erase(0, exp.find_first_not_of("+-0"));
  return t.substr(0, e) + "e" + (neg ? "-" : "") + exp;
}

std::string fmt_count(long v) {
  std::string digits = std::to_string(std::labs(v)), out;
  for (size_t i = 0; i < digits.size(); ++i) {
    if (i > 0 && (digits.size() - i) % 3 == 0) out += ',';
    out += digits[i];
  }
  return (v < 0 ? "-" : "") + out;
}

std::string fmt_percent(double v) {
  if (std::isnan(v)) return "n/a";
  char buf[32];
  const auto r = std::to_chars(buf, buf + sizeof buf, 100 * v, std::chars_format::fixed, 1);
  return std::string(buf, r.ptr) + "%";
}

std::string fmt_stat(const Stat& s) {
  if (s.n == 0) return "n/a";
  if (s.n == 1) return fmt(s.mean);
  return fmt(s.mean) + " (" + fmt(s.min) + "–" + fmt(s.max) + ")";
}

}  // namespace poslab::report_detail
