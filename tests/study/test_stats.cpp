// Tests for study/stats.h: the t table, the mean with its 95% interval, separation.
#include "study/stats.h"

#include <catch2/catch.hpp>

#include <cmath>

using namespace poslab;

TEST_CASE("t quantiles come from the table: 12.706 for 1 df, 4.303 for 2", "[stats]") {
  CHECK(t_quantile_95(1) == 12.706);
  CHECK(t_quantile_95(2) == 4.303);
  CHECK(t_quantile_95(4) == 2.776);
  CHECK(t_quantile_95(30) == 2.042);
  CHECK(t_quantile_95(45) == 2.021);  // past the table: the next smaller tabulated df (40)
  CHECK(t_quantile_95(1000) == 1.984);
  // Decreasing towards the normal's 1.96: more seeds, narrower interval for the same spread.
  for (long df = 1; df < 120; ++df) CHECK(t_quantile_95(df + 1) <= t_quantile_95(df));
  CHECK_THROWS_WITH(t_quantile_95(0), Catch::Contains("expected df >= 1") && Catch::Contains("0"));
}

TEST_CASE("mean_interval: mean ± t(n-1) s / sqrt(n) over the finite values", "[stats]") {
  // {1, 2, 3}: mean 2, s = 1, half = 4.303 / sqrt(3).
  const Interval a = mean_interval({1, 2, 3});
  CHECK(a.n == 3);
  CHECK(a.mean == Approx(2));
  CHECK(a.half == Approx(4.303 / std::sqrt(3.0)));
  CHECK(a.low() == Approx(2 - 4.303 / std::sqrt(3.0)));
  CHECK(a.has_spread());
  // Two seeds: s = |x1 - x2| / sqrt(2), half = 12.706 s / sqrt(2) = 12.706 |x1 - x2| / 2.
  const Interval b = mean_interval({2.0, 2.5, NAN});
  CHECK(b.n == 2);
  CHECK(b.half == Approx(12.706 * 0.25));
  // One seed: a mean, no interval.
  const Interval c = mean_interval({7.0});
  CHECK(c.n == 1);
  CHECK(c.mean == 7.0);
  CHECK(std::isnan(c.half));
  CHECK(!c.has_spread());
  CHECK(mean_interval({}).n == 0);
  CHECK(std::isnan(mean_interval({NAN}).mean));
}

TEST_CASE("separated: both intervals exist and do not overlap", "[stats]") {
  const Interval low = mean_interval({1.0, 1.1, 1.2}), high = mean_interval({2.0, 2.1, 2.2});
  CHECK(separated(low, high));
  CHECK(separated(high, low));
  CHECK(!separated(low, mean_interval({1.1, 1.2, 1.3})));  // overlapping
  CHECK(!separated(low, mean_interval({5.0})));            // one seed: no interval, no claim
}
