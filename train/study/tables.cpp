// tables.cpp — the columns of the study's CSV files and the conversion of a row to and from
// its cells. See tables.h.
#include "train/study/tables.h"

namespace poslab {
namespace {

std::string whole(long v) {
  return std::to_string(v);
}

}  // namespace

const std::vector<std::string>& RunRow::columns() {
  static const std::vector<std::string> kColumns = {
      "run",       "pe",     "seed",       "steps",    "theta",        "causal",
      "objective", "params", "train_loss", "val_loss", "tokens_per_s", "train_seconds"};
  return kColumns;
}
std::vector<std::string> RunRow::cells() const {
  return {run,
          pe,
          whole(seed),
          whole(steps),
          csv_number(theta),
          causal,
          objective,
          whole(params),
          csv_number(train_loss),
          csv_number(val_loss),
          csv_number(tokens_per_s),
          csv_number(train_seconds)};
}
RunRow RunRow::read(const CsvTable& t, size_t i) {
  return {t.text(i, "run"),
          t.text(i, "pe"),
          t.text(i, "causal"),
          t.text(i, "objective"),
          t.integer(i, "seed"),
          t.integer(i, "steps"),
          t.integer(i, "params"),
          t.number(i, "theta"),
          t.number(i, "train_loss"),
          t.number(i, "val_loss"),
          t.number(i, "tokens_per_s"),
          t.number(i, "train_seconds")};
}

const std::vector<std::string>& EvalRow::columns() {
  static const std::vector<std::string> kColumns = {"run",
                                                    "pe",
                                                    "seed",
                                                    "scaling",
                                                    "len",
                                                    "loss",
                                                    "ppl",
                                                    "last_quarter_loss",
                                                    "last_quarter_ppl",
                                                    "tokens",
                                                    "windows"};
  return kColumns;
}
std::vector<std::string> EvalRow::cells() const {
  return {run,
          pe,
          whole(seed),
          scaling,
          whole(len),
          csv_number(loss),
          csv_number(ppl),
          csv_number(last_quarter_loss),
          csv_number(last_quarter_ppl),
          whole(tokens),
          whole(windows)};
}
EvalRow EvalRow::read(const CsvTable& t, size_t i) {
  return {t.text(i, "run"),
          t.text(i, "pe"),
          t.text(i, "scaling"),
          t.integer(i, "seed"),
          t.integer(i, "len"),
          t.integer(i, "tokens"),
          t.integer(i, "windows"),
          t.number(i, "loss"),
          t.number(i, "ppl"),
          t.number(i, "last_quarter_loss"),
          t.number(i, "last_quarter_ppl")};
}

const std::vector<std::string>& PositionRow::columns() {
  static const std::vector<std::string> kColumns = {"run",   "pe",  "scaling", "len",
                                                    "start", "end", "loss"};
  return kColumns;
}
std::vector<std::string> PositionRow::cells() const {
  return {run, pe, scaling, whole(len), whole(start), whole(end), csv_number(loss)};
}
PositionRow PositionRow::read(const CsvTable& t, size_t i) {
  return {t.text(i, "run"),      t.text(i, "pe"),     t.text(i, "scaling"), t.integer(i, "len"),
          t.integer(i, "start"), t.integer(i, "end"), t.number(i, "loss")};
}

const std::vector<std::string>& MlmRow::columns() {
  static const std::vector<std::string> kColumns = {"pe", "val_loss", "shuffle_max_diff"};
  return kColumns;
}
std::vector<std::string> MlmRow::cells() const {
  return {pe, csv_number(val_loss), csv_number(shuffle_max_diff)};
}
MlmRow MlmRow::read(const CsvTable& t, size_t i) {
  return {t.text(i, "pe"), t.number(i, "val_loss"), t.number(i, "shuffle_max_diff")};
}

const std::vector<std::string>& TaskRow::columns() {
  static const std::vector<std::string> kColumns = {"task", "pe", "train_len", "test_len",
                                                    "accuracy"};
  return kColumns;
}
std::vector<std::string> TaskRow::cells() const {
  return {task, pe, whole(train_len), whole(test_len), csv_number(accuracy)};
}
TaskRow TaskRow::read(const CsvTable& t, size_t i) {
  return {t.text(i, "task"), t.text(i, "pe"), t.integer(i, "train_len"), t.integer(i, "test_len"),
          t.number(i, "accuracy")};
}

const std::vector<std::string>& LocRow::columns() {
  static const std::vector<std::string> kColumns = {"pe", "file", "lines", "params"};
  return kColumns;
}
std::vector<std::string> LocRow::cells() const {
  return {pe, file, whole(lines), whole(params)};
}
LocRow LocRow::read(const CsvTable& t, size_t i) {
  return {t.text(i, "pe"), t.text(i, "file"), t.integer(i, "lines"), t.integer(i, "params")};
}

}  // namespace poslab
