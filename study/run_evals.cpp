// run_evals.cpp — a run's evaluations: at every length under each scaling of the plan, the
// sliding-window reference, the 32-token window, the kept model, the masked-LM check. See
// runner.h (the files they write) and run_evals.h.
#include "study/run_evals.h"

#include <cmath>
#include <cstdio>
#include <filesystem>

#include "data/atomic_file.h"
#include "data/corpus.h"
#include "data/json.h"
#include "study/sliding_cache.h"
#include "study/tables.h"
#include "study/timing.h"
#include "train/checkpoint.h"

namespace poslab {
namespace fs = std::filesystem;

namespace {

// One evaluation at length L under e's scaling (c.buckets position buckets). At L <= T0 every RoPE
// scaling has s = 1 and is plain RoPE (docs/model.md), so the plain evaluation is reused when
// it is there (the plan evaluates a run unscaled first).
EvalResult evaluation_at(const StudyConfig& c, const RunSpec& run, const EvalSpec& e, GPT& model,
                         const std::vector<uint16_t>& val, int64_t L) {
  const int64_t T0 = model.config().block_size, windows = eval_windows(c, run, L);
  if (e.scaling != ScalingKind::none && e.factor == 0 && L <= T0) {
    EvalSpec plain = e;
    plain.scaling = ScalingKind::none;
    if (std::optional<EvalResult> r = read_eval(eval_path(c, plain, L), windows)) return *r;
  }
  Interventions scaled = study_positions(model.config());
  if (e.scaling != ScalingKind::none) {  // against the study's T0 (a fine-tune's is longer)
    scaled.rope_scaling = {e.scaling, e.factor, c.ctx};
    scaled.rope_scaling.ramp.truncate = e.truncate;
  }
  return evaluate(model, val, L, windows, std::min(c.buckets, L), "val", nullptr, 0, scaled);
}

// The evaluations of one EvalSpec at every length, each with the sliding-window loss on the
// same targets. The sliding pass is made once per model (sliding_cache.h) and reused by every
// length and scaling; under --force it is remade once, with the plain (unscaled) spec. An
// evaluation cached without a sliding loss only gets it added.
void evaluate_run(const StudyConfig& c, const RunSpec& r, const EvalSpec& e, GPT& model,
                  const std::vector<uint16_t>& val) {
  std::fprintf(stderr, "%s: evaluate at %lld..%lld (scaling %s)\n", r.name.c_str(),
               (long long)c.lens.front(), (long long)c.lens.back(), scaling_label(e).c_str());
  // without a mask it means nothing; a fine-tune is read against its parent's (T0's) windows
  const bool sliding_wanted = model.config().causal && r.train.init_from.empty();
  std::vector<double> sliding;
  for (int64_t L : c.lens) {
    if (!evaluates_at(r, L)) continue;
    const std::string path = eval_path(c, e, L);
    std::optional<EvalResult> res;
    if (!c.force) res = read_eval(path, eval_windows(c, r, L));
    if (res && (!sliding_wanted || !std::isnan(res->sliding_loss))) continue;
    if (!res) res = evaluation_at(c, r, e, model, val, L);
    if (sliding_wanted) {
      if (sliding.empty())
        sliding = run_sliding_losses(c.run_dir(r.name), model, val,
                                     c.force && e.scaling == ScalingKind::none,
                                     sliding_targets(c, r), study_positions(model.config()));
      add_sliding_loss(*res, sliding);
    }
    write_file_atomic(path, res->json() + "\n");
  }
}

// Masked LM: the loss on fixed masks, and the shuffle check: permute the input, un-permute the
// outputs, compare (a model without mask and PE cannot tell the orders apart).
MlmRow mlm_check(const RunSpec& r, const GPT& model, const std::vector<uint16_t>& val,
                 int32_t vocab_size) {
  Generator g(99);
  double vl = 0;
  int nb = 4;
  for (int i = 0; i < nb; ++i) {
    Batch b = sample_batch(val, 8, r.train.model.block_size, g, Objective::mlm, 0.15, vocab_size);
    NoGrad ng;
    vl += model.loss(b.x, b.y).item() / nb;
  }
  Batch b = sample_batch(val, 1, 64, g, Objective::mlm, 0.15, vocab_size);
  std::vector<int64_t> perm(64);
  for (int64_t i = 0; i < 64; ++i) perm[i] = (i * 37 + 11) % 64;  // a fixed permutation
  Ids shuffled = b.x;
  for (int64_t i = 0; i < 64; ++i) shuffled.data[i] = b.x.data[perm[i]];
  NoGrad ng;
  Tensor l1 = model.logits(b.x), l2 = model.logits(shuffled);
  double diff = 0;
  int64_t V = l1.size(2);
  std::vector<double> v1 = l1.to_vector(), v2 = l2.to_vector();
  for (int64_t i = 0; i < 64; ++i)
    for (int64_t v = 0; v < V; ++v)
      diff = std::max(diff, std::abs(v2[i * V + v] - v1[perm[i] * V + v]));
  return {r.name, r.scheme, static_cast<long>(r.train.seed), vl, diff};
}

// The cached loss of the kept model (last20_eval_path); nullopt when missing, unreadable or
// made with other windows.
std::optional<double> read_last20(const std::string& path, int64_t windows) {
  if (path.empty() || !fs::exists(path)) return std::nullopt;
  try {
    Json j = json_parse(read_file(path), path);
    if (static_cast<int64_t>(j.find("windows")->as_number()) == windows)
      return j.find("loss")->as_number();
  } catch (const std::exception&) {
  }
  return std::nullopt;
}

// The model kept at 80% of the steps, at T0 over the same val windows as the final model's
// evaluation at T0. A run trained before models were kept has none: nothing to do.
void evaluate_kept(const StudyConfig& c, const RunSpec& r, const std::vector<uint16_t>& val) {
  const std::string path = last20_eval_path(c, r);
  if (path.empty()) return;
  const std::string kept = kept_model_path(c.run_dir(r.name), last20_step(r.train.steps));
  const int64_t T0 = r.train.model.block_size, W = eval_windows(c, r, T0);
  if (!fs::exists(kept) || (!c.force && read_last20(path, W))) return;
  Checkpoint ck = load_checkpoint(kept, c.device);
  EvalResult res = evaluate(*ck.model, val, T0, W, std::min(c.buckets, T0), "val", nullptr, 0,
                            study_positions(ck.model->config()));
  write_file_atomic(path, res.json() + "\n");
}

// Context use inside T0 (a main run): the loss at T0 over the same windows with attention
// limited to the last StudyConfig::context_window tokens.
void evaluate_window(const StudyConfig& c, const RunSpec& r, GPT& model,
                     const std::vector<uint16_t>& val) {
  const std::string path = window_eval_path(c, r);
  if (path.empty()) return;
  const int64_t T0 = r.train.model.block_size, W = eval_windows(c, r, T0);
  if (!c.force && read_eval(path, W)) return;
  Interventions iv = study_positions(model.config());
  iv.attention_window = c.context_window;
  EvalResult res = evaluate(model, val, T0, W, std::min(c.buckets, T0), "val", nullptr, 0, iv);
  write_file_atomic(path, res.json() + "\n");
}

}  // namespace

bool evals_done(const StudyConfig& c, const StudyPlan& p, const RunSpec& r) {
  if (c.force) return false;
  for (const EvalSpec& e : p.evals)
    for (int64_t L : c.lens)
      if (e.run == r.name && evaluates_at(r, L) &&
          !read_eval(eval_path(c, e, L), eval_windows(c, r, L)))
        return false;
  const std::string kept = r.train.keep_steps.empty()
                               ? ""
                               : kept_model_path(c.run_dir(r.name), last20_step(r.train.steps));
  if (!kept.empty() && fs::exists(kept) &&
      !read_last20(last20_eval_path(c, r), eval_windows(c, r, r.train.model.block_size)))
    return false;
  if (const std::string w = window_eval_path(c, r);
      !w.empty() && !read_eval(w, eval_windows(c, r, r.train.model.block_size)))
    return false;
  return !(r.mlm_check && !fs::exists(c.run_dir(r.name) + "/mlm.csv"));
}

void evaluate_all(const StudyConfig& c, const StudyPlan& p, const RunSpec& r, GPT& model) {
  auto t0 = std::chrono::steady_clock::now();
  const std::string dir = c.run_dir(r.name);
  std::vector<std::string> vocab = load_vocab(r.train.data + "/vocab.json");
  std::vector<uint16_t> val = load_tokens(r.train.data + "/val.bin", vocab.size());
  for (const EvalSpec& e : p.evals)
    if (e.run == r.name) evaluate_run(c, r, e, model, val);
  evaluate_window(c, r, model, val);
  evaluate_kept(c, r, val);
  if (r.mlm_check && (c.force || !fs::exists(dir + "/mlm.csv")))
    write_rows<MlmRow>(dir + "/mlm.csv",
                       {mlm_check(r, model, val, static_cast<int32_t>(vocab.size()))});
  record_stage(dir, "eval " + r.name, seconds_since(t0), c.force);
}

std::string eval_path(const StudyConfig& c, const EvalSpec& e, int64_t L) {
  const std::string s = e.factor > 0 ? "_x" + std::to_string(std::llround(e.factor)) : "";
  return c.run_dir(e.run) + "/eval_" + scaling_name(e.scaling) + s + "_" + std::to_string(L) +
         ".json";
}

std::string window_eval_path(const StudyConfig& c, const RunSpec& r) {
  if (!r.probes) return "";
  return c.run_dir(r.name) + "/eval_window" + std::to_string(c.context_window) + "_" +
         std::to_string(r.train.model.block_size) + ".json";
}

std::string last20_eval_path(const StudyConfig& c, const RunSpec& r) {
  if (r.train.keep_steps.empty()) return "";
  return c.run_dir(r.name) + "/eval_step" + std::to_string(last20_step(r.train.steps)) + "_" +
         std::to_string(r.train.model.block_size) + ".json";
}

// val.bin holds uint16 ids: its size says how many windows of L + 1 tokens fit (eval.h).
int64_t eval_windows(const StudyConfig& c, const RunSpec& r, int64_t L) {
  std::error_code ec;
  const auto bytes = fs::file_size(r.train.data + "/val.bin", ec);
  if (ec) return c.eval_windows;  // not prepared yet
  const int64_t fit = (static_cast<int64_t>(bytes / 2) - 1) / L;
  return c.eval_windows > 0 ? std::min(c.eval_windows, fit) : fit;
}

int64_t sliding_targets(const StudyConfig& c, const RunSpec& r) {
  int64_t most = 0;
  for (int64_t L : c.lens)
    if (evaluates_at(r, L)) most = std::max(most, eval_windows(c, r, L) * L);
  return most;
}

bool evaluates_at(const RunSpec& r, int64_t L) {
  const PosencConfig& pe = r.train.model.pe;
  if (r.t0_only) return L == r.train.model.block_size;
  if (pe.random_positions > 0 && L > pe.random_positions) return false;  // no draw past Lmax
  return !(pe.kind == PeKind::learned && L > pe.max_len);
}

// The numbers of EvalResult::json; a missing "sliding_loss" reads as NaN (not computed).
std::optional<EvalResult> read_eval(const std::string& path, int64_t windows) {
  if (!fs::exists(path)) return std::nullopt;
  auto sliding_of = [](const Json& j) {
    const Json* s = j.find("sliding_loss");
    return s ? s->as_number() : kNotComputed;
  };
  try {
    Json j = json_parse(read_file(path), path);
    EvalResult r;
    r.loss = j.find("loss")->as_number();
    r.ppl = std::exp(r.loss);
    r.sliding_loss = sliding_of(j);
    if (const Json* se = j.find("loss_se")) r.loss_se = se->as_number();
    r.len = static_cast<int64_t>(j.find("len")->as_number());
    r.tokens = static_cast<int64_t>(j.find("tokens")->as_number());
    r.windows = static_cast<int64_t>(j.find("windows")->as_number());
    for (const Json& b : j.find("buckets")->as_array())
      r.buckets.push_back({static_cast<int64_t>(b.find("start")->as_number()),
                           static_cast<int64_t>(b.find("end")->as_number()),
                           b.find("loss")->as_number(), sliding_of(b)});
    if (r.windows == windows) return r;
  } catch (const std::exception&) {
  }
  return std::nullopt;
}

}  // namespace poslab
