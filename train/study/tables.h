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
// Each row type lists its columns once, in schema(): a name and the field it holds. Writing,
// reading and the header all follow that one list.
#pragma once
#include <string>
#include <variant>
#include <vector>

#include "data/csv.h"

namespace poslab {

// One column: its name in the header and the field of Row it holds.
template <class Row>
struct Column {
  const char* name;
  std::variant<std::string Row::*, long Row::*, double Row::*> field;
};

struct RunRow {
  std::string run, pe, causal, objective;  // causal: "true" | "false"; objective: lm | mlm
  long seed = 0, steps = 0, params = 0;
  double theta = 0, train_loss = 0, val_loss = 0, tokens_per_s = 0, train_seconds = 0;
  static const std::vector<Column<RunRow>>& schema();
};

struct EvalRow {
  std::string run, pe, scaling;
  long seed = 0, len = 0, tokens = 0, windows = 0;
  double loss = 0, ppl = 0, last_quarter_loss = 0, last_quarter_ppl = 0;
  static const std::vector<Column<EvalRow>>& schema();
};

struct PositionRow {
  std::string run, pe, scaling;
  long len = 0, start = 0, end = 0;  // positions [start, end) of a window of length len
  double loss = 0;
  static const std::vector<Column<PositionRow>>& schema();
};

struct MlmRow {
  std::string pe;
  double val_loss = 0, shuffle_max_diff = 0;
  static const std::vector<Column<MlmRow>>& schema();
};

struct TaskRow {
  std::string task, pe;  // task: "reverse", "reverse per character", "passkey", ...
  long train_len = 0, test_len = 0;
  double accuracy = 0;
  static const std::vector<Column<TaskRow>>& schema();
};

struct LocRow {
  std::string pe, file;  // file: "posenc/rope.h+posenc/rope.cpp" (joined with '+')
  long lines = 0, params = 0;
  static const std::vector<Column<LocRow>>& schema();
};

template <class Row>
std::vector<std::string> columns_of() {
  std::vector<std::string> names;
  for (const Column<Row>& c : Row::schema()) names.push_back(c.name);
  return names;
}

// A row as cells: text as it is, whole numbers in decimal, numbers by csv_number.
template <class Row>
std::vector<std::string> cells_of(const Row& r) {
  struct Cell {
    const Row& r;
    std::string operator()(std::string Row::*f) const { return r.*f; }
    std::string operator()(long Row::*f) const { return std::to_string(r.*f); }
    std::string operator()(double Row::*f) const { return csv_number(r.*f); }
  };
  std::vector<std::string> cells;
  for (const Column<Row>& c : Row::schema()) cells.push_back(std::visit(Cell{r}, c.field));
  return cells;
}

// Row i of a table read with read_csv, every field by its column's name.
template <class Row>
Row row_of(const CsvTable& t, size_t i) {
  Row r;
  for (const Column<Row>& c : Row::schema()) {
    if (auto f = std::get_if<std::string Row::*>(&c.field)) r.** f = t.text(i, c.name);
    if (auto f = std::get_if<long Row::*>(&c.field)) r.** f = t.integer(i, c.name);
    if (auto f = std::get_if<double Row::*>(&c.field)) r.** f = t.number(i, c.name);
  }
  return r;
}

// A whole file of rows, written atomically / read by column name.
template <class Row>
void write_rows(const std::string& path, const std::vector<Row>& rows) {
  CsvWriter w(columns_of<Row>());
  for (const Row& r : rows) w.row(cells_of(r));
  w.write(path);
}
template <class Row>
std::vector<Row> read_rows(const std::string& path) {
  CsvTable t = read_csv(path, columns_of<Row>());
  std::vector<Row> rows;
  for (size_t i = 0; i < t.rows.size(); ++i) rows.push_back(row_of<Row>(t, i));
  return rows;
}

}  // namespace poslab
