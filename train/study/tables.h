// tables.h — the study's CSV files (beside REPORT.md): one row type per file, its columns
// named once here. The runner writes them, the report reads them, both through these types
// (and data/csv.h), so a column is never looked up by position.
//
//   runs.csv           one row per trained model
//   extrapolation.csv  one row per (run, scaling, evaluation length)
//   position_loss.csv  one row per (run, scaling, length, position bucket)
//   mlm.csv            one row per masked-LM model: loss on masked tokens, shuffle check
//   tasks.csv          one row per (task, scheme, test length)
//   loc.csv            one row per scheme: its posenc/ files, their lines, model parameters
// Numbers are written with csv_number; a missing one is "nan" and reads back as NaN.
#pragma once
#include <string>
#include <vector>

#include "data/csv.h"

namespace poslab {

struct RunRow {
  std::string run, pe, causal, objective;  // causal: "true" | "false"; objective: lm | mlm
  long seed = 0, steps = 0, params = 0;
  double theta = 0, train_loss = 0, val_loss = 0, tokens_per_s = 0, train_seconds = 0;

  static const std::vector<std::string>& columns();
  std::vector<std::string> cells() const;
  static RunRow read(const CsvTable& t, size_t i);
};

struct EvalRow {
  std::string run, pe, scaling;
  long seed = 0, len = 0, tokens = 0, windows = 0;
  double loss = 0, ppl = 0, last_quarter_loss = 0, last_quarter_ppl = 0;

  static const std::vector<std::string>& columns();
  std::vector<std::string> cells() const;
  static EvalRow read(const CsvTable& t, size_t i);
};

struct PositionRow {
  std::string run, pe, scaling;
  long len = 0, start = 0, end = 0;  // positions [start, end) of a window of length len
  double loss = 0;

  static const std::vector<std::string>& columns();
  std::vector<std::string> cells() const;
  static PositionRow read(const CsvTable& t, size_t i);
};

struct MlmRow {
  std::string pe;
  double val_loss = 0, shuffle_max_diff = 0;

  static const std::vector<std::string>& columns();
  std::vector<std::string> cells() const;
  static MlmRow read(const CsvTable& t, size_t i);
};

struct TaskRow {
  std::string task, pe;  // task: "reverse", "reverse per character", "passkey", ...
  long train_len = 0, test_len = 0;
  double accuracy = 0;

  static const std::vector<std::string>& columns();
  std::vector<std::string> cells() const;
  static TaskRow read(const CsvTable& t, size_t i);
};

struct LocRow {
  std::string pe, file;  // file: "posenc/rope.h+posenc/rope.cpp" (joined with '+')
  long lines = 0, params = 0;

  static const std::vector<std::string>& columns();
  std::vector<std::string> cells() const;
  static LocRow read(const CsvTable& t, size_t i);
};

// A whole file of rows, written atomically / read by column name.
template <class Row>
void write_rows(const std::string& path, const std::vector<Row>& rows) {
  CsvWriter w(Row::columns());
  for (const Row& r : rows) w.row(r.cells());
  w.write(path);
}
template <class Row>
std::vector<Row> read_rows(const std::string& path) {
  CsvTable t = read_csv(path, Row::columns());
  std::vector<Row> rows;
  for (size_t i = 0; i < t.rows.size(); ++i) rows.push_back(Row::read(t, i));
  return rows;
}

}  // namespace poslab
