// runner.cpp — one run of the study: train, evaluate, score. See runner.h.
#include "train/study/runner.h"

#include <chrono>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <thread>

#include "data/answer_mask.h"
#include "data/atomic_file.h"
#include "data/corpus.h"
#include "data/json.h"
#include "train/checkpoint.h"
#include "train/study/probes.h"
#include "train/study/sliding_cache.h"
#include "train/study/tables.h"
#include "train/study/tasks.h"
#include "train/study/timing.h"

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

// Trains unless the finished run is there; an interrupted run is continued. Returns the model;
// `trained` says whether it was (re)trained now. The training time goes to the run's
// timing.csv ("train <run>"; a resumed run adds to it).
Checkpoint ensure_trained(const StudyConfig& c, const RunSpec& r, bool& trained) {
  const std::string dir = c.run_dir(r.name);
  TrainOptions o = r.train;
  o.quiet = false;
  trained = c.force || !finished(dir, o.steps);
  if (trained) {
    std::fprintf(stderr, "%s: train (%lld steps)\n", r.name.c_str(), (long long)o.steps);
    o.force = true;
    o.resume = false;
    if (!c.force && fs::exists(dir + "/state.safetensors")) {  // an interrupted run: continue it
      o.force = false;
      o.resume = true;
      o.branch_from.clear();
    }
    // A branch whose start state is not on this machine (its main run was made elsewhere and
    // only its small files came back, archive.h) trains straight to its budget: the same
    // model, byte for byte on the same machine (the trainer's test), at 5x the steps.
    if (!o.branch_from.empty() && !fs::exists(o.branch_from)) {
      std::fprintf(stderr, "%s: %s is not here; training straight to step %lld instead\n",
                   r.name.c_str(), o.branch_from.c_str(), (long long)o.steps);
      o.branch_from.clear();
    }
    auto t0 = std::chrono::steady_clock::now();
    train(o);
    record_stage(dir, "train " + r.name, seconds_since(t0), !o.resume);
  } else {
    std::fprintf(stderr, "%s: finished earlier, reused\n", r.name.c_str());
  }
  return load_checkpoint(dir + "/model.safetensors", c.device);
}

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
  Interventions scaled;
  scaled.rope_scaling = {e.scaling, e.factor, T0};
  return evaluate(model, val, L, windows, std::min(c.buckets, L), "val", nullptr, 0, scaled);
}

// The evaluations of one EvalSpec at every length, each with the sliding-window loss on the
// same targets. The sliding pass is made once per model (sliding_cache.h) and reused by every
// length and scaling; under --force it is remade once, with the plain (unscaled) spec. An
// evaluation cached without a sliding loss only gets it added.
void evaluate_run(const StudyConfig& c, const RunSpec& r, const EvalSpec& e, GPT& model,
                  const std::vector<uint16_t>& val) {
  std::fprintf(stderr, "%s: evaluate at %lld..%lld (scaling %s)\n", r.name.c_str(),
               (long long)c.lens.front(), (long long)c.lens.back(), scaling_name(e.scaling));
  // without a mask it means nothing; a fine-tuned run's T0 windows would need its own scaling
  const bool sliding_wanted = model.config().causal && e.factor == 0;
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
        sliding =
            run_sliding_losses(c.run_dir(r.name), model, val,
                               c.force && e.scaling == ScalingKind::none, sliding_targets(c, r));
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
  return {r.name, pe_name(r.train.model.pe.kind), static_cast<long>(r.train.seed), vl, diff};
}

// Every test cell of the run's task (each passkey length at each depth; unscramble's test_lens
// are word counts k): n fresh examples, the same for every scheme and seed (one fixed seed per
// cell), exact-match accuracy with its Wilson interval, per-character accuracy.
std::vector<TaskRow> task_scores(const RunSpec& r, const GPT& model) {
  const TaskSpec& t = *r.task;
  std::vector<std::string> vocab = load_vocab(t.data + "/vocab.json");
  std::vector<double> depths = t.depths;
  if (depths.empty()) depths = {NAN};  // not applicable: an empty cell in tasks.csv
  std::vector<TaskRow> rows;
  uint64_t cell_seed = 1000;  // the corpus is drawn from seed 7 (prepare_study_data)
  for (int64_t len : t.test_lens)
    for (double depth : depths) {
      TaskScore sc =
          task_accuracy(model, vocab, t.name, {len, depth}, t.test_examples, ++cell_seed);
      Interval ci = wilson_interval(sc.correct, sc.n);
      rows.push_back({.task = t.name,
                      .pe = pe_name(r.train.model.pe.kind),
                      .seed = static_cast<long>(r.train.seed),
                      .train_len = trained_length(t.name, t.train_len),
                      .test_len = len,
                      .depth = depth,
                      .n = sc.n,
                      .correct = sc.correct,
                      .accuracy = sc.accuracy(),
                      .ci_low = ci.low,
                      .ci_high = ci.high,
                      .k = t.name == "unscramble" ? static_cast<double>(len) : NAN,
                      .char_accuracy = sc.char_accuracy()});
    }
  return rows;
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
  EvalResult res = evaluate(*ck.model, val, T0, W, std::min(c.buckets, T0), "val");
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
  Interventions iv;
  iv.attention_window = c.context_window;
  EvalResult res = evaluate(model, val, T0, W, std::min(c.buckets, T0), "val", nullptr, 0, iv);
  write_file_atomic(path, res.json() + "\n");
}

// True when every evaluation of the run, its kept model's and its masked-LM check are there.
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

// The evaluations, the kept model's, the masked-LM check: one stage, "eval <run>".
void evaluate_all(const StudyConfig& c, const StudyPlan& p, const RunSpec& r, GPT& model) {
  auto t0 = std::chrono::steady_clock::now();
  const std::string dir = c.run_dir(r.name);
  std::vector<std::string> vocab = load_vocab(r.train.data + "/vocab.json");
  std::vector<uint16_t> val = load_tokens(r.train.data + "/val.bin", vocab.size());
  for (const EvalSpec& e : p.evals)
    if (e.run == r.name) evaluate_run(c, r, e, model, val);
  evaluate_window(c, r, model, val);
  evaluate_kept(c, r, val);
  if (r.mlm_check && !reuse(c, dir + "/mlm.csv"))
    write_rows<MlmRow>(dir + "/mlm.csv",
                       {mlm_check(r, model, val, static_cast<int32_t>(vocab.size()))});
  record_stage(dir, "eval " + r.name, seconds_since(t0), c.force);
}

// The probes of a main run (probes.h) at the study's longest length, each file made unless
// there: one stage, "probe <run>".
void make_probes(const StudyConfig& c, const RunSpec& r, GPT& model) {
  const std::string dir = c.run_dir(r.name);
  auto t0 = std::chrono::steady_clock::now();
  std::vector<std::string> vocab = load_vocab(r.train.data + "/vocab.json");
  std::vector<uint16_t> val = load_tokens(r.train.data + "/val.bin", vocab.size());
  const int64_t L = c.lens.back();
  bool made = false;
  if (!reuse(c, dir + "/attribution.csv")) {
    std::fprintf(stderr, "%s: attribution at %lld\n", r.name.c_str(), (long long)L);
    write_rows(dir + "/attribution.csv", attribution_rows(r, model, val, L, c.probe_windows));
    made = true;
  }
  if (!reuse(c, dir + "/copy.csv")) {
    std::fprintf(stderr, "%s: copy at a distance up to %lld\n", r.name.c_str(), (long long)L);
    write_rows(dir + "/copy.csv", copy_rows(r, model, val, vocab, L, c.copy_examples));
    made = true;
  }
  if (r.train.model.pe.kind == PeKind::rope && !reuse(c, dir + "/rope_pairs.csv")) {
    std::fprintf(stderr, "%s: RoPE pairs at %lld\n", r.name.c_str(), (long long)L);
    write_rows(dir + "/rope_pairs.csv", rope_pair_rows(r, model, val, L, c.probe_windows));
    made = true;
  }
  if (made) record_stage(dir, "probe " + r.name, seconds_since(t0), c.force);
}

// A run that starts from another's model (a fine-tune) needs that model here. The plan makes
// it in the parent's job, right after the parent; a parent made elsewhere (only its small files
// came back, archive.h) is trained again here, its measurements kept.
void ensure_parent_model(const StudyConfig& c, const RunSpec& parent, const RunSpec& r) {
  if (r.train.init_from.empty() || fs::exists(r.train.init_from)) return;
  std::fprintf(stderr, "%s: %s is not here; training %s again for it\n", r.name.c_str(),
               r.train.init_from.c_str(), parent.name.c_str());
  bool trained = false;
  StudyConfig keep = c;
  keep.force = false;
  ensure_trained(keep, parent, trained);
}

// done.json: what the run was made with (its training options as a command line would give
// them), written last; a run is done when it is there and says the same.
std::string done_path(const StudyConfig& c, const RunSpec& r) {
  return c.run_dir(r.name) + "/done.json";
}

// A task corpus made earlier is reused when it is complete (val.mask is written last) and of
// this plan's shape: as many examples, of train_len + 1 tokens.
bool task_corpus_ready(const TaskSpec& t) {
  const std::string mask = t.data + "/val.mask";
  if (!fs::exists(mask) || !fs::exists(t.data + "/train.bin")) return false;
  try {
    const int64_t E = t.train_len + 1;
    return load_answer_mask(mask, t.val_examples * E).example_len == E &&
           static_cast<int64_t>(fs::file_size(t.data + "/train.bin")) == 2 * t.train_examples * E;
  } catch (const std::exception&) {
    return false;
  }
}

}  // namespace

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

std::string run_signature(const RunSpec& r) {
  const TrainOptions& o = r.train;
  const GPTConfig& m = o.model;
  char b[512];
  std::snprintf(b, sizeof b,
                "pe=%s seed=%llu steps=%lld batch=%lld ctx=%lld d=%lld layers=%lld heads=%lld "
                "lr=%.17g schedule=%s decay=%.17g warmup=%lld embedding=%s causal=%d "
                "objective=%s theta=%.17g max_len=%lld t5_max_distance=%lld",
                pe_name(m.pe.kind), (unsigned long long)o.seed, (long long)o.steps,
                (long long)o.batch, (long long)m.block_size, (long long)m.n_embd,
                (long long)m.n_layer, (long long)m.n_head, o.adam.lr, schedule_name(o.schedule),
                o.decay_share, (long long)o.warmup, embedding_name(m.embedding), m.causal ? 1 : 0,
                objective_name(o.objective), m.pe.theta, (long long)m.pe.max_len,
                (long long)m.pe.t5_max_distance);
  return b;
}

std::string done_field(const StudyConfig& c, const RunSpec& r, const char* key) {
  try {
    const Json j = json_parse(read_file(done_path(c, r)), done_path(c, r));
    const Json* v = j.find(key);
    return v ? v->as_string() : "";
  } catch (const std::exception&) {
    return "";
  }
}

bool marked_done(const StudyConfig& c, const RunSpec& r) {
  const std::string path = done_path(c, r);
  if (!fs::exists(path)) return false;
  try {
    const Json j = json_parse(read_file(path), path);
    const Json* sig = j.find("signature");
    return sig && sig->as_string() == run_signature(r);
  } catch (const std::exception&) {
    return false;
  }
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
  if (r.t0_only) return L == r.train.model.block_size;
  return !(r.train.model.pe.kind == PeKind::learned && L > r.train.model.pe.max_len);
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

void prepare_study_data(const StudyConfig& c, const StudyPlan& p) {
  for (const std::string& corpus : p.corpora()) {
    const std::string dir = c.corpus_dir(corpus);
    const TaskSpec* task = nullptr;
    for (const TaskSpec& t : p.tasks)
      if (t.data == dir) task = &t;
    if (!c.force && (task ? task_corpus_ready(*task) : fs::exists(dir + "/val.bin"))) continue;
    std::fprintf(stderr, "prepare %s -> %s\n", corpus.c_str(), dir.c_str());
    auto t0 = std::chrono::steady_clock::now();
    if (task)  // examples drawn from seed 7; the test cells use other seeds (task_scores)
      write_task_corpus(task->name, task->train_len, task->train_examples, task->val_examples, 7,
                        dir);
    else
      write_corpus(prepare_corpus(corpus), dir);
    record_stage(dir, "prepare " + corpus, seconds_since(t0), true);
  }
}

bool run_done(const StudyConfig& c, const StudyPlan& p, const RunSpec& r) {
  if (c.force) return false;
  if (marked_done(c, r)) return true;
  if (!finished(c.run_dir(r.name), r.train.steps)) return false;
  for (const std::string& f : probe_files(r))
    if (!fs::exists(c.run_dir(r.name) + "/" + f)) return false;
  return evals_done(c, p, r) && !(r.task && !fs::exists(c.run_dir(r.name) + "/tasks.csv"));
}

std::vector<std::string> probe_files(const RunSpec& r) {
  if (!r.probes) return {};
  std::vector<std::string> files{"attribution.csv", "copy.csv"};
  if (r.train.model.pe.kind == PeKind::rope) files.push_back("rope_pairs.csv");
  return files;
}

void make_run(const StudyConfig& config, const StudyPlan& p, const RunSpec& r) {
  if (!r.after.empty()) ensure_parent_model(config, p.run(r.after), r);
  bool trained = false;
  Checkpoint ck = ensure_trained(config, r, trained);
  StudyConfig c = config;
  c.force = config.force || trained;  // a model trained now: no measurement of an older one stays
  const std::string dir = c.run_dir(r.name);
  if (!evals_done(c, p, r)) evaluate_all(c, p, r, *ck.model);
  if (r.probes) make_probes(c, r, *ck.model);
  if (r.task && !reuse(c, dir + "/tasks.csv")) {
    auto t0 = std::chrono::steady_clock::now();
    write_rows(dir + "/tasks.csv", task_scores(r, *ck.model));
    record_stage(dir, "tasks " + r.name, seconds_since(t0), c.force);
  }
  write_file_atomic(done_path(c, r), "{\"run\":" + json_quote(r.name) +
                                         ",\"signature\":" + json_quote(run_signature(r)) +
                                         ",\"machine\":" + json_quote(machine_description()) +
                                         ",\"invocation\":" + json_quote(study_invocation()) +
                                         "}\n");
}

std::vector<const RunSpec*> children(const StudyPlan& p, const RunSpec& r) {
  std::vector<const RunSpec*> out;
  for (const RunSpec& x : p.runs)
    if (x.after == r.name) out.push_back(&x);
  return out;
}

void make_job(const StudyConfig& c, const StudyPlan& p, const RunSpec& r) {
  if (!run_done(c, p, r)) make_run(c, p, r);
  for (const RunSpec* child : children(p, r))
    if (!run_done(c, p, *child)) make_run(c, p, *child);
}

}  // namespace poslab
