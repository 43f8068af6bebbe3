// runner.cpp — one run of the study: train, evaluate, score. See runner.h.
#include "train/study/runner.h"

#include <chrono>
#include <cmath>
#include <cstdio>
#include <filesystem>

#include "data/atomic_file.h"
#include "data/corpus.h"
#include "data/json.h"
#include "train/checkpoint.h"
#include "train/study/sliding_cache.h"
#include "train/study/tables.h"
#include "train/study/tasks.h"

namespace poslab {
namespace fs = std::filesystem;

namespace {

bool finished(const std::string& run_dir, int64_t steps) {
  std::string p = run_dir + "/model.safetensors";
  if (!fs::exists(p)) return false;
  try {
    return load_checkpoint(p).step == steps;
  } catch (const std::exception&) {
    return false;
  }
}

bool reuse(const StudyConfig& c, const std::string& path) {
  return !c.force && fs::exists(path);
}

// Trains unless the finished run is there; an interrupted run is continued. Returns the model.
Checkpoint ensure_trained(const StudyConfig& c, const RunSpec& r) {
  const std::string dir = c.run_dir(r.name);
  TrainOptions o = r.train;
  o.quiet = false;
  if (c.force || !finished(dir, o.steps)) {
    std::fprintf(stderr, "%s: train (%lld steps)\n", r.name.c_str(), (long long)o.steps);
    o.force = true;
    o.resume = false;
    if (!c.force && fs::exists(dir + "/state.safetensors")) {  // an interrupted run: continue it
      o.force = false;
      o.resume = true;
    }
    auto t0 = std::chrono::steady_clock::now();
    train(o);
    double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    write_file_atomic(dir + "/train_seconds.txt", csv_number(secs) + "\n");
  } else {
    std::fprintf(stderr, "%s: finished earlier, reused\n", r.name.c_str());
  }
  return load_checkpoint(dir + "/model.safetensors", c.device);
}

// One evaluation at length L under e's scaling (16 position buckets). At L <= T0 every RoPE
// scaling has s = 1 and is plain RoPE (docs/model.md), so the plain evaluation is reused when
// it is there (the plan evaluates a run unscaled first).
EvalResult evaluation_at(const StudyConfig& c, const EvalSpec& e, GPT& model,
                         const std::vector<uint16_t>& val, int64_t L) {
  constexpr int64_t kBuckets = 16;
  const int64_t T0 = model.config().block_size, windows = eval_windows(c, L);
  if (e.scaling != ScalingKind::none && L <= T0) {
    EvalSpec plain = e;
    plain.scaling = ScalingKind::none;
    if (std::optional<EvalResult> r = read_eval(eval_path(c, plain, L), windows)) return *r;
  }
  model.posenc().set_scaling({e.scaling, 0, T0});
  EvalResult r = evaluate(model, val, L, windows, std::min(kBuckets, L), "val");
  model.posenc().set_scaling({ScalingKind::none, 0, T0});
  return r;
}

// The evaluations of one EvalSpec at every length, each with the sliding-window loss on the
// same targets. The sliding pass is made once per model (sliding_cache.h) and reused by every
// length and scaling; under --force it is remade once, with the plain (unscaled) spec. An
// evaluation cached without a sliding loss only gets it added.
void evaluate_run(const StudyConfig& c, const RunSpec& r, const EvalSpec& e, GPT& model,
                  const std::vector<uint16_t>& val) {
  std::fprintf(stderr, "%s: evaluate at %lld..%lld (scaling %s)\n", r.name.c_str(),
               (long long)c.lens.front(), (long long)c.lens.back(), scaling_name(e.scaling));
  const bool sliding_wanted = model.config().causal;  // without a mask it means nothing
  std::vector<double> sliding;
  for (int64_t L : c.lens) {
    if (!evaluates_at(r, L)) continue;
    const std::string path = eval_path(c, e, L);
    std::optional<EvalResult> res;
    if (!c.force) res = read_eval(path, eval_windows(c, L));
    if (res && (!sliding_wanted || !std::isnan(res->sliding_loss))) continue;
    if (!res) res = evaluation_at(c, e, model, val, L);
    if (sliding_wanted) {
      if (sliding.empty())
        sliding = run_sliding_losses(c.run_dir(r.name), model, val,
                                     c.force && e.scaling == ScalingKind::none);
      add_sliding_loss(*res, sliding);
    }
    write_file_atomic(path, res->json() + "\n");
  }
}

// Masked LM: the loss on fixed masks, and the shuffle check: permute the input, un-permute the
// outputs, compare (a model without mask and PE cannot tell the orders apart).
MlmRow mlm_check(const StudyConfig& c, const RunSpec& r, const GPT& model,
                 const std::vector<uint16_t>& val, int32_t vocab_size) {
  Generator g(99);
  double vl = 0;
  int nb = 4;
  for (int i = 0; i < nb; ++i) {
    Batch b = sample_batch(val, 8, c.ctx, g, "mlm", 0.15, vocab_size);
    NoGrad ng;
    vl += model.loss(b.x, b.y).item() / nb;
  }
  Batch b = sample_batch(val, 1, 64, g, "mlm", 0.15, vocab_size);
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
  return {pe_name(r.train.model.pe), vl, diff};
}

std::vector<TaskRow> task_scores(const RunSpec& r, const GPT& model) {
  const TaskSpec& t = *r.task;
  std::vector<std::string> vocab = load_vocab(t.data + "/vocab.json");
  std::vector<TaskRow> rows;
  const std::string pe = pe_name(r.train.model.pe);
  for (int64_t len : t.test_lens) {
    TaskScore sc = task_accuracy(model, vocab, t.name, len, t.test_examples, 1234);
    rows.push_back({t.name, pe, t.train_len, len, sc.exact});
    rows.push_back({t.name + " per character", pe, t.train_len, len, sc.per_char});
  }
  return rows;
}

}  // namespace

std::string eval_path(const StudyConfig& c, const EvalSpec& e, int64_t L) {
  return c.run_dir(e.run) + "/eval_" + scaling_name(e.scaling) + "_" + std::to_string(L) + ".json";
}

int64_t eval_windows(const StudyConfig& c, int64_t L) {
  return std::max<int64_t>(1, c.eval_tokens / L);
}

bool evaluates_at(const RunSpec& r, int64_t L) {
  return !(r.train.model.pe == PeKind::learned && L > r.train.model.max_len);
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

void prepare_study_data(const StudyConfig& c, const StudyPlan& p) {
  if (c.force || !fs::exists(c.data() + "/val.bin"))
    write_corpus(prepare_corpus("fortunes"), c.data());
  for (const TaskSpec& t : p.tasks)
    if (c.force || !fs::exists(t.data + "/val.bin"))
      write_corpus(build_corpus(task_text(t.name, t.lines, t.train_len, 7)), t.data);
}

bool run_done(const StudyConfig& c, const StudyPlan& p, const RunSpec& r) {
  const std::string dir = c.run_dir(r.name);
  if (c.force || !finished(dir, r.train.steps)) return false;
  for (const EvalSpec& e : p.evals)
    for (int64_t L : c.lens)
      if (e.run == r.name && evaluates_at(r, L) &&
          !read_eval(eval_path(c, e, L), eval_windows(c, L)))
        return false;
  if (r.mlm_check && !fs::exists(dir + "/mlm.csv")) return false;
  return !(r.task && !fs::exists(dir + "/tasks.csv"));
}

void make_run(const StudyConfig& c, const StudyPlan& p, const RunSpec& r) {
  Checkpoint ck = ensure_trained(c, r);
  const std::string dir = c.run_dir(r.name);
  std::vector<std::string> vocab = load_vocab(r.train.data + "/vocab.json");
  std::vector<uint16_t> val = load_tokens(r.train.data + "/val.bin", vocab.size());
  for (const EvalSpec& e : p.evals)
    if (e.run == r.name) evaluate_run(c, r, e, *ck.model, val);
  if (r.mlm_check && !reuse(c, dir + "/mlm.csv"))
    write_rows<MlmRow>(dir + "/mlm.csv",
                       {mlm_check(c, r, *ck.model, val, static_cast<int32_t>(vocab.size()))});
  if (r.task && !reuse(c, dir + "/tasks.csv"))
    write_rows(dir + "/tasks.csv", task_scores(r, *ck.model));
}

}  // namespace poslab
