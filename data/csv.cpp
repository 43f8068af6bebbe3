// csv.cpp — see csv.h.
#include "data/csv.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <sstream>

#include "data/atomic_file.h"
#include "data/error.h"

namespace poslab {
namespace {

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

std::string join(const std::vector<std::string>& v) {
  std::string out;
  for (size_t i = 0; i < v.size(); ++i) out += (i ? "," : "") + v[i];
  return out;
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

}  // namespace

std::string csv_number(double v) {
  if (std::isnan(v)) return "";  // a missing number, "not applicable": an empty cell
  char b[64];
  std::snprintf(b, sizeof b, "%.6g", v);
  return b;
}

bool CsvTable::has(const std::string& name) const {
  return std::find(header.begin(), header.end(), name) != header.end();
}

size_t CsvTable::column(const std::string& name) const {
  const auto it = std::find(header.begin(), header.end(), name);
  if (it == header.end()) {
    data_error(path, ": line 1: expected a column '", name, "' in the header, but got '",
               join(header), "'");
  }
  return static_cast<size_t>(it - header.begin());
}

const std::string& CsvTable::text(size_t row, const std::string& name) const {
  return rows[row][column(name)];
}

double CsvTable::number(size_t row, const std::string& name) const {
  double v = 0;
  if (!parse_double(text(row, name), v)) {
    data_error(path, ": line ", lines[row], ": column '", name, "': expected a number, but got '",
               text(row, name), "'");
  }
  return v;
}

long CsvTable::integer(size_t row, const std::string& name) const {
  const double v = number(row, name);
  if (!std::isfinite(v) || v != std::floor(v) || std::abs(v) > 9e15) {
    data_error(path, ": line ", lines[row], ": column '", name,
               "': expected a whole number, but got '", text(row, name), "'");
  }
  return static_cast<long>(v);
}

CsvTable read_csv(const std::string& path, const std::vector<std::string>& columns) {
  const auto lines = lines_of(path);
  CsvTable csv;
  csv.path = path;
  if (lines.empty()) data_error(path, ": line 1: expected a header line, but the file is empty");
  for (const auto& h : split(lines[0].second, ',')) csv.header.push_back(trim(h));
  for (const auto& name : columns) csv.column(name);  // throws if absent
  for (size_t i = 1; i < lines.size(); ++i) {
    auto fields = split(lines[i].second, ',');
    if (fields.size() != csv.header.size()) {
      data_error(path, ": line ", lines[i].first, ": expected ", csv.header.size(),
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
        data_error(path, ": line ", n, ": expected a number, but got '", trim(f), "'");
      }
      row.push_back(v);
    }
    if (!m.empty() && row.size() != m[0].size()) {
      data_error(path, ": line ", n, ": expected ", m[0].size(),
                 " values, as on the first line, but got ", row.size());
    }
    m.push_back(std::move(row));
  }
  if (m.empty()) data_error(path, ": line 1: expected a matrix, but the file is empty");
  return m;
}

CsvWriter::CsvWriter(const std::vector<std::string>& columns)
    : columns_(columns), text_(join(columns) + "\n") {}

void CsvWriter::row(const std::vector<std::string>& cells) {
  if (cells.size() != columns_.size()) {
    data_error("csv: expected ", columns_.size(), " cells, one per column (", join(columns_),
               "), but got ", cells.size());
  }
  text_ += join(cells) + "\n";
}

void CsvWriter::write(const std::string& path) const {
  write_file_atomic(path, text_);
}

}  // namespace poslab
