// tables.cpp — the columns of the study's CSV files, in the order of their header. See tables.h.
#include "train/study/tables.h"

namespace poslab {

const std::vector<Column<RunRow>>& RunRow::schema() {
  using R = RunRow;
  static const std::vector<Column<R>> kColumns = {{"run", &R::run},
                                                  {"pe", &R::pe},
                                                  {"seed", &R::seed},
                                                  {"steps", &R::steps},
                                                  {"theta", &R::theta},
                                                  {"causal", &R::causal},
                                                  {"objective", &R::objective},
                                                  {"params", &R::params},
                                                  {"train_loss", &R::train_loss},
                                                  {"val_loss", &R::val_loss},
                                                  {"tokens_per_s", &R::tokens_per_s},
                                                  {"train_seconds", &R::train_seconds}};
  return kColumns;
}

const std::vector<Column<EvalRow>>& EvalRow::schema() {
  using R = EvalRow;
  static const std::vector<Column<R>> kColumns = {{"run", &R::run},
                                                  {"pe", &R::pe},
                                                  {"seed", &R::seed},
                                                  {"scaling", &R::scaling},
                                                  {"len", &R::len},
                                                  {"loss", &R::loss},
                                                  {"ppl", &R::ppl},
                                                  {"last_quarter_loss", &R::last_quarter_loss},
                                                  {"last_quarter_ppl", &R::last_quarter_ppl},
                                                  {"tokens", &R::tokens},
                                                  {"windows", &R::windows}};
  return kColumns;
}

const std::vector<Column<PositionRow>>& PositionRow::schema() {
  using R = PositionRow;
  static const std::vector<Column<R>> kColumns = {
      {"run", &R::run},     {"pe", &R::pe},   {"scaling", &R::scaling}, {"len", &R::len},
      {"start", &R::start}, {"end", &R::end}, {"loss", &R::loss}};
  return kColumns;
}

const std::vector<Column<MlmRow>>& MlmRow::schema() {
  using R = MlmRow;
  static const std::vector<Column<R>> kColumns = {
      {"pe", &R::pe}, {"val_loss", &R::val_loss}, {"shuffle_max_diff", &R::shuffle_max_diff}};
  return kColumns;
}

const std::vector<Column<TaskRow>>& TaskRow::schema() {
  using R = TaskRow;
  static const std::vector<Column<R>> kColumns = {{"task", &R::task},
                                                  {"pe", &R::pe},
                                                  {"train_len", &R::train_len},
                                                  {"test_len", &R::test_len},
                                                  {"accuracy", &R::accuracy}};
  return kColumns;
}

const std::vector<Column<LocRow>>& LocRow::schema() {
  using R = LocRow;
  static const std::vector<Column<R>> kColumns = {
      {"pe", &R::pe}, {"file", &R::file}, {"lines", &R::lines}, {"params", &R::params}};
  return kColumns;
}

}  // namespace poslab
