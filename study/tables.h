// tables.h — the study's CSV files (beside REPORT.md): one row type per file, its columns
// named once here. The runner writes them, the report reads them, both through these types
// (and data/csv.h), so a column is never looked up by position.
//
//   runs.csv           one row per trained model
//   extrapolation.csv  one row per (run, scaling, evaluation length)
//   position_loss.csv  one row per (run, scaling, length, position bucket)
//   mlm.csv            one row per masked-LM model: loss on masked tokens, shuffle check
//   tasks.csv          one row per (task, scheme, seed, test length, depth)
//   attribution.csv    one row per (main run, intervention): why a scheme fails past T0
//   copy.csv           one row per (main run, distance): copy at a distance
//   rope_pairs.csv     one row per (RoPE main run, rotation pair): frequency surgery
//   ngram.csv          one row per (corpus, n): the add-k n-gram reference lines
//   timing.csv         one row per stage that computed something
//   attention.csv      one row per (scheme, layer, head, query, key)
//   attention_distance.csv  one row per (scheme, length, layer, head): how far back it attends
//   tuning.csv         one row per short tuning run (learning rate x batch size x seed)
//   screening.csv      one row per screened scheme: its B/4 scores against the main schemes'
//   passkey_distance.csv  one row per (scheme, seed, distance bucket): passkey by distance
//   retrained.csv      one row per run made earlier whose model was made again here
//   loc.csv            one row per scheme: its posenc/ files, their lines, model parameters
//   corpus.csv         one row: the study corpus's files, bytes, SHA-256 and source packages
//   throughput.csv     one row per invocation: the training tokens/s it measured first
// runs, extrapolation, tasks, ngram and timing follow the study's published column lists
// (docs/formats.md); other programs read them. Numbers are written with csv_number; a
// missing one (not applicable) is an empty cell and reads back as NaN.
// Each row type lists its columns once, in schema(): a name and the field it holds. Writing,
// reading and the header all follow that one list.
#pragma once
#include <cmath>
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

// runs.csv: one row per trained model. val_loss: the loss at T0 over every window of the val
// split (for mlm runs: the masked-token loss; for task runs: the trainer's last val loss on
// answer tokens); last20_gain: that loss at 80% of the steps minus at the end.
struct RunRow {
  std::string run, pe;
  long seed = 0;
  std::string objective, corpus, embedding;  // lm | mlm | answer; pystdlib | task_*
  long steps = 0, tokens = 0;                // tokens trained on: steps x batch x ctx
  double train_seconds = 0, val_loss = 0, last20_gain = 0;
  double lr = 0;          // the peak learning rate it trained with (last here, so that older brace
                          // initialisers stay valid; in SPEC order in the file: schema())
  std::string schedule;   // cosine | wsd (optimizer.h)
  std::string branch_of;  // a cooldown branch: the main run it starts from; "" otherwise
  // Where and when it was made (timing.h: machine_description, study_invocation); "" when not
  // recorded.
  std::string machine, invocation;
  static const std::vector<Column<RunRow>>& schema();
};

// extrapolation.csv: one row per (run, RoPE scaling, evaluation length). loss: mean over every
// target of every val window of length len; sliding_loss: the same targets scored by a window
// of T0 moved by T0/4. rope_scaling: none|linear|ntk|dynamic|yarn for rope runs, "" otherwise.
// loss_unseen_1, loss_unseen_2: the loss on the unseen positions [T0, 4T0) and [8T0, 16T0) of
// the same windows, where the window reaches the whole range (NaN otherwise).
struct EvalRow {
  std::string run, pe;
  long seed = 0;
  std::string corpus;
  long len = 0;
  std::string rope_scaling;
  double loss = 0, sliding_loss = 0;
  long windows = 0;
  double loss_unseen_1 = NAN, loss_unseen_2 = NAN;
  // At len = T0 on a main run: the loss over the same windows with attention limited to the
  // last 32 tokens (context use inside T0); NaN elsewhere. loss_se: the standard error of
  // `loss` over its windows (EvalResult::loss_se).
  double loss_window32 = NAN, loss_se = NAN;
  static const std::vector<Column<EvalRow>>& schema();
};

// attribution.csv (SPEC 7.4): one main run evaluated with one intervention (nn/attention.h)
// on the same val text: windows of len (16 T0: plain, attention_window = T0, logit_scale log)
// or of T0 at position_offset 0, T0, 4T0, 15T0. loss over every target; loss_unseen over the
// targets at unseen positions (>= T0 from the window's start, or all of a window at an offset
// >= T0; NaN for the offset-0 reference). attention_window 0: none.
struct AttributionRow {
  std::string run, pe;
  long seed = 0, len = 0, position_offset = 0, attention_window = 0;
  std::string logit_scale;  // none | log
  double loss = 0, loss_unseen = NAN;
  static const std::vector<Column<AttributionRow>>& schema();
};

// copy.csv (copy v2, SPEC 7 v5 part 5): one main run, one gap d between the two copies
// (copy_probe.h): n examples, the mean loss per character of the second copy's last m - 1
// characters, with the first copy planted and with its characters shuffled (control);
// gain = loss_control - loss_planted, share = gain / loss_control.
struct CopyCsvRow {
  std::string run, pe;
  long seed = 0, distance = 0, n = 0;
  double loss_planted = 0, loss_control = 0, gain = 0, share = 0;
  static const std::vector<Column<CopyCsvRow>>& schema();
};

// rope_pairs.csv (SPEC 7.6): one RoPE main run at 16 T0 with one rotation pair interpolated
// alone (its angle divided by s = L/T0): the loss on the unseen positions [T0, L). pair -1 is
// the plain model (nothing interpolated; wavelength NaN). wavelength = 2 pi / freq_pair, in
// tokens.
struct RopePairRow {
  std::string run;
  long seed = 0, pair = 0;
  double wavelength = NAN, loss_unseen = 0;
  static const std::vector<Column<RopePairRow>>& schema();
};

// position_loss.csv: the rows of extrapolation.csv split into position buckets [start, end).
struct PositionRow {
  std::string run, pe;
  long seed = 0;
  std::string corpus;
  long len = 0;
  std::string rope_scaling;
  long start = 0, end = 0;
  double loss = 0, sliding_loss = 0;
  static const std::vector<Column<PositionRow>>& schema();
};

// mlm.csv: one row per masked-LM model: loss on masked tokens, the shuffle check.
struct MlmRow {
  std::string run, pe;
  long seed = 0;
  double val_loss = 0, shuffle_max_diff = 0;
  static const std::vector<Column<MlmRow>>& schema();
};

// tasks.csv: one row per (task, scheme, seed, test length, depth): n fresh examples, `correct`
// of them answered exactly; accuracy = correct / n with its Wilson 95% interval; char_accuracy
// the share of answer characters right. Lengths in the task's unit (tasks.h): unscramble
// words, reverse letters, passkey characters; train_len the longest trained on. k: the word
// count of unscramble (= test_len), depth: the needle's place in the filler (0 = start, 1 =
// end) for passkey; NaN ("") otherwise. k and char_accuracy come last in the struct (so older
// initialisers stay valid), in SPEC order in the file (schema()).
struct TaskRow {
  std::string task, pe;
  long seed = 0, train_len = 0, test_len = 0;
  double depth = 0;
  long n = 0, correct = 0;
  double accuracy = 0, ci_low = 0, ci_high = 0;
  double k = NAN, char_accuracy = NAN;
  static const std::vector<Column<TaskRow>>& schema();
};

// retrained.csv: a run made earlier (its small files kept, its model not) whose model was made
// again for a measurement the plan added since (runner.h: retrain.json). same_log: 1 when the
// new training log's losses equal the old ones row by row (the same model), else 0.
struct RetrainedRow {
  std::string run;
  long same_log = 0;
  double max_log_difference = NAN;
  static const std::vector<Column<RetrainedRow>>& schema();
};

// passkey_distance.csv: one row per (scheme, seed, distance bucket [lo, hi)): the passkey
// examples of every test cell of that run whose key sits lo <= d < hi characters before the
// question (tasks.h: distance_bucket), n of them, `correct` answered exactly, with the Wilson
// 95% interval. train_len: the longest example trained on (characters).
struct PasskeyDistanceRow {
  std::string pe;
  long seed = 0, train_len = 0, lo = 0, hi = 0, n = 0, correct = 0;
  double accuracy = 0, ci_low = 0, ci_high = 0;
  static const std::vector<Column<PasskeyDistanceRow>>& schema();
};

// ngram.csv: add-k smoothed character n-gram models fitted on a corpus's train split.
struct NgramRow {
  std::string corpus;
  long n = 0;
  double k = 0, val_loss = 0;
  static const std::vector<Column<NgramRow>>& schema();
};

// timing.csv: every stage that computed something, so the seconds add up to the study's
// compute time (a stage reused from an earlier invocation keeps the time it took then).
struct TimingRow {
  std::string stage;  // "train <run>", "eval <run>", "tasks <run>", "ngram <corpus>", ...
  double seconds = 0;
  static const std::vector<Column<TimingRow>>& schema();
};

// attention.csv: attention weights of one model per scheme on one val window, every layer and
// head (causal: key <= query).
struct AttentionRow {
  std::string pe, run;
  long layer = 0, head = 0, query = 0, key = 0;
  double weight = 0;
  static const std::vector<Column<AttentionRow>>& schema();
};

// attention_distance.csv: how far back each head of the seed-1 model of each scheme attends,
// over the first `windows` val windows of length len (T0 and 4 T0): distance = the mean over
// windows and queries i of sum_j p_ij (i - j); uniform = the same for equal weights on every
// key j <= i, (len - 1) / 4.
struct AttentionDistanceRow {
  std::string pe, run;
  long len = 0, layer = 0, head = 0, windows = 0;
  double distance = 0, uniform = 0;
  static const std::vector<Column<AttentionDistanceRow>>& schema();
};

// tuning.csv: the short runs that chose the learning rate and batch size (tune.h). seed: 1,
// or 2 for the edge check of a kept scheme; an older file without the column reads seed 1.
struct TuningRow {
  std::string pe;
  double lr = 0;
  long batch = 0, steps = 0, tokens = 0;
  double val_loss = 0, seconds = 0;
  long seed = 1;
  static const std::vector<Column<TuningRow>>& schema();
};

// screening.csv (screening.h): one row per screened scheme, written once when its promotion is
// decided. loss_t0: the mean over seeds of its B/4 branch's loss at T0; vs_sliding: the same
// mean of the loss minus the sliding-window loss on positions [T0, 16 T0) of the longest
// windows. best_*: the lowest main scheme's mean over the same seeds, and which scheme it is.
// promoted: "yes" when it beats every main scheme on either measure, else "no".
struct ScreeningRow {
  std::string pe;
  long seeds = 0;
  double loss_t0 = NAN, vs_sliding = NAN;
  std::string best_loss_t0_pe;
  double best_loss_t0 = NAN;
  std::string best_vs_sliding_pe;
  double best_vs_sliding = NAN;
  std::string promoted;
  static const std::vector<Column<ScreeningRow>>& schema();
};

// corpus.csv: what the study corpus was prepared from (data/corpus_info.h: bytes of the prepared
// text, val_bytes of the val files as installed), so that a result
// made on another Python or Debian release is told apart.
struct CorpusRow {
  std::string corpus, source;
  long files = 0, bytes = 0;
  std::string sha256;
  long train_files = 0, val_files = 0, val_bytes = 0;
  static const std::vector<Column<CorpusRow>>& schema();
};
// throughput.csv: what each invocation of the study measured before it made its runs
// (schedule.h: measure_jobs): training tokens/s of one run on every core, and of one run per
// core, summed; the faster way is what it used (jobs).
struct ThroughputRow {
  std::string invocation, machine;
  long cores = 0, jobs = 0;
  double one_run = 0, runs_at_once = 0;
  double load = NAN;  // the 1-minute load average just before (/proc/loadavg): was it idle?
  static const std::vector<Column<ThroughputRow>>& schema();
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
