#include "train/study/copy_probe.h"

#include <algorithm>

namespace poslab {

std::vector<int64_t> copy_distances(int64_t max_len, int64_t m) {
  const int64_t last = max_len - 2 * m;
  if (last < 16)
    fail("copy probe: a window of ", max_len, " cannot hold two copies of ", m,
         " characters 16 apart");
  std::vector<int64_t> d;
  for (int64_t x = 16; x < last; x *= 2) d.push_back(x);
  d.push_back(last);
  return d;
}

std::vector<uint16_t> copy_alphabet(const std::vector<std::string>& vocab) {
  std::vector<uint16_t> ids;
  for (size_t i = 0; i < vocab.size(); ++i)
    if (vocab[i] != "\n") ids.push_back(static_cast<uint16_t>(i));
  return ids;
}

namespace {

std::vector<uint16_t> random_string(int64_t m, const std::vector<uint16_t>& alphabet,
                                    Generator& g) {
  std::vector<uint16_t> s(m);
  for (uint16_t& c : s) c = alphabet[g.next_u64() % alphabet.size()];
  return s;
}

}  // namespace

CopyExample copy_example(const std::vector<uint16_t>& val, int64_t m, int64_t d,
                         const std::vector<uint16_t>& alphabet, Generator& g) {
  if (m < 2 || d < 0) fail("copy probe: expected m >= 2 and d >= 0, but got m ", m, ", d ", d);
  if (alphabet.size() < 2)
    fail("copy probe: expected an alphabet of at least 2 tokens, but got ", alphabet.size());
  if (static_cast<int64_t>(val.size()) < d)
    fail("copy probe: the val split holds ", val.size(), " tokens, fewer than the gap d = ", d);
  const int64_t offset =
      static_cast<int64_t>(g.next_u64() % static_cast<uint64_t>(val.size() - d + 1));
  const std::vector<uint16_t> s = random_string(m, alphabet, g);
  std::vector<uint16_t> other = random_string(m, alphabet, g);
  while (other == s) other = random_string(m, alphabet, g);
  auto window = [&](const std::vector<uint16_t>& first_copy) {
    std::vector<uint16_t> w = first_copy;
    w.insert(w.end(), val.begin() + offset, val.begin() + offset + d);
    w.insert(w.end(), s.begin(), s.end());
    return w;
  };
  return {window(s), window(other)};
}

namespace {

// The mean loss on the last m - 1 characters of each window (2m + d tokens; the second copy
// starts at m + d), windows batched by about batch_tokens input tokens:
//   out[i] = mean over t in [m + d + 1, 2m + d) of -ln p(w_i[t] | w_i[0, t))
std::vector<double> second_copy_losses(const GPT& model,
                                       const std::vector<std::vector<uint16_t>>& windows, int64_t m,
                                       int64_t batch_tokens) {
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
    Tensor rows;  // (B L): row t is the loss of target t + 1
    model.loss(x, y, &rows);
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

int64_t copy_examples_at(const CopyOptions& o, int64_t d) {
  if (o.max_tokens <= 0) return o.n;
  const int64_t per_example = 2 * (2 * o.m + d - 1);  // planted and control inputs
  return std::clamp<int64_t>(o.max_tokens / per_example, 1, o.n);
}

std::vector<CopyRow> copy_probe(const GPT& model, const std::vector<uint16_t>& val,
                                const CopyOptions& o) {
  if (o.n < 1) fail("copy probe: expected at least 1 example per distance, but got ", o.n);
  std::vector<uint16_t> alphabet = o.alphabet;
  if (alphabet.empty())
    for (int64_t v = 0; v < model.config().vocab_size; ++v)
      alphabet.push_back(static_cast<uint16_t>(v));
  NoGrad no_grad;
  std::vector<CopyRow> rows;
  for (int64_t d : o.distances) {
    Generator g(o.seed * 1000003 + static_cast<uint64_t>(d));
    const int64_t n = copy_examples_at(o, d);
    std::vector<std::vector<uint16_t>> windows(2 * n);  // planted ones, then controls
    for (int64_t i = 0; i < n; ++i) {
      CopyExample ex = copy_example(val, o.m, d, alphabet, g);
      windows[i] = std::move(ex.planted), windows[n + i] = std::move(ex.control);
    }
    const std::vector<double> loss = second_copy_losses(model, windows, o.m, o.batch_tokens);
    const size_t half = static_cast<size_t>(n);
    rows.push_back({static_cast<long>(d), static_cast<long>(n), mean(loss, 0, half),
                    mean(loss, half, 2 * half)});
  }
  return rows;
}

}  // namespace poslab
