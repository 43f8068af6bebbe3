// stats.h — the statistics of the study report: a mean over seeds with its 95% interval.
//
// A study repeats each model with a few seeds (2 to 5). What a reader needs from those few
// numbers is the mean and how far it could be from the mean of many more seeds: the 95%
// confidence interval of Student's t with n - 1 degrees of freedom,
//
//   mean ± t(n-1) · s / sqrt(n),    s² = Σ (x_i - mean)² / (n - 1)
//
// where t(df) is the 0.975 quantile of the t distribution (two-sided 95%). With one seed
// there is no spread to measure: the interval is NaN and the report says "1 seed".
//
// Losses are averaged, not perplexities: ppl = exp(loss) is convex, so the mean of the
// perplexities is pulled up by one bad seed (the mean of 30 and 2,800 is 1,415), while
// exp(mean loss) is their geometric mean. The interval of a perplexity is exp of the
// interval of the loss.
#pragma once
#include <cmath>
#include <vector>

namespace poslab {

// t(df): the 0.975 quantile of Student's t with df >= 1 degrees of freedom, from the table
// of NIST/SEMATECH, e-Handbook of Statistical Methods, section 1.3.6.7.2 ("Critical values
// of the Student's t distribution", column 0.975) for df = 1..30; past 30 the value of the
// next smaller tabulated df (40, 60, 100), which errs on the wide side. Throws
// std::invalid_argument for df < 1.
double t_quantile_95(long df);

// The finite values of a sample: their count, mean and the half width of the 95% interval
// (NaN when n < 2; everything NaN when n == 0).
struct Interval {
  int n = 0;
  double mean = NAN, half = NAN;
  double low() const { return mean - half; }
  double high() const { return mean + half; }
  bool has_spread() const { return n >= 2 && std::isfinite(half); }
};
Interval mean_interval(const std::vector<double>& values);

// True when both intervals exist (n >= 2 each) and do not overlap.
bool separated(const Interval& a, const Interval& b);

}  // namespace poslab
