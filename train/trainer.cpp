#include "train/trainer.h"

#include "posenc/random_positions.h"

#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <csignal>
#include <cstdio>
#include <filesystem>
#include <map>

#include "data/answer_mask.h"
#include "data/atomic_file.h"
#include "data/corpus.h"
#include "train/checkpoint.h"
#include "train/log.h"
#include "train/progress.h"

namespace poslab {
namespace fs = std::filesystem;

namespace {

volatile std::sig_atomic_t g_interrupted = 0;
void on_sigint(int) {
  g_interrupted = 1;
}

std::string fmt(double v, const char* f = "%.6g") {
  char b[64];
  std::snprintf(b, sizeof b, f, v);
  return b;
}

// state.safetensors: weights, m.*, v.* and the scalars needed to resume exactly.
void save_state(const std::string& path, const AdamW& opt, const std::vector<Tensor>& m,
                const std::vector<Tensor>& v, int64_t step, const Generator& gen) {
  std::vector<StTensor> ts;
  const auto& ps = opt.params();
  for (size_t i = 0; i < ps.size(); ++i) ts.push_back(to_st(ps[i].name, ps[i].tensor));
  for (size_t i = 0; i < ps.size(); ++i) ts.push_back(to_st("m." + ps[i].name, m[i]));
  for (size_t i = 0; i < ps.size(); ++i) ts.push_back(to_st("v." + ps[i].name, v[i]));
  StMetadata meta{{"step", std::to_string(step)}};
  auto st = gen.state();
  for (size_t i = 0; i < st.size(); ++i)
    meta.push_back({"rng" + std::to_string(i), std::to_string(st[i])});
  save_safetensors(path, ts, meta);
}

int64_t load_state(const std::string& path, AdamW& opt, Generator& gen) {
  StFile f = load_safetensors(path);
  std::map<std::string, const StTensor*> by;
  for (auto& t : f.tensors) by[t.name] = &t;
  std::map<std::string, std::string> meta(f.metadata.begin(), f.metadata.end());
  const auto& ps = opt.params();
  for (size_t i = 0; i < ps.size(); ++i) {
    for (auto [prefix, dst] : {std::pair<std::string, Tensor>{"", ps[i].tensor},
                               {"m.", opt.m()[i]},
                               {"v.", opt.v()[i]}}) {
      auto it = by.find(prefix + ps[i].name);
      if (it == by.end())
        fail(path, ": tensor '", prefix + ps[i].name,
             "' is missing; was this run trained with other flags?");
      from_st(*it->second, dst, path);
    }
  }
  std::vector<uint64_t> st;
  for (int i = 0; i < 6; ++i) {
    auto it = meta.find("rng" + std::to_string(i));
    if (it == meta.end()) fail(path, ": __metadata__ lacks rng", i);
    st.push_back(std::stoull(it->second));
  }
  gen.set_state(st);
  auto it = meta.find("step");
  if (it == meta.end()) fail(path, ": __metadata__ lacks step");
  return std::stoll(it->second);
}

}  // namespace

const std::vector<std::string>& objective_names() {
  static const std::vector<std::string> names{"lm", "mlm", "answer"};  // Objective's order
  return names;
}

Objective parse_objective(const std::string& name) {
  return static_cast<Objective>(name_index(objective_names(), name, "--objective"));
}

const char* objective_name(Objective objective) {
  return objective_names()[static_cast<int>(objective)].c_str();
}

Batch sample_batch(const std::vector<uint16_t>& tokens, int64_t B, int64_t T, Generator& gen,
                   Objective objective, double mask_frac, int32_t mask_id) {
  int64_t n = static_cast<int64_t>(tokens.size());
  if (n < T + 1) fail("train: the split holds ", n, " tokens, fewer than --ctx + 1 = ", T + 1);
  Batch b{{std::vector<int32_t>(B * T), {B, T}}, {std::vector<int32_t>(B * T), {B, T}}};
  bool mlm = objective == Objective::mlm;
  int64_t masked = 0;
  for (int64_t i = 0; i < B; ++i) {
    int64_t o = static_cast<int64_t>(gen.next_u64() % static_cast<uint64_t>(n - T));
    for (int64_t t = 0; t < T; ++t) {
      int32_t tok = tokens[o + t];
      if (!mlm) {
        b.x.data[i * T + t] = tok;
        b.y.data[i * T + t] = tokens[o + t + 1];
      } else if (gen.uniform() < mask_frac) {
        b.x.data[i * T + t] = mask_id;
        b.y.data[i * T + t] = tok;
        ++masked;
      } else {
        b.x.data[i * T + t] = tok;
        b.y.data[i * T + t] = -1;
      }
    }
  }
  if (mlm && masked == 0) {  // keep the loss defined: mask the first token
    b.y.data[0] = b.x.data[0];
    b.x.data[0] = mask_id;
  }
  return b;
}

std::string kept_model_path(const std::string& out, int64_t step) {
  return out + "/model_step" + std::to_string(step) + ".safetensors";
}

std::string kept_state_path(const std::string& out, int64_t step) {
  return out + "/state_step" + std::to_string(step) + ".safetensors";
}

LrSchedule lr_schedule(const TrainOptions& o) {
  LrSchedule c;
  c.kind = o.schedule;
  c.warmup = o.warmup >= 0 ? o.warmup : std::min<int64_t>(100, o.steps / 10);
  c.total = o.steps;
  c.max_lr = o.adam.lr;
  c.min_lr = o.adam.lr * o.min_lr_ratio;
  c.decay_share = o.decay_share;
  return c;
}

Batch sample_answer_batch(const std::vector<uint16_t>& tokens, const std::vector<uint8_t>& marks,
                          int64_t B, int64_t T, Generator& gen) {
  const int64_t E = T + 1, n = static_cast<int64_t>(tokens.size()) / E;
  if (n == 0 || static_cast<int64_t>(marks.size()) != n * E)
    fail("train: expected a split of whole examples of --ctx + 1 = ", E, " tokens with a mark ",
         "per token, but got ", tokens.size(), " tokens and ", marks.size(), " marks");
  Batch b{{std::vector<int32_t>(B * T), {B, T}}, {std::vector<int32_t>(B * T), {B, T}}};
  for (int64_t i = 0; i < B; ++i) {
    const int64_t o = static_cast<int64_t>(gen.next_u64() % static_cast<uint64_t>(n)) * E;
    for (int64_t t = 0; t < T; ++t) {
      b.x.data[i * T + t] = tokens[o + t];
      // the target of input position t is token t+1 of the example: kept only on the answer
      b.y.data[i * T + t] = marks[o + t + 1] == mark_answer ? tokens[o + t + 1] : -1;
    }
  }
  return b;
}

void validate(const TrainOptions& o) {
  if (o.steps <= 0) fail("--steps: expected a positive number of steps, but got ", o.steps);
  if (o.batch <= 0) fail("--batch: expected a positive batch size, but got ", o.batch);
  if (o.model.block_size <= 0)
    fail("--ctx: expected a positive context length, but got ", o.model.block_size);
  if (!(o.adam.lr > 0) || !std::isfinite(o.adam.lr))
    fail("--lr: expected a positive learning rate, but got ", o.adam.lr);
  if (o.objective == Objective::answer && !o.model.causal)
    fail(
        "--causal false with --objective answer: without the mask every position sees the "
        "answer it is asked for; train task corpora causal");
  if (o.objective == Objective::lm && !o.model.causal)
    fail(
        "--causal false: next-token training without a mask is ill-posed (each position sees its "
        "target); use --objective mlm");
  if (o.resume && o.force) fail("--resume and --force: choose one");
  for (int64_t k : o.keep_steps)
    if (k < 1 || k > o.steps)
      fail("keep_steps: expected steps in 1..--steps ", o.steps, ", but got ", k);
  if (!(o.decay_share > 0 && o.decay_share <= 1))
    fail("--decay-share: expected a share in (0, 1], but got ", o.decay_share);
  if (!o.branch_from.empty() && o.schedule != Schedule::wsd)
    fail("--branch-from ", o.branch_from,
         ": a cooldown branch needs --schedule wsd (a cosine run has no constant phase)");
  if (!o.branch_from.empty() && o.resume)
    fail("--branch-from and --resume: a branch resumes from its own folder; drop --branch-from");
  if (o.data.empty()) fail("--data: required (a folder made by `poslab prepare`)");
  if (o.out.empty()) fail("--out: required (the run directory)");
  GPTConfig c = o.model;
  if (c.vocab_size == 0) c.vocab_size = 1;
  c.validate();
}

namespace {

// The split tokens of the corpus; for mlm the vocabulary gains one id, the mask token; for
// answer each split has its answer marks (data/answer_mask.h).
struct TrainData {
  std::vector<uint16_t> train, val;
  int32_t mask_id = 0;
  std::vector<uint8_t> train_marks, val_marks;
};

// answer: <data>/<split>.mask must exist and hold examples of exactly --ctx + 1 tokens.
std::vector<uint8_t> load_marks(const TrainOptions& o, const char* split, size_t n_tokens) {
  const std::string path = o.data + "/" + split + ".mask";
  if (!fs::exists(path))
    fail("--objective answer: ", path,
         " does not exist; it needs a task corpus, whose splits carry an answer mask "
         "(docs/formats.md)");
  AnswerMask m = load_answer_mask(path, n_tokens);
  if (m.example_len != o.model.block_size + 1)
    fail("--ctx ", o.model.block_size, ": the examples of ", path, " are ", m.example_len,
         " tokens long, so train with --ctx ", m.example_len - 1);
  return std::move(m.marks);
}

TrainData load_train_data(TrainOptions& o) {
  std::vector<std::string> vocab = load_vocab(o.data + "/vocab.json");
  TrainData d;
  d.train = load_tokens(o.data + "/train.bin", vocab.size());
  d.val = load_tokens(o.data + "/val.bin", vocab.size());
  d.mask_id = static_cast<int32_t>(vocab.size());
  if (o.objective == Objective::answer) {
    d.train_marks = load_marks(o, "train", d.train.size());
    d.val_marks = load_marks(o, "val", d.val.size());
  }
  o.model.vocab_size = static_cast<int64_t>(vocab.size()) + (o.objective == Objective::mlm ? 1 : 0);
  return d;
}

// The run directory: never overwrite a run by accident.
void prepare_run_dir(const TrainOptions& o) {
  std::string model_path = o.out + "/model.safetensors", state_path = o.out + "/state.safetensors";
  bool exists = fs::exists(state_path) || fs::exists(model_path);
  if (exists && !o.resume && !o.force)
    fail("--out ", o.out,
         ": already holds a run; pass --resume to continue it or --force to start over");
  if (o.resume && !fs::exists(state_path))
    fail("--resume: ", state_path, " does not exist; nothing to resume");
  std::error_code ec;
  fs::create_directories(o.out, ec);
  if (ec) fail("--out ", o.out, ": cannot create the directory: ", ec.message());
  // a run killed during a write leaves its temporary file (name.tmp.<pid>) beside the intact
  // target; the next start removes such leftovers
  for (const auto& e : fs::directory_iterator(o.out, ec))
    if (e.path().filename().string().find(".tmp.") != std::string::npos) fs::remove(e.path(), ec);
  // fails here, not after an hour, if unwritable; the vocabulary travels with the run
  // (`poslab generate` reads it from beside the checkpoint)
  write_file_atomic(o.out + "/vocab.json", read_file(o.data + "/vocab.json"));
}

// One training run: the model, its optimizer, the batch sampler and the log.
class Trainer {
 public:
  Trainer(const TrainOptions& o, TrainData data)
      : o_(o),
        data_(std::move(data)),
        model_(o_.model, o_.seed),
        adam_(model_.parameters(), o_.adam),
        gen_(o_.seed ^ 0x9e3779b97f4a7c15ULL) {  // the batch sampler
    for (const NamedParam& p : adam_.params()) params_.push_back(p.tensor);
    if (!o_.init_from.empty()) start_from(o_.init_from);
    scaled_.rope_scaling = o_.rope_scaling;
  }
  // --resume: the state of the last checkpoint. False when the run had already finished.
  bool resume();
  // --branch-from: the state another run kept in its constant phase, and its log up to there.
  void branch(const std::string& state_file);
  int64_t start() const { return start_; }
  TrainResult run();

 private:
  std::string path(const char* file) const { return o_.out + "/" + file; }
  void start_from(const std::string& ckpt);
  void checkpoint(int64_t step);
  Batch sample(bool val, Generator& gen) const;  // a batch of the train or the val split
  // Every forward's interventions: the RoPE scaling, and under --random-positions the batch's
  // drawn positions, seeded by the run's seed and `step` (val batch i: step -1 - i), so that
  // a resumed run draws the same (posenc/random_positions.h).
  Interventions drawn(const Batch& b, int64_t step) const;
  double val_loss();
  double step(int64_t step, double lr);  // one update; returns its loss

  TrainOptions o_;
  TrainData data_;
  GPT model_;
  AdamW adam_;
  Generator gen_;
  std::vector<Tensor> params_;  // built once; zero_grad keeps their buffers
  Interventions scaled_;        // every forward's RoPE scaling (--rope-scaling: a fine-tune)
  std::vector<LogRow> log_;
  int64_t start_ = 0;
  double grad_norm_ = 0;
};

// The weights of `ckpt` copied into the model, name by name (a fine-tune's start).
void Trainer::start_from(const std::string& ckpt) {
  Checkpoint src = load_checkpoint(ckpt);
  std::vector<NamedParam> from = src.model->parameters(), to = model_.parameters();
  if (from.size() != to.size())
    fail("--init-from ", ckpt, ": holds ", from.size(), " tensors, but the model has ", to.size());
  NoGrad no_grad;
  for (size_t i = 0; i < to.size(); ++i) {
    if (from[i].name != to[i].name || from[i].tensor.shape() != to[i].tensor.shape())
      fail("--init-from ", ckpt, ": tensor '", from[i].name, "' ",
           shape_str(from[i].tensor.shape()), " does not match the model's '", to[i].name, "' ",
           shape_str(to[i].tensor.shape()));
    to[i].tensor.copy_(from[i].tensor.to(to[i].tensor.device()));
  }
}

bool Trainer::resume() {
  start_ = load_state(path("state.safetensors"), adam_, gen_);
  adam_.set_steps_taken(start_);
  for (const LogRow& r : read_log(path("log.csv")))
    if (r.step <= start_) log_.push_back(r);
  // A kill between the state write and the weights write (see `checkpoint` below) leaves
  // model.safetensors behind the state: rewrite it from the weights just loaded.
  int64_t model_step = -1;
  try {
    model_step = load_checkpoint(path("model.safetensors")).step;
  } catch (const std::exception&) {  // missing: killed before its first write
  }
  if (model_step == start_) return true;
  save_checkpoint(model_, start_, path("model.safetensors"));
  if (start_ < o_.steps) return true;
  // killed after the final state, before the final weights
  if (!o_.quiet)
    std::fprintf(stderr, "train: the run had finished at step %lld; %s rewritten from %s\n",
                 static_cast<long long>(start_), path("model.safetensors").c_str(),
                 path("state.safetensors").c_str());
  return false;
}

void Trainer::branch(const std::string& state_file) {
  start_ = load_state(state_file, adam_, gen_);
  adam_.set_steps_taken(start_);
  const int64_t decay_start = lr_schedule(o_).decay_start();
  if (start_ > decay_start)
    fail("--branch-from ", state_file, ": its step ", start_, " is past this run's decay start ",
         decay_start, " (--steps ", o_.steps, ", --decay-share ", o_.decay_share,
         "); the learning rates would differ from a straight run");
  const std::string log = fs::path(state_file).parent_path().string() + "/log.csv";
  if (fs::exists(log))
    for (const LogRow& r : read_log(log))
      if (r.step <= start_) log_.push_back(r);
  checkpoint(start_);  // the branch's own folder now resumes like any run
}

// The order matters for a kill between two writes (each write is atomic on its own):
// the log first (a resume drops rows past the state's step), then the state, then the
// weights. So the state is never behind model.safetensors, and when a kill lands between
// the last two, the resume above finds the model behind the state and rewrites it.
void Trainer::checkpoint(int64_t step) {
  write_file_atomic(path("log.csv"), log_text(log_));
  save_state(path("state.safetensors"), adam_, adam_.m(), adam_.v(), step, gen_);
  save_checkpoint(model_, step, path("model.safetensors"));
}

Batch Trainer::sample(bool val, Generator& gen) const {
  const std::vector<uint16_t>& tokens = val ? data_.val : data_.train;
  if (o_.objective == Objective::answer)
    return sample_answer_batch(tokens, val ? data_.val_marks : data_.train_marks, o_.batch,
                               o_.model.block_size, gen);
  return sample_batch(tokens, o_.batch, o_.model.block_size, gen, o_.objective, o_.mask_frac,
                      data_.mask_id);
}

Interventions Trainer::drawn(const Batch& b, int64_t step) const {
  Interventions iv = scaled_;
  const int64_t Lmax = o_.model.pe.random_positions;
  if (Lmax > 0)
    iv.positions =
        draw_position_rows(b.x.shape[0], b.x.shape[1], Lmax, position_seed(o_.seed, step), 0);
  return iv;
}

// The mean loss over fixed val batches: for answer, over their answer tokens only.
double Trainer::val_loss() {
  NoGrad ng;
  Generator eg(o_.seed + 7);  // the same val batches every time
  double s = 0;
  for (int64_t i = 0; i < o_.eval_batches; ++i) {
    Batch b = sample(true, eg);
    s += model_.loss(b.x, b.y, nullptr, drawn(b, -1 - i)).item();
  }
  return s / o_.eval_batches;
}

double Trainer::step(int64_t step, double lr) {
  Batch b = sample(false, gen_);
  zero_grad(params_);
  Tensor loss = model_.loss(b.x, b.y, nullptr, drawn(b, step));
  double l = loss.item();
  if (!std::isfinite(l))
    fail("train: step ", step + 1, ": the loss is ", l,
         "; stopping. The last good checkpoint stays in ", o_.out);
  backward(loss);
  grad_norm_ = clip_grad_norm(adam_.params(), 1.0);
  if (!std::isfinite(grad_norm_)) {
    for (auto& p : adam_.params())
      if (!kernel::all_finite(p.tensor.grad()))
        fail("train: step ", step + 1, ": non-finite gradient in ", p.name,
             "; stopping. The last good checkpoint stays in ", o_.out);
  }
  adam_.step(lr);
  model_.project();  // KERPLE's clamp (posenc.h), after every update
  // Checked every step (one read of the weights, small beside the step's products: bench/
  // train_step; on the GPU one launch and one read-back), before any checkpoint is written: a
  // non-finite weight is never saved.
  if (int64_t bad = kernel::first_non_finite(params_); bad >= 0)
    fail("train: step ", step + 1, ": the update made ", adam_.params()[bad].name,
         " non-finite (lr ", lr, "); stopping. The last good checkpoint stays in ", o_.out);
  return l;
}

double seconds_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

TrainResult Trainer::run() {
  if (start_ >= o_.steps)
    fail("--resume: the run already finished (step ", start_, " of --steps ", o_.steps, ")");
  std::signal(SIGINT, on_sigint);
  g_interrupted = 0;
  Progress progress(o_.steps, start_, o_.quiet);
  TrainResult res;
  double loss_acc = 0, train_secs = 0, eval_secs = 0;  // time in steps / in evals + checkpoints
  int64_t loss_n = 0, tokens = 0;
  const LrSchedule schedule = lr_schedule(o_);
  for (int64_t s = start_; s < o_.steps; ++s) {
    double lr = lr_at(schedule, s);
    auto t0 = std::chrono::steady_clock::now();
    double l = step(s, lr);
    train_secs += seconds_since(t0);
    loss_acc += l, ++loss_n, tokens += o_.batch * o_.model.block_size;
    double tps = tokens / std::max(train_secs, 1e-9);  // training throughput only
    progress.update(s + 1, l, lr, tps);
    bool last = s + 1 == o_.steps, pause = o_.stop_after > 0 && s + 1 == o_.stop_after;
    t0 = std::chrono::steady_clock::now();
    if ((s + 1) % o_.eval_every == 0 || last || pause || g_interrupted) {
      double vl = val_loss();
      log_.push_back(
          {s + 1, lr, loss_acc / loss_n, vl, grad_norm_, tps, eval_secs + seconds_since(t0)});
      progress.note("step " + std::to_string(s + 1) + ": train loss " +
                    fmt(loss_acc / loss_n, "%.4f") + ", val loss " + fmt(vl, "%.4f"));
      res.train_loss = loss_acc / loss_n;
      res.val_loss = vl;
      loss_acc = 0, loss_n = 0;
    }
    // the kept copy before the checkpoint: a kill between the two resumes from an earlier
    // checkpoint and writes the same copy again (resume is exact)
    if (std::count(o_.keep_steps.begin(), o_.keep_steps.end(), s + 1)) {
      save_state(kept_state_path(o_.out, s + 1), adam_, adam_.m(), adam_.v(), s + 1, gen_);
      save_checkpoint(model_, s + 1, kept_model_path(o_.out, s + 1));
    }
    if ((s + 1) % o_.ckpt_every == 0 || last || pause || g_interrupted) checkpoint(s + 1);
    eval_secs += seconds_since(t0);
    res.steps = s + 1;
    res.tokens_per_s = tps;
    if (g_interrupted) {
      progress.finish();
      std::signal(SIGINT, SIG_DFL);
      fail("train: interrupted at step ", s + 1, "; checkpoint saved in ", o_.out,
           " (continue with --resume)");
    }
    if (pause) break;
  }
  progress.finish();
  std::signal(SIGINT, SIG_DFL);
  return res;
}

}  // namespace

TrainResult train(const TrainOptions& opt_in) {
  TrainOptions o = opt_in;
  validate(o);
  if (o.warmup < 0) o.warmup = std::min<int64_t>(100, o.steps / 10);
  if (o.eval_every < 0) o.eval_every = std::max<int64_t>(1, o.steps / 10);
  if (o.ckpt_every < 0) o.ckpt_every = o.eval_every;
  TrainData data = load_train_data(o);  // sets o.model.vocab_size
  prepare_run_dir(o);
  Trainer t(o, std::move(data));
  if (o.resume && !t.resume()) {
    TrainResult done;
    done.steps = t.start();
    return done;
  }
  if (!o.branch_from.empty()) t.branch(o.branch_from);
  return t.run();
}

}  // namespace poslab
