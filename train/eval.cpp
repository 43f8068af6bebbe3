#include "train/eval.h"

#include "posenc/random_positions.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

namespace poslab {
namespace {

// Losses of the windows of L tokens at `offsets`, `batch` windows per forward pass:
//   out[i L + t] = -ln p(tokens[o_i + t + 1] | tokens[o_i .. o_i + t])
// Each window is one row of the (B, L) batch and starts at position 0. Memory: one batch's
// activations (B L C per layer, logits B L V); attention never forms an L x L matrix
// (nn/attention_op.h).
std::vector<double> window_losses(const GPT& model, const std::vector<uint16_t>& tokens,
                                  const std::vector<int64_t>& offsets, int64_t L, int64_t batch,
                                  const Interventions& iv = {}) {
  NoGrad no_grad;
  int64_t n = static_cast<int64_t>(offsets.size());
  int64_t per = batch > 0 ? batch : std::max<int64_t>(1, kEvalBatchTokens / L);
  std::vector<double> out(n * L);
  for (int64_t w0 = 0; w0 < n; w0 += per) {
    int64_t B = std::min(per, n - w0);
    Ids x{std::vector<int32_t>(B * L), {B, L}}, y{std::vector<int32_t>(B * L), {B, L}};
    for (int64_t b = 0; b < B; ++b)
      for (int64_t t = 0; t < L; ++t) {
        int64_t o = offsets[w0 + b];
        x.data[b * L + t] = tokens[o + t], y.data[b * L + t] = tokens[o + t + 1];
      }
    Tensor rows;            // (B L)
    if (iv.draw_max > 0) {  // each window its own draw, seeded by its index (random_positions.h)
      Interventions drawn = iv;
      drawn.positions = draw_position_rows(B, L, iv.draw_max, iv.draw_seed, w0);
      model.loss(x, y, &rows, drawn);
    } else {
      model.loss(x, y, &rows, iv);
    }
    std::vector<double> v = rows.to_vector();
    std::copy(v.begin(), v.end(), out.begin() + w0 * L);
  }
  return out;
}

// Mean over the W windows at each position: v[w L + t] -> pos[t].
std::vector<double> position_means(const double* v, int64_t W, int64_t L) {
  std::vector<double> pos(L, 0.0);
  for (int64_t w = 0; w < W; ++w)
    for (int64_t t = 0; t < L; ++t) pos[t] += v[w * L + t];
  for (double& p : pos) p /= W;
  return pos;
}

double range_mean(const std::vector<double>& pos, int64_t start, int64_t end) {
  double acc = 0;
  for (int64_t t = start; t < end; ++t) acc += pos[t];
  return acc / std::max<int64_t>(end - start, 1);
}

// The offsets of the sliding windows (eval.h) for a split of n > window tokens: 0, s, 2s, ...
// while a window's last target n-1 is reachable, then one window ending at the split's end
// when the strides do not reach it; only those up to the first that scores target `last`.
std::vector<int64_t> sliding_offsets(int64_t n, int64_t window, int64_t last) {
  const int64_t s = std::max<int64_t>(1, window / 4);
  std::vector<int64_t> offsets;
  for (int64_t o = 0; o + window <= n - 1; o += s) {
    offsets.push_back(o);
    if (o + window >= last) return offsets;
  }
  if (offsets.back() + window < n - 1) offsets.push_back(n - 1 - window);  // the split's end
  return offsets;
}

}  // namespace

EvalResult evaluate(const GPT& model, const std::vector<uint16_t>& tokens, int64_t L,
                    int64_t windows, int64_t buckets, const std::string& split,
                    std::vector<double>* target_loss, int64_t batch, const Interventions& iv) {
  if (L <= 0) fail("--len: expected a positive length, but got ", L);
  if (buckets <= 0 || buckets > L) fail("--buckets: expected 1..", L, ", but got ", buckets);
  int64_t n = static_cast<int64_t>(tokens.size());
  if (n < L + 1)
    fail("eval: the ", split, " split holds ", n, " tokens, fewer than --len + 1 = ", L + 1);
  int64_t fit = (n - 1) / L;
  int64_t W = windows > 0 ? std::min(windows, fit) : fit;
  std::vector<int64_t> offsets(W);
  for (int64_t w = 0; w < W; ++w) offsets[w] = w * L;
  std::vector<double> v = window_losses(model, tokens, offsets, L, batch, iv);
  EvalResult r;
  r.len = L;
  r.windows = W;
  r.tokens = L * W;
  double total = 0;  // summed window by window, position by position
  for (double x : v) total += x;
  r.position_loss = position_means(v.data(), W, L);
  r.loss = total / r.tokens;
  // loss_se: the standard error of the loss as a mean of W window means (sample sd / sqrt W)
  if (W >= 2) {
    double ss = 0;
    for (int64_t w = 0; w < W; ++w) {
      double m = 0;
      for (int64_t t = 0; t < L; ++t) m += v[w * L + t];
      ss += (m / L - r.loss) * (m / L - r.loss);
    }
    r.loss_se = std::sqrt(ss / (W - 1) / W);
  }
  r.ppl = std::exp(r.loss);
  for (int64_t b = 0; b < buckets; ++b) {
    int64_t s = b * L / buckets, e = (b + 1) * L / buckets;
    r.buckets.push_back({s, e, range_mean(r.position_loss, s, e)});
  }
  if (target_loss) *target_loss = std::move(v);
  return r;
}

std::vector<double> sliding_losses(const GPT& model, const std::vector<uint16_t>& tokens,
                                   int64_t window, int64_t batch, int64_t targets,
                                   const Interventions& iv) {
  int64_t n = static_cast<int64_t>(tokens.size());
  if (window <= 0) fail("sliding window: expected a positive window length, but got ", window);
  if (n < window + 1)
    fail("sliding window: the split holds ", n,
         " tokens, fewer than the window + 1 = ", window + 1);
  const int64_t last = sliding_target_count(n, targets);
  std::vector<int64_t> offsets = sliding_offsets(n, window, last);
  std::vector<double> v = window_losses(model, tokens, offsets, window, batch, iv);
  // Window i (offset o) holds targets o+1 .. o+window; it scores those no earlier window
  // scored: all of them for the first, then the last s (the last window: what is left).
  std::vector<double> out(last);
  int64_t scored = 0;  // targets 1 .. scored are done
  for (size_t i = 0; i < offsets.size(); ++i) {
    int64_t o = offsets[i];
    for (int64_t t = scored + 1; t <= std::min(o + window, last); ++t)
      out[t - 1] = v[i * window + (t - o - 1)];
    scored = o + window;
  }
  return out;
}

int64_t sliding_target_count(int64_t n, int64_t targets) {
  const int64_t all = std::max<int64_t>(n - 1, 0);
  return targets > 0 ? std::min(targets, all) : all;
}

int64_t sliding_window_count(int64_t n, int64_t window, int64_t targets) {
  if (window <= 0 || n < window + 1) return 0;
  return static_cast<int64_t>(sliding_offsets(n, window, sliding_target_count(n, targets)).size());
}

void add_sliding_loss(EvalResult& r, const std::vector<double>& sliding) {
  int64_t W = r.windows, L = r.len;
  if (static_cast<int64_t>(sliding.size()) < W * L)
    fail("sliding window: an evaluation of ", W, " windows of ", L, " tokens needs the losses of ",
         W * L, " targets, but the sliding pass has ", sliding.size());
  double total = 0;
  for (int64_t i = 0; i < W * L; ++i) total += sliding[i];  // target i + 1
  r.sliding_loss = total / (W * L);
  std::vector<double> pos = position_means(sliding.data(), W, L);
  for (EvalBucket& b : r.buckets) b.sliding_loss = range_mean(pos, b.start, b.end);
}

std::string EvalResult::json() const {
  char b[256];
  std::snprintf(
      b, sizeof b,
      "{\"loss\":%.17g,\"ppl\":%.17g,\"tokens\":%lld,\"len\":%lld,\"windows\":%lld,\"buckets\":[",
      loss, ppl, (long long)tokens, (long long)len, (long long)windows);
  std::string s = b;
  for (size_t i = 0; i < buckets.size(); ++i) {
    const EvalBucket& k = buckets[i];
    std::snprintf(b, sizeof b, "%s{\"start\":%lld,\"end\":%lld,\"loss\":%.17g", i ? "," : "",
                  (long long)k.start, (long long)k.end, k.loss);
    s += b;
    if (!std::isnan(k.sliding_loss)) {
      std::snprintf(b, sizeof b, ",\"sliding_loss\":%.17g", k.sliding_loss);
      s += b;
    }
    s += "}";
  }
  s += "]";
  if (!std::isnan(loss_se)) {
    std::snprintf(b, sizeof b, ",\"loss_se\":%.17g", loss_se);
    s += b;
  }
  if (!std::isnan(sliding_loss)) {
    std::snprintf(b, sizeof b, ",\"sliding_loss\":%.17g", sliding_loss);
    s += b;
  }
  return s + "}";
}

}  // namespace poslab
