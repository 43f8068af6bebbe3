// eta.cpp — the study's planned tokens and expected time. See eta.h.
#include "train/study/eta.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>

#include "train/log.h"
#include "train/progress.h"
#include "train/study/runner.h"

namespace poslab {
namespace fs = std::filesystem;

namespace {

// The val tokens of a run's corpus: val.bin holds uint16 ids.
double val_tokens(const RunSpec& r) {
  std::error_code ec;
  const auto bytes = fs::file_size(r.train.data + "/val.bin", ec);
  return ec ? 500000.0 : static_cast<double>(bytes / 2);
}

// Multiply-adds per token of a network (all its layers) at length L (eta.h).
double macs_per_token(int64_t layers, int64_t C, int64_t L) {
  return static_cast<double>(layers) * static_cast<double>(C) * static_cast<double>(12 * C + L);
}

// The unit of planned work: one training token of the study's main network at T0 (three
// forward passes' worth).
double unit(const StudyConfig& c) {
  return 3 * macs_per_token(c.layers, c.d, c.ctx);
}

// One forward token of run r's network at length L, in units.
double forward_cost(const StudyConfig& c, const RunSpec& r, int64_t L) {
  return macs_per_token(r.train.model.n_layer, r.train.model.n_embd, L) / unit(c);
}

// The forward tokens at length L: the windows that are evaluated, L tokens each.
double eval_tokens(const StudyConfig& c, const RunSpec& r, int64_t L) {
  const double fit = std::floor((val_tokens(r) - 1) / static_cast<double>(L));
  const double windows = c.eval_windows > 0 ? std::min<double>(c.eval_windows, fit) : fit;
  return windows * static_cast<double>(L);
}

std::string millions(double tokens) {
  char b[32];
  std::snprintf(b, sizeof b, "%.1fM", tokens / 1e6);
  return b;
}

// The probes of a main run (probes.h), forward tokens weighted by their cost: attribution (3
// evaluations at L, 4 at T0 on the same targets), the RoPE pairs (one evaluation at L per
// rotated pair and the plain one), copy at a distance (2 windows of 2m + d per example).
double probe_tokens(const StudyConfig& c, const RunSpec& r) {
  if (!r.probes) return 0;
  const int64_t L = c.lens.back(), T0 = r.train.model.block_size;
  const double at_L = std::min<double>(c.probe_windows, std::floor((val_tokens(r) - 1) / L)) * L;
  double tokens = at_L * (3 * forward_cost(c, r, L) + 4 * forward_cost(c, r, T0));
  if (r.train.model.pe.kind == PeKind::rope)
    tokens += at_L * forward_cost(c, r, L) * (r.train.model.n_embd / r.train.model.n_head / 2 + 1);
  for (int64_t d = 16; d < L - 48; d *= 2)
    tokens += 2.0 * c.copy_examples * (48 + d) * forward_cost(c, r, 48 + d);
  tokens += 2.0 * c.copy_examples * L * forward_cost(c, r, L);
  return tokens;
}

}  // namespace

double planned_tokens(const StudyConfig& c, const StudyPlan& p, const RunSpec& r) {
  const int64_t T0 = r.train.model.block_size;
  const int64_t steps = r.train.steps - r.start_step;  // a branch trains from its start
  double tokens = static_cast<double>(steps * r.train.batch * T0) * 3 *
                  forward_cost(c, r, T0);  // = steps x batch x T0 for the main network
  // the trainer's val loss every eval_every steps and at the last: eval_batches batches
  const int64_t every = std::max<int64_t>(1, r.train.eval_every);
  const int64_t val_evals = (steps + every - 1) / every;
  tokens += static_cast<double>(val_evals * r.train.eval_batches * r.train.batch * T0) *
            forward_cost(c, r, T0);
  bool evaluated = false;
  for (const EvalSpec& e : p.evals) {
    if (e.run != r.name) continue;
    evaluated = true;
    for (int64_t L : c.lens)
      if (evaluates_at(r, L)) tokens += eval_tokens(c, r, L) * forward_cost(c, r, L);
  }
  if (evaluated && r.train.model.causal) {  // the sliding pass, once per run (sliding_cache.h)
    const double windows = static_cast<double>(
        sliding_window_count(static_cast<int64_t>(val_tokens(r)), T0, sliding_targets(c, r)));
    tokens += windows * static_cast<double>(T0) * forward_cost(c, r, T0);
  }
  if (!r.train.keep_steps.empty()) tokens += eval_tokens(c, r, T0) * forward_cost(c, r, T0);
  if (r.probes) tokens += eval_tokens(c, r, T0) * forward_cost(c, r, T0);  // the 32-token window
  return tokens + probe_tokens(c, r);
}

double job_tokens(const StudyConfig& c, const StudyPlan& p, const RunSpec& r) {
  double tokens = run_done(c, p, r) ? 0 : planned_tokens(c, p, r);
  for (const RunSpec* child : children(p, r))
    if (!run_done(c, p, *child)) tokens += planned_tokens(c, p, *child);
  return tokens;
}

Throughput study_throughput(const StudyConfig& c, const StudyPlan& p, double measured, int jobs) {
  if (measured > 0) return {measured, "measured now"};
  double sum = 0;
  int n = 0;
  for (const RunSpec& r : p.runs) {
    const std::string log = c.run_dir(r.name) + "/log.csv";
    if (r.task || !fs::exists(log)) continue;
    try {
      std::vector<LogRow> rows = read_log(log);
      if (!rows.empty() && rows.back().step == r.train.steps) sum += rows.back().tokens_per_s, ++n;
    } catch (const std::exception&) {
    }
  }
  if (n > 0)
    return {sum / n * std::max(jobs, 1),
            "measured by " + std::to_string(n) + " finished runs in " + c.out};
  return {c.assumed_tokens_per_s, "assumed (nothing measured)"};
}

std::string eta_text(const StudyConfig& c, const StudyPlan& p,
                     const std::vector<const RunSpec*>& pending, const Throughput& t) {
  double left = 0, all = 0;
  for (const RunSpec* r : pending) left += job_tokens(c, p, *r);
  for (const RunSpec& r : p.runs) all += planned_tokens(c, p, r);
  char b[512];
  std::snprintf(b, sizeof b,
                "expected time: %s for the %zu pending runs, %s for all %zu runs of the %s study "
                "(planned: %s and %s training tokens of the main network, evaluations included; at "
                "%.0f tokens/s, %s)\n",
                format_duration(left / t.tokens_per_s).c_str(), pending.size(),
                format_duration(all / t.tokens_per_s).c_str(), p.runs.size(),
                study_size_name(c.size), millions(left).c_str(), millions(all).c_str(),
                t.tokens_per_s, t.source.c_str());
  return b;
}

}  // namespace poslab
