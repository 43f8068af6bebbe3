// csv.h — the one CSV reader and writer of poslab: the trainer's log.csv, the study's tables
// and the report all go through it, so every CSV is written and read the same way.
//
// The format: a header line of column names, then one line per row, fields separated by
// ',', no quoting (no field holds a comma). Numbers are written by csv_number ("%.6g": six
// significant digits, an empty cell for NaN) and read back with std::from_chars
// (locale-independent);
// "", "nan" and "NaN" read as NaN (a missing number). Columns are found by name, never by
// position, so a new column never breaks a reader.
#pragma once
#include <string>
#include <vector>

namespace poslab {

// "%.6g": 2.53586, 0.002, 10000, 1e+06; "" for NaN. The one format of a stored number.
std::string csv_number(double v);

// A CSV file as read: the header, then rows of fields; `lines[r]` is the 1-based line number
// of row r in the file, for error messages.
struct CsvTable {
  std::string path;
  std::vector<std::string> header;
  std::vector<std::vector<std::string>> rows;
  std::vector<int> lines;

  bool has(const std::string& name) const;
  // Column index of `name`; throws "<path>: line 1: expected a column 'name' ..." if absent.
  size_t column(const std::string& name) const;
  const std::string& text(size_t row, const std::string& name) const;
  // A number; "nan", "inf" and "" (missing) are accepted; anything else that is not a number
  // throws "<path>: line N: column 'loss': expected a number, but got 'abc'".
  double number(size_t row, const std::string& name) const;
  // A whole number (the same errors, plus "expected a whole number").
  long integer(size_t row, const std::string& name) const;
};

// Reads a CSV with a header; every name in `columns` must be in the header and every row must
// have as many fields as the header. Blank lines are skipped, a trailing '\r' is dropped.
// Throws naming the file and line, e.g.
//   "results/runs.csv: line 4: expected 12 fields, as in the header, but got 11".
CsvTable read_csv(const std::string& path, const std::vector<std::string>& columns);
// Reads a header-less matrix of numbers; every line must have as many values as the first.
std::vector<std::vector<double>> read_matrix(const std::string& path);

// A CSV assembled in memory: the header from `columns`, then rows of exactly that many cells.
class CsvWriter {
 public:
  explicit CsvWriter(const std::vector<std::string>& columns);
  // Throws "csv: expected 12 cells, one per column (run,pe,...), but got 11".
  void row(const std::vector<std::string>& cells);
  const std::string& text() const { return text_; }
  void write(const std::string& path) const;  // atomically (data/atomic_file.h)

 private:
  std::vector<std::string> columns_;
  std::string text_;
};

}  // namespace poslab
