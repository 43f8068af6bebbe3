// copy_probe.cpp — copy at a distance, v2. See copy_probe.h.
#include "study/copy_probe.h"

#include <algorithm>

#include "posenc/random_positions.h"
#include "study/study.h"

namespace poslab {

std::vector<int64_t> copy_distances(int64_t max_len, int64_t m, int64_t lead) {
  const int64_t last = max_len - lead - 2 * m;
  if (last < 16)
    fail("copy probe: a window of ", max_len, " cannot hold ", lead,
         " characters and two copies of ", m, " characters 16 apart");
  std::vector<int64_t> d;
  for (int64_t x = 16; x < last; x *= 2) d.push_back(x);
  d.push_back(last);
  return d;
}

CopyOptions study_copy_options(int64_t max_len, int64_t n) {
  CopyOptions o;
  o.m = std::min<int64_t>(32, max_len / 8);
  o.lead = std::min<int64_t>(128, max_len / 8);
  o.distances = copy_distances(max_len, o.m, o.lead);
  o.n = n;
  return o;
}

int64_t copy_window_length(const CopyOptions& o, int64_t d) {
  return o.lead + 2 * o.m + d;
}

namespace {

int64_t draw_offset(Generator& g, int64_t size, int64_t len) {  // uniform in [0, size - len]
  return static_cast<int64_t>(g.next_u64() % static_cast<uint64_t>(size - len + 1));
}

// m consecutive train characters and a random order of them (Fisher-Yates) that differs from
// them: a string whose every order is itself ("    ") is drawn again.
std::pair<std::vector<uint16_t>, std::vector<uint16_t>> string_and_shuffle(
    const std::vector<uint16_t>& train, int64_t m, Generator& g) {
  for (int tries = 0; tries < 10000; ++tries) {
    const int64_t at = draw_offset(g, static_cast<int64_t>(train.size()), m);
    std::vector<uint16_t> s(train.begin() + at, train.begin() + at + m), shuffled = s;
    for (size_t i = shuffled.size(); i > 1; --i)
      std::swap(shuffled[i - 1], shuffled[g.next_u64() % i]);
    if (shuffled != s) return {s, shuffled};
  }
  fail("copy probe: 10000 strings of the train split in a row equal their own shuffle");
}

}  // namespace

CopyExample copy_example(const std::vector<uint16_t>& train, const std::vector<uint16_t>& val,
                         const CopyOptions& o, int64_t d, Generator& g) {
  if (o.m < 2 || d < 0 || o.lead < 0)
    fail("copy probe: expected m >= 2, lead >= 0 and d >= 0, but got m ", o.m, ", lead ", o.lead,
         ", d ", d);
  if (static_cast<int64_t>(val.size()) < o.lead + d)
    fail("copy probe: the val split holds ", val.size(),
         " tokens, fewer than lead + d = ", o.lead + d);
  if (static_cast<int64_t>(train.size()) < o.m)
    fail("copy probe: the train split holds ", train.size(), " tokens, fewer than m = ", o.m);
  const int64_t v = draw_offset(g, static_cast<int64_t>(val.size()), o.lead + d);
  const auto [s, shuffled] = string_and_shuffle(train, o.m, g);
  auto window = [&](const std::vector<uint16_t>& first_copy) {
    std::vector<uint16_t> w(val.begin() + v, val.begin() + v + o.lead);
    w.insert(w.end(), first_copy.begin(), first_copy.end());
    w.insert(w.end(), val.begin() + v + o.lead, val.begin() + v + o.lead + d);
    w.insert(w.end(), s.begin(), s.end());
    return w;
  };
  return {window(s), window(shuffled)};
}

namespace {

// The positions of windows w0 .. w0 + B - 1 for a model trained on random positions (iv, as
// study_positions gives it): window w reads draw w mod `pairs`, so a planted window and its
// control (w and w + pairs) read the same positions.
Ids window_positions(const Interventions& iv, int64_t w0, int64_t B, int64_t L, int64_t pairs) {
  Ids pos{{}, {B, L}};
  for (int64_t b = 0; b < B; ++b) {
    const Ids row = draw_position_rows(1, L, iv.draw_max, iv.draw_seed, (w0 + b) % pairs);
    pos.data.insert(pos.data.end(), row.data.begin(), row.data.end());
  }
  return pos;
}

// The mean loss on the last m - 1 characters of each window (all of one length W; the second
// copy is its last m characters), windows batched by about batch_tokens input tokens:
//   out[i] = mean over t in [W - m + 1, W) of -ln p(w_i[t] | w_i[0, t))
std::vector<double> second_copy_losses(const GPT& model,
                                       const std::vector<std::vector<uint16_t>>& windows, int64_t m,
                                       int64_t batch_tokens) {
  Interventions iv = study_positions(model.config());
  const int64_t n = static_cast<int64_t>(windows.size());
  const int64_t L = static_cast<int64_t>(windows[0].size()) - 1;  // input length
  const int64_t per = std::max<int64_t>(1, batch_tokens / L), first = L + 2 - m;
  std::vector<double> out;
  for (int64_t w0 = 0; w0 < n; w0 += per) {
    const int64_t B = std::min(per, n - w0);
    Ids x{std::vector<int32_t>(B * L), {B, L}}, y{std::vector<int32_t>(B * L), {B, L}};
    for (int64_t b = 0; b < B; ++b)
      for (int64_t t = 0; t < L; ++t)
        x.data[b * L + t] = windows[w0 + b][t], y.data[b * L + t] = windows[w0 + b][t + 1];
    if (iv.draw_max > 0) iv.positions = window_positions(iv, w0, B, L, n / 2);
    Tensor rows;  // (B L): row t is the loss of target t + 1
    model.loss(x, y, &rows, iv);
    const std::vector<double> v = rows.to_vector();
    for (int64_t b = 0; b < B; ++b) {
      double acc = 0;
      for (int64_t t = first; t <= L; ++t) acc += v[b * L + t - 1];  // target t: row t - 1
      out.push_back(acc / static_cast<double>(m - 1));
    }
  }
  return out;
}

double mean(const std::vector<double>& v, size_t begin, size_t end) {
  double acc = 0;
  for (size_t i = begin; i < end; ++i) acc += v[i];
  return acc / static_cast<double>(end - begin);
}

}  // namespace

std::vector<CopyRow> copy_probe(const GPT& model, const std::vector<uint16_t>& train,
                                const std::vector<uint16_t>& val, const CopyOptions& o) {
  if (o.n < 1) fail("copy probe: expected at least 1 example per distance, but got ", o.n);
  NoGrad no_grad;
  std::vector<CopyRow> rows;
  for (int64_t d : o.distances) {
    Generator g(o.seed * 1000003 + static_cast<uint64_t>(d));
    std::vector<std::vector<uint16_t>> windows(2 * o.n);  // planted ones, then controls
    for (int64_t i = 0; i < o.n; ++i) {
      CopyExample ex = copy_example(train, val, o, d, g);
      windows[i] = std::move(ex.planted), windows[o.n + i] = std::move(ex.control);
    }
    const std::vector<double> loss = second_copy_losses(model, windows, o.m, o.batch_tokens);
    const size_t half = static_cast<size_t>(o.n);
    CopyRow row{static_cast<long>(d), static_cast<long>(o.n), mean(loss, 0, half),
                mean(loss, half, 2 * half)};
    row.gain = row.loss_control - row.loss_planted;
    row.share = row.gain / row.loss_control;
    rows.push_back(row);
  }
  return rows;
}

}  // namespace poslab
