// tables.cpp — the columns of the study's CSV files, in the order of their header. See tables.h.
#include "study/tables.h"

namespace poslab {

const std::vector<Column<RunRow>>& RunRow::schema() {
  using R = RunRow;
  static const std::vector<Column<R>> kColumns = {{"run", &R::run},
                                                  {"pe", &R::pe},
                                                  {"seed", &R::seed},
                                                  {"objective", &R::objective},
                                                  {"corpus", &R::corpus},
                                                  {"embedding", &R::embedding},
                                                  {"lr", &R::lr},
                                                  {"steps", &R::steps},
                                                  {"tokens", &R::tokens},
                                                  {"train_seconds", &R::train_seconds},
                                                  {"val_loss", &R::val_loss},
                                                  {"last20_gain", &R::last20_gain},
                                                  {"schedule", &R::schedule},
                                                  {"branch_of", &R::branch_of},
                                                  {"machine", &R::machine},
                                                  {"invocation", &R::invocation}};
  return kColumns;
}

const std::vector<Column<EvalRow>>& EvalRow::schema() {
  using R = EvalRow;
  static const std::vector<Column<R>> kColumns = {{"run", &R::run},
                                                  {"pe", &R::pe},
                                                  {"seed", &R::seed},
                                                  {"corpus", &R::corpus},
                                                  {"len", &R::len},
                                                  {"rope_scaling", &R::rope_scaling},
                                                  {"loss", &R::loss},
                                                  {"sliding_loss", &R::sliding_loss},
                                                  {"loss_unseen_1", &R::loss_unseen_1},
                                                  {"loss_unseen_2", &R::loss_unseen_2},
                                                  {"windows", &R::windows},
                                                  {"loss_window32", &R::loss_window32},
                                                  {"loss_se", &R::loss_se}};
  return kColumns;
}

const std::vector<Column<AttributionRow>>& AttributionRow::schema() {
  using R = AttributionRow;
  static const std::vector<Column<R>> kColumns = {{"run", &R::run},
                                                  {"pe", &R::pe},
                                                  {"seed", &R::seed},
                                                  {"len", &R::len},
                                                  {"position_offset", &R::position_offset},
                                                  {"attention_window", &R::attention_window},
                                                  {"logit_scale", &R::logit_scale},
                                                  {"loss", &R::loss},
                                                  {"loss_unseen", &R::loss_unseen}};
  return kColumns;
}

const std::vector<Column<CopyCsvRow>>& CopyCsvRow::schema() {
  using R = CopyCsvRow;
  static const std::vector<Column<R>> kColumns = {{"run", &R::run},
                                                  {"pe", &R::pe},
                                                  {"seed", &R::seed},
                                                  {"distance", &R::distance},
                                                  {"n", &R::n},
                                                  {"loss_planted", &R::loss_planted},
                                                  {"loss_control", &R::loss_control},
                                                  {"gain", &R::gain},
                                                  {"share", &R::share}};
  return kColumns;
}

const std::vector<Column<RopePairRow>>& RopePairRow::schema() {
  using R = RopePairRow;
  static const std::vector<Column<R>> kColumns = {{"run", &R::run},
                                                  {"seed", &R::seed},
                                                  {"pair", &R::pair},
                                                  {"wavelength", &R::wavelength},
                                                  {"loss_unseen", &R::loss_unseen}};
  return kColumns;
}

const std::vector<Column<PositionRow>>& PositionRow::schema() {
  using R = PositionRow;
  static const std::vector<Column<R>> kColumns = {
      {"run", &R::run},     {"pe", &R::pe},
      {"seed", &R::seed},   {"corpus", &R::corpus},
      {"len", &R::len},     {"rope_scaling", &R::rope_scaling},
      {"start", &R::start}, {"end", &R::end},
      {"loss", &R::loss},   {"sliding_loss", &R::sliding_loss}};
  return kColumns;
}

const std::vector<Column<MlmRow>>& MlmRow::schema() {
  using R = MlmRow;
  static const std::vector<Column<R>> kColumns = {{"run", &R::run},
                                                  {"pe", &R::pe},
                                                  {"seed", &R::seed},
                                                  {"val_loss", &R::val_loss},
                                                  {"shuffle_max_diff", &R::shuffle_max_diff}};
  return kColumns;
}

const std::vector<Column<TaskRow>>& TaskRow::schema() {
  using R = TaskRow;
  static const std::vector<Column<R>> kColumns = {{"task", &R::task},
                                                  {"pe", &R::pe},
                                                  {"seed", &R::seed},
                                                  {"train_len", &R::train_len},
                                                  {"test_len", &R::test_len},
                                                  {"k", &R::k},
                                                  {"depth", &R::depth},
                                                  {"n", &R::n},
                                                  {"correct", &R::correct},
                                                  {"accuracy", &R::accuracy},
                                                  {"char_accuracy", &R::char_accuracy},
                                                  {"ci_low", &R::ci_low},
                                                  {"ci_high", &R::ci_high}};
  return kColumns;
}

const std::vector<Column<NgramRow>>& NgramRow::schema() {
  using R = NgramRow;
  static const std::vector<Column<R>> kColumns = {
      {"corpus", &R::corpus}, {"n", &R::n}, {"k", &R::k}, {"val_loss", &R::val_loss}};
  return kColumns;
}

const std::vector<Column<TimingRow>>& TimingRow::schema() {
  using R = TimingRow;
  static const std::vector<Column<R>> kColumns = {{"stage", &R::stage}, {"seconds", &R::seconds}};
  return kColumns;
}

const std::vector<Column<AttentionRow>>& AttentionRow::schema() {
  using R = AttentionRow;
  static const std::vector<Column<R>> kColumns = {
      {"pe", &R::pe},       {"run", &R::run}, {"layer", &R::layer},  {"head", &R::head},
      {"query", &R::query}, {"key", &R::key}, {"weight", &R::weight}};
  return kColumns;
}

const std::vector<Column<AttentionDistanceRow>>& AttentionDistanceRow::schema() {
  using R = AttentionDistanceRow;
  static const std::vector<Column<R>> kColumns = {{"pe", &R::pe},
                                                  {"run", &R::run},
                                                  {"len", &R::len},
                                                  {"layer", &R::layer},
                                                  {"head", &R::head},
                                                  {"windows", &R::windows},
                                                  {"distance", &R::distance},
                                                  {"uniform", &R::uniform}};
  return kColumns;
}

const std::vector<Column<TuningRow>>& TuningRow::schema() {
  using R = TuningRow;
  static const std::vector<Column<R>> kColumns = {
      {"pe", &R::pe},           {"lr", &R::lr},         {"batch", &R::batch},
      {"steps", &R::steps},     {"tokens", &R::tokens}, {"val_loss", &R::val_loss},
      {"seconds", &R::seconds}, {"seed", &R::seed}};
  return kColumns;
}

const std::vector<Column<PasskeyDistanceRow>>& PasskeyDistanceRow::schema() {
  using R = PasskeyDistanceRow;
  static const std::vector<Column<R>> kColumns = {{"pe", &R::pe},
                                                  {"seed", &R::seed},
                                                  {"train_len", &R::train_len},
                                                  {"lo", &R::lo},
                                                  {"hi", &R::hi},
                                                  {"n", &R::n},
                                                  {"correct", &R::correct},
                                                  {"accuracy", &R::accuracy},
                                                  {"ci_low", &R::ci_low},
                                                  {"ci_high", &R::ci_high}};
  return kColumns;
}

const std::vector<Column<RetrainedRow>>& RetrainedRow::schema() {
  using R = RetrainedRow;
  static const std::vector<Column<R>> kColumns = {
      {"run", &R::run}, {"same_log", &R::same_log}, {"max_log_difference", &R::max_log_difference}};
  return kColumns;
}

const std::vector<Column<ScreeningRow>>& ScreeningRow::schema() {
  using R = ScreeningRow;
  static const std::vector<Column<R>> kColumns = {{"pe", &R::pe},
                                                  {"seeds", &R::seeds},
                                                  {"loss_t0", &R::loss_t0},
                                                  {"vs_sliding", &R::vs_sliding},
                                                  {"best_loss_t0_pe", &R::best_loss_t0_pe},
                                                  {"best_loss_t0", &R::best_loss_t0},
                                                  {"best_vs_sliding_pe", &R::best_vs_sliding_pe},
                                                  {"best_vs_sliding", &R::best_vs_sliding},
                                                  {"promoted", &R::promoted}};
  return kColumns;
}

const std::vector<Column<CorpusRow>>& CorpusRow::schema() {
  using R = CorpusRow;
  static const std::vector<Column<R>> kColumns = {
      {"corpus", &R::corpus},       {"source", &R::source},      {"files", &R::files},
      {"bytes", &R::bytes},         {"sha256", &R::sha256},      {"train_files", &R::train_files},
      {"val_files", &R::val_files}, {"val_bytes", &R::val_bytes}};
  return kColumns;
}

const std::vector<Column<ThroughputRow>>& ThroughputRow::schema() {
  using R = ThroughputRow;
  static const std::vector<Column<R>> kColumns = {{"invocation", &R::invocation},
                                                  {"machine", &R::machine},
                                                  {"cores", &R::cores},
                                                  {"jobs", &R::jobs},
                                                  {"one_run", &R::one_run},
                                                  {"runs_at_once", &R::runs_at_once},
                                                  {"load", &R::load}};
  return kColumns;
}

const std::vector<Column<LocRow>>& LocRow::schema() {
  using R = LocRow;
  static const std::vector<Column<R>> kColumns = {
      {"pe", &R::pe}, {"file", &R::file}, {"lines", &R::lines}, {"params", &R::params}};
  return kColumns;
}

}  // namespace poslab
