#include "posenc/alibi.h"

#include <cmath>

namespace poslab {

// m_h = 2^(-8(h+1)/n) for n a power of two
static std::vector<double> power_of_two_slopes(int64_t n) {
  std::vector<double> s(n);
  for (int64_t h = 0; h < n; ++h) s[h] = std::exp2(-8.0 * (h + 1) / n);
  return s;
}

std::vector<double> alibi_slopes(int64_t n_head) {
  if (n_head <= 0) fail("alibi: expected at least one head, but got ", n_head);
  int64_t n = 1;
  while (n * 2 <= n_head) n *= 2;  // closest power of two <= n_head
  std::vector<double> s = power_of_two_slopes(n);
  if (n == n_head) return s;
  std::vector<double> extra = power_of_two_slopes(2 * n);
  for (int64_t i = 0; static_cast<int64_t>(s.size()) < n_head; i += 2) s.push_back(extra[i]);
  return s;
}

}  // namespace poslab
