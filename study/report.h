// report.h — turns the study's raw results (a folder of CSV files) into REPORT.md + SVG plots.
//
// `poslab experiments` (experiments.h) trains and evaluates every model of the study and
// leaves its raw numbers in one folder. write_report reads that folder and writes, next to
// the CSVs,
//   REPORT.md          the headline table (SPEC 7.10), then the detailed tables and figures,
//                      each with a caption saying what was measured and how; which parts of the
//                      plan have no rows (what was cut); the list of files. No prose is
//                      generated: a caption never says what a number shows.
//   plots/*.svg        figures drawn with plot.h; those the Chinese guide shows also as
//                      plots/<name>.zh.svg, the same figure with Chinese words (save_bilingual)
// Nothing in the report is hard-coded: every number comes from the CSVs.
//
// Input files (tables.h has their columns; read by name through data/csv.h):
//   runs.csv, extrapolation.csv, position_loss.csv, attribution.csv, copy.csv,
//   rope_pairs.csv, mlm.csv, tasks.csv, ngram.csv, timing.csv, attention.csv,
//   attention_distance.csv, tuning.csv, loc.csv, corpus.csv, throughput.csv, screening.csv,
//   passkey_distance.csv, retrained.csv, and curves/<run>.csv
//   (each run's log.csv, train/log.h). Every file is optional: a missing one (or one that holds
//   only its header) turns its sections into "not run".
//
// Which run is which is read from its name, as the study's plan (plan.cpp) writes them:
//   main runs       <pe>_s<seed>                   (budget B)
//   budget curve    <pe>_b4_s<seed>, <pe>_b2_s<seed>  (cooldown branches of the main runs at
//                                                   B/4, every length, and B/2, T0 only)
//   breaks and      rope_theta10_s<seed>, rope_theta1e6_s<seed>, mlm_<pe>_s<seed>,
//   ablations       <pe>_<embedding>_s<seed> (the swapped embedding), t5_dist<T0>_s<seed>:
//                   all at B/4
//   fine-tunes      rope_pi<s>_s<seed> (linear interpolation), rope_yarn<s>_s<seed> (yarn),
//                   alibi_ft<s>_s<seed> (ALiBi trained on at s T0, the control)
//   screening       <pe>_screen_s<seed> (the constant phase of a screened scheme) and its
//                   <pe>_b4_s<seed>; screening.csv says which were promoted
// Task results are rows of tasks.csv (task, pe, seed), not runs.
//
// Statistics (stats.h): a number over seeds is the mean of the losses (nats); with 3 or more
// seeds it carries its 95% Student t interval, with 2 seeds the two values are printed, with
// 1 seed the value alone. A perplexity is exp of the mean loss, its interval exp of the ends,
// the lower end clamped at 1 (marked *).
//
// The implementation is split by idea:
//   report_data.cpp            loading the folder, the run groups, numbers per seed
//   report_format.cpp          numbers as text, the markdown builder (report_markdown.h)
//   report.cpp                 write_report, setup, what was cut, raw data
//   report_headline.cpp        the headline table, the budget curve (converged or not)
//   report_convergence.cpp     budget curve, learning-rate grids, cost, every run
//   report_extrapolation.cpp   extrapolation, sliding window, RoPE scaling
//   report_probes.cpp          attribution, copy at a distance, RoPE pairs (tables, figures)
//   report_ablations.cpp       the break experiments (no PE, masked LM, theta, 4096 unscaled),
//                              embedding, T5 distance, the figures' section
//   report_tasks.cpp           unscramble, reverse, passkey
//   report_plots.cpp           figures from the results: lengths, positions, curves
//   report_figures.cpp         RoPE from the formula, attention, tasks
#pragma once
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "plot/plot.h"
#include "study/stats.h"
#include "study/tables.h"
#include "train/log.h"

namespace poslab {

struct ReportInfo {
  std::string title;    // first heading of REPORT.md
  std::string command;  // the command line that produced the results
  std::string date;
  std::string machine;  // CPU / GPU, in words
  bool quick = false;   // the reduced study (`make experiments-quick`)
  double total_seconds = 0;
};

// Reads <dir>/*.csv (see above), writes <dir>/REPORT.md (atomically) and <dir>/plots/*.svg.
// Throws std::runtime_error naming the file and line for a malformed CSV, e.g.
//   "results/runs.csv: line 4: expected 11 fields, as in the header, but got 10".
void write_report(const std::string& dir, const ReportInfo& info);

// ---------------------------------------------------------------------------------------
// Internals shared by the report_*.cpp files (and the tests). Not a stable API.
namespace report_detail {

// A part of the study, by the names of its runs: prefix + pe + suffix + "_s" + seed.
struct Group {
  std::string prefix, suffix;
  std::string name(const std::string& pe, long seed) const {
    return prefix + pe + suffix + "_s" + std::to_string(seed);
  }
};
inline const Group kMain{"", ""}, kTheta10{"", "_theta10"}, kTheta1e6{"", "_theta1e6"},
    kMlm{"mlm_", ""}, kB4{"", "_b4"}, kB2{"", "_b2"};
// The swapped-embedding ablation of scheme pe: learned_scaled, the others <pe>_gpt2.
Group swapped_group(const std::string& pe);
// The embedding of pe's main runs (learned: gpt2, the others: scaled) and of its swap.
std::string canonical_embedding(const std::string& pe);
std::string swapped_embedding(const std::string& pe);

// Everything in the results folder. A file that is absent (or header only) is std::nullopt.
struct Study {
  std::string dir;
  std::optional<std::vector<RunRow>> runs;
  std::map<std::string, std::vector<LogRow>> curves;  // by run name
  std::optional<std::vector<EvalRow>> eval;           // extrapolation.csv
  std::optional<std::vector<PositionRow>> positions;
  std::optional<std::vector<AttributionRow>> attribution;
  std::optional<std::vector<CopyCsvRow>> copy;
  std::optional<std::vector<RopePairRow>> rope_pairs;
  std::optional<std::vector<MlmRow>> mlm;
  std::optional<std::vector<TaskRow>> tasks;
  std::optional<std::vector<NgramRow>> ngram;
  std::optional<std::vector<TimingRow>> timing;
  std::optional<std::vector<AttentionRow>> attention;
  std::optional<std::vector<AttentionDistanceRow>> attention_distance;
  std::optional<std::vector<TuningRow>> tuning;
  std::optional<std::vector<LocRow>> loc;
  std::optional<std::vector<ScreeningRow>> screening;
  std::optional<std::vector<PasskeyDistanceRow>> passkey_distance;
  std::optional<std::vector<RetrainedRow>> retrained;
  std::optional<std::vector<CorpusRow>> corpus;
  std::optional<std::vector<ThroughputRow>> throughput;

  std::vector<std::string> pes;  // schemes with main runs (runs.csv or extrapolation.csv)
  std::vector<long> lengths;     // evaluation lengths of the main runs, ascending
  // The training length T0: the shortest evaluated length (the study evaluates from T0 up).
  long train_len() const { return lengths.empty() ? 0 : lengths.front(); }
};
Study load_study(const std::string& dir);

// One number per seed (seed -> value; seeds without it are left out).
using PerSeed = std::map<long, double>;

// Schemes in the study's order (none, learned, sinusoidal, rope, alibi, t5, kerple, fire, prope,
// rope_rand, rope_nope4, xpos, learned_rand, prope25), then the rest.
std::vector<std::string> order_pes(std::vector<std::string> pes);
// The rows of runs.csv of group g and scheme pe, ascending seed.
std::vector<const RunRow*> group_runs(const Study& s, const Group& g, const std::string& pe);
// The schemes of group g in runs.csv or extrapolation.csv, in the study's order.
std::vector<std::string> group_pes(const Study& s, const Group& g);
// The seeds of group g and scheme pe that extrapolation.csv or runs.csv holds.
std::vector<long> group_seeds(const Study& s, const Group& g, const std::string& pe);

// What an extrapolation row measures: the loss, the sliding-window loss on the same targets,
// or their difference (loss - sliding_loss; < 0: the long window helps).
enum class Measure { loss, sliding, gap };
// extrapolation.csv at length L: group g, scheme pe, RoPE scaling ("none" also matches the
// empty cell of a scheme that cannot be scaled).
PerSeed eval_per_seed(const Study& s, const Group& g, const std::string& pe, long L,
                      const std::string& scaling = "none", Measure m = Measure::loss);
// position_loss.csv at length L with a RoPE scaling: bucket start -> the measure per seed;
// the bucket ends in `ends`.
std::map<long, PerSeed> position_losses(const Study& s, const Group& g, const std::string& pe,
                                        long L, std::map<long, long>* ends = nullptr,
                                        const std::string& scaling = "none",
                                        Measure m = Measure::loss);
// The corpus of the main runs (runs.csv), else of ngram.csv's first row; "" without either.
std::string main_corpus(const Study& s);
// runs.csv: val_loss per seed.
PerSeed val_loss_per_seed(const Study& s, const Group& g, const std::string& pe);
// ngram.csv: the val loss of the n-gram of `corpus` (NaN if absent).
double ngram_loss(const Study& s, const std::string& corpus, long n);
// RoPE scalings in extrapolation.csv: none first, then linear, ntk, dynamic, yarn, the rest.
std::vector<std::string> rope_scalings(const Study& s);
// Lengths evaluated for group g (ascending).
std::vector<long> group_lengths(const Study& s, const Group& g);
// The 95% interval of per-seed values.
Interval interval_of(const PerSeed& v);
// The budget curve: val loss at T0 (runs.csv) of the B/4 and B/2 cooldown branches
// <pe>_b4_s<seed>, <pe>_b2_s<seed> and the main runs <pe>_s<seed>, on the seeds that hold all
// three; b4, b2, b their means (NaN where none). converged: the last doubling B/2 -> B bought
// at most kConvergedNats on average (NaN-safe: false when either end is missing).
struct Budget {
  PerSeed at_b4, at_b2, at_b;
  double b4 = NAN, b2 = NAN, b = NAN;
  double last_gain() const { return b2 - b; }
  bool known() const { return std::isfinite(b2) && std::isfinite(b); }
  bool converged() const { return known() && last_gain() <= kConvergedNats; }
  static constexpr double kConvergedNats = 0.02;
};
Budget budget_of(const Study& s, const std::string& pe);
// Mean over seeds of (a[seed] - b[seed]) on the seeds both hold.
PerSeed paired_difference(const PerSeed& a, const PerSeed& b);
// extrapolation.csv: loss_unseen_1 (which = 1) or loss_unseen_2 (which = 2) at length L.
PerSeed unseen_per_seed(const Study& s, const Group& g, const std::string& pe, long L, int which,
                        const std::string& scaling = "none");

// Numbers as text.
// 4 significant figures ("12.35", "0.01235", "1235"), "n/a" for NaN, "inf", and exponent
// form for |v| >= 1e5 or < 1e-3 ("3.21e7", "1.2e-6").
std::string fmt(double v, int significant = 4);
// The shortest form that reads back exactly, exponent tidied: 10, 10000, 1e6, 0.5.
std::string fmt_plain(double v);
std::string fmt_count(long v);      // 812544 -> "812,544"
std::string fmt_percent(double v);  // 0.875 -> "87.5%"
// A perplexity from the per-seed losses: 3+ seeds "7.230 (7.100–7.370)" (exp of the interval
// of the mean loss, the lower end clamped at 1 and then marked "1*"), 2 seeds the two
// perplexities "7.230, 7.410", 1 seed "7.230 (1 seed)", none "n/a".
std::string fmt_ppl(const PerSeed& loss);
// A loss or difference in nats, signed, 4 decimals: "+0.0123 ± 0.0040", "+0.0100, +0.0200",
// "-0.0050 (1 seed)".
std::string fmt_nats(const PerSeed& v);
// v with its sign and `decimals` fixed decimals: "+0.0123", "-0.0050".
std::string fmt_signed(double v, int decimals = 4);
// A loss in nats: "1.923 ± 0.012" (half-width with 3 decimals), "1.923, 1.930" (2 seeds),
// "1.923 (1 seed)".
std::string fmt_loss(const PerSeed& v);
// An accuracy with its Wilson interval from tasks.csv: "87.5% (80.1–92.3)".
std::string fmt_accuracy(const TaskRow& t);

// The figures. Each writes <dir>/plots/<name>.svg and returns "plots/<name>.svg", or "" when
// the study has no data for it. The ten the Chinese guide (docs/guide.zh.md) shows also write
// <name>.zh.svg: ppl_vs_length, loss_vs_position, rope_scaling, rope_scaling_position,
// rope_theta, rope_rotation, rope_offset, attribution, copy_gain, rope_pairs.
std::string plot_ppl_vs_length(const Study& s, const Group& g, const std::string& name);
std::string plot_loss_vs_position(const Study& s);
std::string plot_sliding_gap(const Study& s);
std::string plot_sliding_gap_position(const Study& s);
std::string plot_rope_scaling(const Study& s);
std::string plot_rope_scaling_position(const Study& s);
std::string plot_rope_theta(const Study& s);
std::string plot_training_curves(const Study& s, const Group& g, const std::string& corpus,
                                 const std::string& name);
std::string plot_rope_rotation(const Study& s);
std::string plot_rope_offset(const Study& s);
// One figure per scheme: every head of the first and the last layer. Returns the paths.
std::vector<std::string> plot_attention(const Study& s);
std::string plot_passkey(const Study& s);
std::string plot_unseen_vs_length(const Study& s);
std::string plot_budget(const Study& s);
std::string plot_task_accuracy(const Study& s, const std::string& task);
// One fixed colour per scheme, so a scheme looks the same in every figure.
std::string pe_color(const std::string& pe);
// Writes a figure to <dir>/plots/<name>.svg; returns "plots/<name>.svg" (REPORT.md's link).
std::string save(const Study& s, const std::string& name, const std::string& svg);
// A figure in both languages, as the guide's own (cli/guide_figures.h): draw(Lang::en) is
// written to <dir>/plots/<name>.svg, draw(Lang::zh) to <name>.zh.svg. One code path and the
// same numbers for both; only the words differ (in_lang, plot/plot.h). draw returns the SVG,
// or "" when there is nothing to draw: then nothing is written and "" is returned, else
// "plots/<name>.svg" (REPORT.md links the English one).
std::string save_bilingual(const Study& s, const std::string& name,
                           const std::function<std::string(Lang)>& draw);

}  // namespace report_detail
}  // namespace poslab
