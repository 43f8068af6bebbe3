// stats.cpp — mean over seeds with a Student t 95% interval. See stats.h.
#include "study/stats.h"

#include <stdexcept>
#include <string>

namespace poslab {

double t_quantile_95(long df) {
  // NIST/SEMATECH e-Handbook of Statistical Methods, 1.3.6.7.2, upper critical values of
  // Student's t, column 0.975 (two-sided 95%), df = 1..30, then 40, 60, 100.
  static const double kTable[30] = {12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306,
                                    2.262,  2.228, 2.201, 2.179, 2.160, 2.145, 2.131, 2.120,
                                    2.110,  2.101, 2.093, 2.086, 2.080, 2.074, 2.069, 2.064,
                                    2.060,  2.056, 2.052, 2.048, 2.045, 2.042};
  if (df < 1) {
    throw std::invalid_argument("t_quantile_95: expected df >= 1 degrees of freedom, but got " +
                                std::to_string(df));
  }
  if (df <= 30) return kTable[df - 1];
  if (df < 40) return 2.042;  // df 30's value: wider than the true one, never narrower
  if (df < 60) return 2.021;
  if (df < 100) return 2.000;
  return 1.984;
}

Interval mean_interval(const std::vector<double>& values) {
  Interval r;
  double sum = 0;
  for (const double v : values) {
    if (std::isfinite(v)) sum += v, ++r.n;
  }
  if (r.n == 0) return r;
  r.mean = sum / r.n;
  if (r.n < 2) return r;
  double ss = 0;  // Σ (x - mean)², on a second pass so no cancellation
  for (const double v : values) {
    if (std::isfinite(v)) ss += (v - r.mean) * (v - r.mean);
  }
  r.half = t_quantile_95(r.n - 1) * std::sqrt(ss / (r.n - 1)) / std::sqrt(double(r.n));
  return r;
}

bool separated(const Interval& a, const Interval& b) {
  return a.has_spread() && b.has_spread() && (a.high() < b.low() || b.high() < a.low());
}

}  // namespace poslab
