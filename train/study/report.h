// report.h — turns the study's raw results (a folder of CSV files) into REPORT.md + SVG plots.
//
// `poslab experiments` (experiments.h) trains and evaluates every model of the study and
// leaves its raw numbers in one folder. write_report reads that folder
// and writes, next to the CSVs,
//   REPORT.md          tables (each captioned with what was measured and how), plots, and
//                      "What the numbers say": bullet points generated from the numbers
//   plots/*.svg        figures drawn with plot.h
// Nothing in the report is hard-coded: every number comes from the CSVs.
//
// Input files (tables.h has their columns; read by name through data/csv.h):
//   runs.csv, extrapolation.csv, position_loss.csv, mlm.csv, tasks.csv, loc.csv
//   curves/<run>.csv    a copy of each run's log.csv (train/log.h)
//   attention_<pe>.csv  a matrix without header: attention weights, layer 0, mean over heads
// Every file but runs.csv is optional: a missing one turns its section into "not run".
// A CSV that holds only its header counts as missing. Main runs — the ones the headline
// tables compare — are those with objective lm, the name "<pe>_s<seed>" and (for rope) theta
// 10000; the others (theta ablations, masked-LM, tasks) feed their own sections. In loc.csv,
// a scheme's files may be one row each or joined with '+' in one field.
//
// The implementation is split by idea:
//   report_data.cpp      loading the results folder, averaging over seeds, number format
//   report.cpp           write_report and the markdown sections
//   report_findings.cpp  "What the numbers say"
//   report_plots.cpp     the SVG figures
#pragma once
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "train/log.h"
#include "train/study/tables.h"

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
//   "results/runs.csv: line 4: expected 12 fields, as in the header, but got 11".
void write_report(const std::string& dir, const ReportInfo& info);

// ---------------------------------------------------------------------------------------
// Internals shared by the report_*.cpp files (and the tests). Not a stable API.
namespace report_detail {

// The rows of the study's tables (tables.h) and of a run's log (train/log.h).
using Run = RunRow;
using CurvePoint = LogRow;

// Everything in the results folder. An optional file that is absent is std::nullopt.
struct Study {
  std::string dir;
  std::vector<Run> runs;
  std::map<std::string, std::vector<CurvePoint>> curves;  // by run name
  std::optional<std::vector<EvalRow>> eval;               // extrapolation.csv
  std::optional<std::vector<PositionRow>> positions;
  std::optional<std::vector<MlmRow>> mlm;
  std::optional<std::vector<TaskRow>> tasks;
  std::optional<std::vector<LocRow>> loc;
  std::map<std::string, std::vector<std::vector<double>>> attention;  // by pe

  std::vector<std::string> pes;  // schemes of the main runs: none, learned, ... order
  std::vector<long> lengths;     // evaluation lengths in extrapolation.csv, ascending

  std::vector<const Run*> main_runs(const std::string& pe) const;  // ascending seed
  // The training length T0: the shortest evaluated length (the study evaluates from T0 up).
  long train_len() const { return lengths.empty() ? 0 : lengths.front(); }
};
Study load_study(const std::string& dir);

// "<pe>_s<seed>": the name of a main run.
bool is_main_name(const std::string& run, const std::string& pe, long seed);
// Schemes in the study's order (none, learned, sinusoidal, rope, alibi), then the rest.
std::vector<std::string> order_pes(std::vector<std::string> pes);

// Mean, min and max of the values that are not NaN (n of them); all NaN if n == 0.
struct Stat {
  double mean, min, max;
  int n;
};
Stat stat_of(const std::vector<double>& values);
// Perplexity (or last-quarter perplexity) at `len` with `scaling`, over the seeds of the main
// runs of `pe`.
Stat eval_ppl(const Study& s, const std::string& pe, const std::string& scaling, long len,
              bool last_quarter = false);
// The same for one named run (theta ablations).
Stat eval_ppl_run(const Study& s, const std::string& run, const std::string& scaling, long len);
// Perplexity of the main RoPE runs that were evaluated with RoPE scaling (the study scales
// seed 1 only), so that every scaling, plain RoPE included, is compared on the same model(s).
Stat scaled_rope_ppl(const Study& s, const std::string& scaling, long len,
                     bool last_quarter = false);
// The RoPE theta ablation: rope lm runs with theta != 10000, plus the main rope run of the
// same seed as the theta = 10000 baseline; ascending theta. Empty if there is no ablation.
std::vector<const Run*> theta_runs(const Study& s);
// Scalings that appear for main rope runs: none first, then linear, ntk, dynamic, yarn, rest.
std::vector<std::string> rope_scalings(const Study& s);

// 4 significant figures ("12.35", "0.01235", "1235"), "n/a" for NaN, "inf", and exponent
// form for |v| >= 1e5 or < 1e-3 ("3.21e7", "1.2e-6").
std::string fmt(double v, int significant = 4);
// The shortest form that reads back exactly, exponent tidied: 10, 10000, 1e6, 0.5.
std::string fmt_plain(double v);
std::string fmt_count(long v);        // 812544 -> "812,544"
std::string fmt_percent(double v);    // 0.875 -> "87.5%"
std::string fmt_stat(const Stat& s);  // "15.00 (10.00–20.00)"; one value alone as "15.00"

// The figures. Each writes <dir>/plots/<name>.svg and returns "plots/<name>.svg", or "" when
// the study has no data for it.
std::string plot_training_curves(const Study& s);
std::string plot_ppl_vs_length(const Study& s);
std::string plot_loss_vs_position(const Study& s);
std::string plot_rope_scaling(const Study& s);
std::string plot_rope_scaling_position(const Study& s);
std::string plot_rope_theta(const Study& s);
std::string plot_rope_rotation(const Study& s);
std::string plot_attention(const Study& s);
// One fixed colour per scheme, so a scheme looks the same in every figure.
std::string pe_color(const std::string& pe);

// "What the numbers say": one markdown bullet (without the leading "- ") per finding.
std::vector<std::string> findings(const Study& s);

}  // namespace report_detail
}  // namespace poslab
