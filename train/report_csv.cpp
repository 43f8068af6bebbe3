// report_csv.cpp — reading the study's CSV files, averaging over seeds, formatting numbers.
// See report.h for the file schemas.
#include <algorithm>
#include <charconv>
#include <cmath>
#include <filesystem>
#include <set>
#include <sstream>
#include <stdexcept>

#include "data/atomic_file.h"
#include "train/report.h"

namespace poslab::report_detail {
namespace {

namespace fs = std::filesystem;

template <class... Args>
[[noreturn]] void csv_error(const std::string& path, int line, const Args&... args) {
  std::ostringstream os;
  os << path << ": line " << line << ": ";
  (os << ... << args);
  throw std::runtime_error(os.str());
}

std::vector<std::string> split(const std::string& line, char sep) {
  std::vector<std::string> out(1);
  for (const char c : line) {
    if (c == sep) {
      out.emplace_back();
    } else {
      out.back() += c;
    }
  }
  return out;
}

std::string trim(const std::string& s) {
  const size_t a = s.find_first_not_of(" \t\r");
  if (a == std::string::npos) return "";
  return s.substr(a, s.find_last_not_of(" \t\r") - a + 1);
}

// The file's lines with their 1-based numbers, blank ones left out.
std::vector<std::pair<int, std::string>> lines_of(const std::string& path) {
  std::istringstream in(read_file(path));
  std::vector<std::pair<int, std::string>> out;
  std::string line;
  for (int n = 1; std::getline(in, line); ++n) {
    if (!trim(line).empty()) out.emplace_back(n, line);
  }
  return out;
}

// A double from text, locale-independent; "" and "nan" are NaN. Returns false if `t` is not
// a number.
bool parse_double(const std::string& t, double& v) {
  if (t.empty() || t == "nan" || t == "NaN" || t == "-nan") {
    v = NAN;
    return true;
  }
  const char* b = t.data() + (t[0] == '+' ? 1 : 0);
  const auto res = std::from_chars(b, t.data() + t.size(), v);
  return res.ec == std::errc() && res.ptr == t.data() + t.size();
}

// An optional file: nullopt when it is absent or holds a header only (a part that was skipped).
std::optional<Csv> read_optional(const std::string& path, const std::vector<std::string>& cols) {
  if (!fs::exists(path)) return std::nullopt;
  Csv csv = read_csv(path, cols);
  if (csv.rows.empty()) return std::nullopt;
  return csv;
}

}  // namespace

// ---------------------------------------------------------------- CSV

size_t Csv::column(const std::string& name) const {
  const auto it = std::find(header.begin(), header.end(), name);
  if (it == header.end()) {
    std::string got;
    for (const auto& h : header) got += (got.empty() ? "" : ",") + h;
    csv_error(path, 1, "expected a column '", name, "' in the header, but got '", got, "'");
  }
  return static_cast<size_t>(it - header.begin());
}

const std::string& Csv::text(size_t row, const std::string& name) const {
  return rows[row][column(name)];
}

double Csv::number(size_t row, const std::string& name) const {
  double v = 0;
  if (!parse_double(text(row, name), v)) {
    csv_error(path, lines[row], "column '", name, "': expected a number, but got '",
              text(row, name), "'");
  }
  return v;
}

long Csv::integer(size_t row, const std::string& name) const {
  const double v = number(row, name);
  if (!std::isfinite(v) || v != std::floor(v) || std::abs(v) > 9e15) {
    csv_error(path, lines[row], "column '", name, "': expected a whole number, but got '",
              text(row, name), "'");
  }
  return static_cast<long>(v);
}

Csv read_csv(const std::string& path, const std::vector<std::string>& columns) {
  const auto lines = lines_of(path);
  Csv csv;
  csv.path = path;
  if (lines.empty()) csv_error(path, 1, "expected a header line, but the file is empty");
  for (const auto& h : split(lines[0].second, ',')) csv.header.push_back(trim(h));
  for (const auto& name : columns) csv.column(name);  // throws if absent
  for (size_t i = 1; i < lines.size(); ++i) {
    auto fields = split(lines[i].second, ',');
    if (fields.size() != csv.header.size()) {
      csv_error(path, lines[i].first, "expected ", csv.header.size(),
                " fields, as in the header, but got ", fields.size());
    }
    for (auto& f : fields) f = trim(f);
    csv.rows.push_back(std::move(fields));
    csv.lines.push_back(lines[i].first);
  }
  return csv;
}

std::vector<std::vector<double>> read_matrix(const std::string& path) {
  std::vector<std::vector<double>> m;
  for (const auto& [n, line] : lines_of(path)) {
    std::vector<double> row;
    for (const auto& f : split(line, ',')) {
      double v = 0;
      if (!parse_double(trim(f), v) || trim(f).empty()) {
        csv_error(path, n, "expected a number, but got '", trim(f), "'");
      }
      row.push_back(v);
    }
    if (!m.empty() && row.size() != m[0].size()) {
      csv_error(path, n, "expected ", m[0].size(), " values, as on the first line, but got ",
                row.size());
    }
    m.push_back(std::move(row));
  }
  if (m.empty()) csv_error(path, 1, "expected a matrix, but the file is empty");
  return m;
}

// ---------------------------------------------------------------- the study

bool is_main_name(const std::string& run, const std::string& pe, long seed) {
  return run == pe + "_s" + std::to_string(seed);
}

std::vector<std::string> order_pes(std::vector<std::string> pes) {
  static const std::vector<std::string> kOrder = {"none", "learned", "sinusoidal", "rope", "alibi"};
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
  const Csv runs = read_csv(dir + "/runs.csv",
                            {"run", "pe", "seed", "steps", "theta", "causal", "objective", "params",
                             "train_loss", "val_loss", "tokens_per_s", "train_seconds"});
  std::vector<std::string> pes;
  for (size_t i = 0; i < runs.rows.size(); ++i) {
    Run r{runs.text(i, "run"),
          runs.text(i, "pe"),
          runs.text(i, "causal"),
          runs.text(i, "objective"),
          runs.integer(i, "seed"),
          runs.integer(i, "steps"),
          runs.integer(i, "params"),
          runs.number(i, "theta"),
          runs.number(i, "train_loss"),
          runs.number(i, "val_loss"),
          runs.number(i, "tokens_per_s"),
          runs.number(i, "train_seconds")};
    s.runs.push_back(r);
    const std::string curve = dir + "/curves/" + r.run + ".csv";
    if (fs::exists(curve)) {
      const Csv c =
          read_csv(curve, {"step", "lr", "train_loss", "val_loss", "grad_norm", "tokens_per_s"});
      auto& points = s.curves[r.run];
      for (size_t k = 0; k < c.rows.size(); ++k) {
        points.push_back({c.number(k, "step"), c.number(k, "lr"), c.number(k, "train_loss"),
                          c.number(k, "val_loss"), c.number(k, "grad_norm"),
                          c.number(k, "tokens_per_s")});
      }
    }
  }
  for (const auto& r : s.runs) {
    if (!s.main_runs(r.pe).empty()) pes.push_back(r.pe);
  }
  s.pes = order_pes(pes);

  if (auto c = read_optional(dir + "/extrapolation.csv",
                             {"run", "pe", "seed", "scaling", "len", "loss", "ppl",
                              "last_quarter_loss", "last_quarter_ppl", "tokens", "windows"})) {
    std::set<long> lens;
    s.eval.emplace();
    for (size_t i = 0; i < c->rows.size(); ++i) {
      s.eval->push_back({c->text(i, "run"), c->text(i, "pe"), c->text(i, "scaling"),
                         c->integer(i, "seed"), c->integer(i, "len"), c->integer(i, "tokens"),
                         c->integer(i, "windows"), c->number(i, "loss"), c->number(i, "ppl"),
                         c->number(i, "last_quarter_loss"), c->number(i, "last_quarter_ppl")});
      lens.insert(s.eval->back().len);
    }
    s.lengths.assign(lens.begin(), lens.end());
  }
  if (auto c = read_optional(dir + "/position_loss.csv",
                             {"run", "pe", "scaling", "len", "start", "end", "loss"})) {
    s.positions.emplace();
    for (size_t i = 0; i < c->rows.size(); ++i) {
      s.positions->push_back({c->text(i, "run"), c->text(i, "pe"), c->text(i, "scaling"),
                              c->integer(i, "len"), c->integer(i, "start"), c->integer(i, "end"),
                              c->number(i, "loss")});
    }
  }
  if (auto c = read_optional(dir + "/mlm.csv", {"pe", "val_loss", "shuffle_max_diff"})) {
    s.mlm.emplace();
    for (size_t i = 0; i < c->rows.size(); ++i) {
      s.mlm->push_back(
          {c->text(i, "pe"), c->number(i, "val_loss"), c->number(i, "shuffle_max_diff")});
    }
  }
  if (auto c =
          read_optional(dir + "/tasks.csv", {"task", "pe", "train_len", "test_len", "accuracy"})) {
    s.tasks.emplace();
    for (size_t i = 0; i < c->rows.size(); ++i) {
      s.tasks->push_back({c->text(i, "task"), c->text(i, "pe"), c->integer(i, "train_len"),
                          c->integer(i, "test_len"), c->number(i, "accuracy")});
    }
  }
  if (auto c = read_optional(dir + "/loc.csv", {"pe", "file", "lines", "params"})) {
    s.loc.emplace();
    for (size_t i = 0; i < c->rows.size(); ++i) {
      s.loc->push_back(
          {c->text(i, "pe"), c->text(i, "file"), c->integer(i, "lines"), c->integer(i, "params")});
    }
  }
  // attention_<pe>.csv, in directory order sorted by name (deterministic).
  std::vector<fs::path> files;
  for (const auto& e : fs::directory_iterator(dir)) files.push_back(e.path());
  std::sort(files.begin(), files.end());
  for (const auto& p : files) {
    const std::string name = p.filename().string();
    if (name.rfind("attention_", 0) == 0 && p.extension() == ".csv") {
      s.attention[name.substr(10, name.size() - 14)] = read_matrix(p.string());
    }
  }
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
