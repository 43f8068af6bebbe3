// screening.cpp — promoting a screened scheme. See screening.h.
#include "study/screening.h"

#include <cmath>
#include <filesystem>

#include "study/runner.h"

namespace poslab {
namespace fs = std::filesystem;

namespace {

// One seed's B/4 branch evaluated at length L (scaling none); nullopt while it is not.
std::optional<EvalResult> b4_eval(const StudyConfig& c, const std::string& pe, uint64_t seed,
                                  int64_t L) {
  const EvalSpec e{budget_run_name(pe, c.ablation_divisor, seed), pe, seed, ScalingKind::none};
  RunSpec r;  // every run of the study corpus reads the same val split
  r.train.data = c.data();
  return read_eval(eval_path(c, e, L), eval_windows(c, r, L));
}

// The width-weighted mean of loss - sliding_loss over the buckets at positions >= T0.
double past_t0_vs_sliding(const EvalResult& res, int64_t T0) {
  double sum = 0, width = 0;
  for (const EvalBucket& b : res.buckets)
    if (b.start >= T0) {
      sum += (b.loss - b.sliding_loss) * static_cast<double>(b.end - b.start);
      width += static_cast<double>(b.end - b.start);
    }
  return width > 0 ? sum / width : NAN;
}

std::string screening_path(const StudyConfig& c) {
  return c.out + "/screening.csv";
}

}  // namespace

std::optional<B4Score> b4_score(const StudyConfig& c, const std::string& pe) {
  B4Score s;
  const double n = static_cast<double>(c.screen_seeds);
  for (uint64_t seed : first_seeds(c.screen_seeds)) {
    const std::optional<EvalResult> at_t0 = b4_eval(c, pe, seed, c.ctx);
    const std::optional<EvalResult> far = b4_eval(c, pe, seed, c.lens.back());
    if (!at_t0 || !far) return std::nullopt;
    s.loss_t0 += at_t0->loss / n;
    s.vs_sliding += past_t0_vs_sliding(*far, c.ctx) / n;
  }
  return s;
}

std::optional<ScreeningRow> screening_row(const StudyConfig& c, const std::string& pe) {
  const std::optional<B4Score> own = b4_score(c, pe);
  if (!own) return std::nullopt;
  ScreeningRow row;
  row.pe = pe, row.seeds = static_cast<long>(c.screen_seeds);
  row.loss_t0 = own->loss_t0, row.vs_sliding = own->vs_sliding;
  for (const std::string& main : c.main_pes) {
    const std::optional<B4Score> m = b4_score(c, main);
    if (!m) return std::nullopt;
    if (!(m->loss_t0 >= row.best_loss_t0))
      row.best_loss_t0 = m->loss_t0, row.best_loss_t0_pe = main;
    if (std::isfinite(m->vs_sliding) && !(m->vs_sliding >= row.best_vs_sliding))
      row.best_vs_sliding = m->vs_sliding, row.best_vs_sliding_pe = main;
  }
  // NaN compares false: a missing measure beats nothing
  const bool beats = own->loss_t0 < row.best_loss_t0 || own->vs_sliding < row.best_vs_sliding;
  row.promoted = beats ? "yes" : "no";
  return row;
}

Screening screening_status(const StudyConfig& c) {
  std::vector<ScreeningRow> rows;
  if (fs::exists(screening_path(c))) rows = read_rows<ScreeningRow>(screening_path(c));
  Screening s;
  bool added = false;
  for (const std::string& pe : c.screened_pes) {
    auto it =
        std::find_if(rows.begin(), rows.end(), [&](const ScreeningRow& r) { return r.pe == pe; });
    if (it == rows.end()) {
      if (std::optional<ScreeningRow> row = screening_row(c, pe)) {
        rows.push_back(*row), added = true;
        it = rows.end() - 1;
      }
    }
    if (it == rows.end())
      s.undecided.push_back(pe);
    else
      (it->promoted == "yes" ? s.promoted : s.not_promoted).push_back(pe);
  }
  if (added) write_rows(screening_path(c), rows);
  return s;
}

}  // namespace poslab
