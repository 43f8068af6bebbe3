#include "posenc/random_positions.h"

#include <algorithm>
#include <numeric>

namespace poslab {

std::vector<int32_t> draw_positions(int64_t T, int64_t Lmax, Generator& gen) {
  if (T < 1 || T > Lmax)
    fail("random positions: expected 1 <= T <= Lmax, but got T = ", T, " and Lmax = ", Lmax);
  std::vector<int32_t> all(Lmax);
  std::iota(all.begin(), all.end(), 0);
  for (int64_t t = 0; t < T; ++t) {  // all[t] <- a uniform pick among all[t..Lmax)
    const int64_t j = t + static_cast<int64_t>(gen.uniform() * static_cast<double>(Lmax - t));
    std::swap(all[t], all[std::min(j, Lmax - 1)]);
  }
  all.resize(T);
  std::sort(all.begin(), all.end());
  return all;
}

// splitmix64's finaliser: nearby inputs (steps, window indices) give unrelated seeds.
static uint64_t mix(uint64_t z) {
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}

uint64_t position_seed(uint64_t run_seed, int64_t step) {
  return mix(mix(run_seed ^ 0x52414e44504f53ULL) + static_cast<uint64_t>(step));
}

Ids draw_position_rows(int64_t B, int64_t T, int64_t Lmax, uint64_t seed, int64_t first) {
  Ids pos{std::vector<int32_t>(B * T), {B, T}};
  for (int64_t b = 0; b < B; ++b) {
    Generator gen(mix(seed + static_cast<uint64_t>(first + b)));
    std::vector<int32_t> row = draw_positions(T, Lmax, gen);
    std::copy(row.begin(), row.end(), pos.data.begin() + b * T);
  }
  return pos;
}

}  // namespace poslab
