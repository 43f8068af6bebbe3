// eta.cpp — the study's planned tokens and expected time. See eta.h.
#include "study/eta.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>

#include "study/copy_probe.h"
#include "study/runner.h"
#include "train/log.h"
#include "train/progress.h"

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
// The probes of a main run (probes.h), forward tokens weighted by their cost: attribution (3
// evaluations at L, 4 at T0 on the same targets), the RoPE pairs (one evaluation at L per
// rotated pair and the plain one), copy at a distance (2 windows per example: copy_probe.h).
// `missing`: only the files not there in their current form.
double probe_tokens(const StudyConfig& c, const RunSpec& r, bool missing) {
  if (!r.probes) return 0;
  const std::string dir = c.run_dir(r.name);
  auto wanted = [&](const char* file) { return !missing || !probe_current(dir + "/" + file); };
  const int64_t L = c.lens.back(), T0 = r.train.model.block_size;
  const double at_L = std::min<double>(c.probe_windows, std::floor((val_tokens(r) - 1) / L)) * L;
  double tokens = 0;
  if (wanted("attribution.csv"))
    tokens += at_L * (3 * forward_cost(c, r, L) + 4 * forward_cost(c, r, T0));
  if (r.scheme == "rope" && wanted("rope_pairs.csv"))
    tokens += at_L * forward_cost(c, r, L) * (r.train.model.n_embd / r.train.model.n_head / 2 + 1);
  if (wanted("copy.csv")) {
    const CopyOptions o = study_copy_options(L, c.copy_examples);
    for (int64_t d : o.distances) {
      const int64_t len = copy_window_length(o, d);
      tokens += 2.0 * static_cast<double>(o.n * len) * forward_cost(c, r, len);
    }
  }
  return tokens;
}

// The training tokens of a run: a branch from its start, a paused run to its pause; and the
// trainer's val loss every eval_every steps and at the last (eval_batches batches).
double training_tokens(const StudyConfig& c, const RunSpec& r) {
  const int64_t T0 = r.train.model.block_size;
  const int64_t last = r.train.stop_after > 0 ? r.train.stop_after : r.train.steps;
  const int64_t steps = last - r.start_step;
  double tokens = static_cast<double>(steps * r.train.batch * T0) * 3 *
                  forward_cost(c, r, T0);  // = steps x batch x T0 for the main network
  const int64_t every = std::max<int64_t>(1, r.train.eval_every);
  const int64_t val_evals = (steps + every - 1) / every;
  return tokens + static_cast<double>(val_evals * r.train.eval_batches * r.train.batch * T0) *
                      forward_cost(c, r, T0);
}

}  // namespace

// A run made earlier that lacks a measurement the plan added since (runner.h: make_run) counts
// what it still has to make: its model when it is not here, the evaluations and probes that are
// missing. Any other run counts all of its work (a finished one too: the study's total).
double planned_tokens(const StudyConfig& c, const StudyPlan& p, const RunSpec& r) {
  const int64_t T0 = r.train.model.block_size;
  const bool earlier = marked_done(c, r) && !run_done(c, p, r);
  double tokens = 0;
  if (!earlier || !fs::exists(c.run_dir(r.name) + "/model.safetensors"))
    tokens += training_tokens(c, r);
  bool evaluated = false;
  for (const EvalSpec& e : p.evals) {
    if (e.run != r.name) continue;
    for (int64_t L : c.lens)
      if (evaluates_at(r, L) && !(earlier && fs::exists(eval_path(c, e, L)))) {
        tokens += eval_tokens(c, r, L) * forward_cost(c, r, L);
        evaluated = true;
      }
  }
  if (evaluated && r.train.model.causal && r.train.init_from.empty()) {
    // the sliding pass, once per run (sliding_cache.h)
    const double windows = static_cast<double>(
        sliding_window_count(static_cast<int64_t>(val_tokens(r)), T0, sliding_targets(c, r)));
    tokens += windows * static_cast<double>(T0) * forward_cost(c, r, T0);
  }
  if (!earlier && !r.train.keep_steps.empty())
    tokens += eval_tokens(c, r, T0) * forward_cost(c, r, T0);
  if (!earlier && r.probes)  // the 32-token window
    tokens += eval_tokens(c, r, T0) * forward_cost(c, r, T0);
  return tokens + probe_tokens(c, r, earlier);
}

double job_tokens(const StudyConfig& c, const StudyPlan& p, const RunSpec& r) {
  double tokens = run_done(c, p, r) ? 0 : planned_tokens(c, p, r);
  for (const RunSpec* child : children(p, r))
    if (child->waits.empty() && !run_done(c, p, *child)) tokens += planned_tokens(c, p, *child);
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

namespace {

// The runs that wait (RunSpec::waits) and those a pending decision may add (contingent), in
// planned tokens.
double waiting_tokens(const StudyConfig& c, const StudyPlan& p, size_t& n) {
  double tokens = 0;
  for (const RunSpec& r : p.runs)
    if (!r.waits.empty() && !run_done(c, p, r)) tokens += planned_tokens(c, p, r), ++n;
  return tokens;
}
double contingent_tokens(const StudyConfig& c, const StudyPlan& p) {
  StudyPlan q;
  q.runs = p.contingent, q.evals = p.contingent_evals;
  double tokens = 0;
  for (const RunSpec& r : q.runs)
    if (!run_done(c, q, r)) tokens += planned_tokens(c, q, r);
  return tokens;
}

}  // namespace

std::string eta_text(const StudyConfig& c, const StudyPlan& p,
                     const std::vector<const RunSpec*>& pending, const Throughput& t) {
  double left = 0, all = 0;
  for (const RunSpec* r : pending) left += job_tokens(c, p, *r);
  for (const RunSpec& r : p.runs) all += planned_tokens(c, p, r);
  size_t n_waiting = 0;
  const double waiting = waiting_tokens(c, p, n_waiting);
  char b[512];
  std::snprintf(b, sizeof b,
                "expected time: %s for the %zu pending runs, %s for all %zu runs of the %s study "
                "(planned: %s and %s training tokens of the main network, evaluations included; at "
                "%.0f tokens/s, %s)\n",
                format_duration((left + waiting) / t.tokens_per_s).c_str(),
                pending.size() + n_waiting, format_duration(all / t.tokens_per_s).c_str(),
                p.runs.size(), study_size_name(c.size), millions(left + waiting).c_str(),
                millions(all).c_str(), t.tokens_per_s, t.source.c_str());
  std::string text = b;
  if (n_waiting > 0)
    text += "  of the pending runs, " + std::to_string(n_waiting) + " (" +
            format_duration(waiting / t.tokens_per_s) +
            ") wait for a learning rate: a later round of this invocation makes them\n";
  if (!p.undecided.empty()) {
    std::string what;
    for (const std::string& u : p.undecided) what += (what.empty() ? "" : ", ") + u;
    text += "  undecided, up to " + format_duration(contingent_tokens(c, p) / t.tokens_per_s) +
            " more if every one goes that way: " + what + "\n";
  }
  return text;
}

}  // namespace poslab
