// log.cpp — see log.h.
#include "train/log.h"

#include <cmath>

#include "data/csv.h"

namespace poslab {

const std::vector<std::string>& log_columns() {
  static const std::vector<std::string> kColumns = {
      "step", "lr", "train_loss", "val_loss", "grad_norm", "tokens_per_s", "eval_seconds"};
  return kColumns;
}

std::string log_text(const std::vector<LogRow>& rows) {
  CsvWriter w(log_columns());
  for (const LogRow& r : rows)
    w.row({std::to_string(r.step), csv_number(r.lr), csv_number(r.train_loss),
           csv_number(r.val_loss), csv_number(r.grad_norm),
           std::isfinite(r.tokens_per_s) ? std::to_string(std::llround(r.tokens_per_s)) : "nan",
           csv_number(r.eval_seconds)});
  return w.text();
}

std::vector<LogRow> read_log(const std::string& path) {
  std::vector<std::string> required = log_columns();
  required.pop_back();  // eval_seconds: absent from logs written before it existed
  CsvTable t = read_csv(path, required);
  std::vector<LogRow> rows;
  for (size_t i = 0; i < t.rows.size(); ++i)
    rows.push_back({t.integer(i, "step"), t.number(i, "lr"), t.number(i, "train_loss"),
                    t.number(i, "val_loss"), t.number(i, "grad_norm"), t.number(i, "tokens_per_s"),
                    t.has("eval_seconds") ? t.number(i, "eval_seconds") : NAN});
  return rows;
}

}  // namespace poslab
