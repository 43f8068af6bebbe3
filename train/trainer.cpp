#include "train/trainer.h"

#include <unistd.h>

#include <chrono>
#include <cmath>
#include <csignal>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>

#include "data/atomic_file.h"
#include "data/corpus.h"
#include "train/checkpoint.h"
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

Batch sample_batch(const std::vector<uint16_t>& tokens, int64_t B, int64_t T, Generator& gen,
                   const std::string& objective, double mask_frac, int32_t mask_id) {
  int64_t n = static_cast<int64_t>(tokens.size());
  if (n < T + 1) fail("train: the split holds ", n, " tokens, fewer than --ctx + 1 = ", T + 1);
  Batch b{{std::vector<int32_t>(B * T), {B, T}}, {std::vector<int32_t>(B * T), {B, T}}};
  bool mlm = objective == "mlm";
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

void validate(const TrainOptions& o) {
  if (o.steps <= 0) fail("--steps: expected a positive number of steps, but got ", o.steps);
  if (o.batch <= 0) fail("--batch: expected a positive batch size, but got ", o.batch);
  if (o.model.block_size <= 0)
    fail("--ctx: expected a positive context length, but got ", o.model.block_size);
  if (!(o.adam.lr > 0) || !std::isfinite(o.adam.lr))
    fail("--lr: expected a positive learning rate, but got ", o.adam.lr);
  if (o.objective != "lm" && o.objective != "mlm")
    fail("--objective: expected lm|mlm, but got '", o.objective, "'");
  if (o.objective == "lm" && !o.model.causal)
    fail(
        "--causal false: next-token training without a mask is ill-posed (each position sees its "
        "target); use --objective mlm");
  if (o.resume && o.force) fail("--resume and --force: choose one");
  if (o.data.empty()) fail("--data: required (a folder made by `poslab prepare`)");
  if (o.out.empty()) fail("--out: required (the run directory)");
  GPTConfig c = o.model;
  if (c.vocab_size == 0) c.vocab_size = 1;
  c.validate();
}

TrainResult train(const TrainOptions& opt_in) {
  TrainOptions o = opt_in;
  validate(o);
  if (o.warmup < 0) o.warmup = std::min<int64_t>(100, o.steps / 10);
  if (o.eval_every < 0) o.eval_every = std::max<int64_t>(1, o.steps / 10);
  if (o.ckpt_every < 0) o.ckpt_every = o.eval_every;

  // ---- data ----
  std::vector<std::string> vocab = load_vocab(o.data + "/vocab.json");
  std::vector<uint16_t> tr = load_tokens(o.data + "/train.bin", vocab.size());
  std::vector<uint16_t> va = load_tokens(o.data + "/val.bin", vocab.size());
  bool mlm = o.objective == "mlm";
  int32_t mask_id = static_cast<int32_t>(vocab.size());
  o.model.vocab_size = static_cast<int64_t>(vocab.size()) + (mlm ? 1 : 0);

  // ---- run directory: never overwrite a run by accident ----
  std::string model_path = o.out + "/model.safetensors", state_path = o.out + "/state.safetensors";
  std::string log_path = o.out + "/log.csv";
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

  GPT model(o.model, o.seed);
  AdamW adam(model.parameters(), o.adam);
  Generator gen(o.seed ^ 0x9e3779b97f4a7c15ULL);  // the batch sampler
  int64_t start = 0;
  std::vector<std::string> log_rows;
  if (o.resume) {
    start = load_state(state_path, adam, gen);
    adam.set_steps_taken(start);
    std::ifstream in(log_path);
    std::string line;
    std::getline(in, line);  // header
    while (std::getline(in, line))
      if (!line.empty() && std::stoll(line) <= start) log_rows.push_back(line);
    // A kill between the state write and the weights write (see `checkpoint` below) leaves
    // model.safetensors behind the state: rewrite it from the weights just loaded.
    int64_t model_step = -1;
    try {
      model_step = load_checkpoint(model_path).step;
    } catch (const std::exception&) {  // missing: killed before its first write
    }
    if (model_step != start) {
      save_checkpoint(model, start, model_path);
      if (start >= o.steps) {  // killed after the final state, before the final weights
        if (!o.quiet)
          std::fprintf(stderr, "train: the run had finished at step %lld; %s rewritten from %s\n",
                       static_cast<long long>(start), model_path.c_str(), state_path.c_str());
        TrainResult done;
        done.steps = start;
        return done;
      }
    }
  }

  auto write_log = [&] {
    std::string s = "step,lr,train_loss,val_loss,grad_norm,tokens_per_s\n";
    for (auto& r : log_rows) s += r + "\n";
    write_file_atomic(log_path, s);
  };
  // The order matters for a kill between two writes (each write is atomic on its own):
  // the log first (a resume drops rows past the state's step), then the state, then the
  // weights. So the state is never behind model.safetensors, and when a kill lands between
  // the last two, the resume above finds the model behind the state and rewrites it.
  auto checkpoint = [&](int64_t step) {
    write_log();
    save_state(state_path, adam, adam.m(), adam.v(), step, gen);
    save_checkpoint(model, step, model_path);
  };
  if (start >= o.steps)
    fail("--resume: the run already finished (step ", start, " of --steps ", o.steps, ")");
  auto val_loss = [&] {
    NoGrad ng;
    Generator eg(o.seed + 7);  // the same val batches every time
    double s = 0;
    for (int64_t i = 0; i < o.eval_batches; ++i) {
      Batch b =
          sample_batch(va, o.batch, o.model.block_size, eg, o.objective, o.mask_frac, mask_id);
      s += model.loss(b.x, b.y).item();
    }
    return s / o.eval_batches;
  };

  std::signal(SIGINT, on_sigint);
  g_interrupted = 0;
  Progress progress(o.steps, start, o.quiet);
  TrainResult res;
  double loss_acc = 0, gn = 0;
  int64_t loss_n = 0, tokens = 0;
  auto t0 = std::chrono::steady_clock::now();
  double max_lr = o.adam.lr, min_lr = o.adam.lr * o.min_lr_ratio;
  std::vector<Tensor> param_tensors;  // built once; zero_grad keeps their buffers
  for (const NamedParam& p : adam.params()) param_tensors.push_back(p.tensor);
  for (int64_t step = start; step < o.steps; ++step) {
    double lr = lr_at(step, o.warmup, o.steps, max_lr, min_lr);
    Batch b = sample_batch(tr, o.batch, o.model.block_size, gen, o.objective, o.mask_frac, mask_id);
    zero_grad(param_tensors);
    Tensor loss = model.loss(b.x, b.y);
    double l = loss.item();
    if (!std::isfinite(l))
      fail("train: step ", step + 1, ": the loss is ", l,
           "; stopping. The last good checkpoint stays in ", o.out);
    backward(loss);
    gn = clip_grad_norm(adam.params(), 1.0);
    if (!std::isfinite(gn)) {
      for (auto& p : adam.params())
        if (!kernel::all_finite(p.tensor.grad()))
          fail("train: step ", step + 1, ": non-finite gradient in ", p.name,
               "; stopping. The last good checkpoint stays in ", o.out);
    }
    adam.step(lr);
    // Checked every step (a read of the ~0.8M weights, well under a millisecond; on the GPU one
    // launch and one read-back), before any checkpoint is written: a non-finite weight is never
    // saved.
    if (int64_t bad = kernel::first_non_finite(param_tensors); bad >= 0)
      fail("train: step ", step + 1, ": the update made ", adam.params()[bad].name,
           " non-finite (lr ", lr, "); stopping. The last good checkpoint stays in ", o.out);
    loss_acc += l, ++loss_n, tokens += o.batch * o.model.block_size;
    double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    double tps = tokens / std::max(secs, 1e-9);
    progress.update(step + 1, l, lr, tps);
    bool last = step + 1 == o.steps, pause = o.stop_after > 0 && step + 1 == o.stop_after;
    if ((step + 1) % o.eval_every == 0 || last || pause || g_interrupted) {
      double vl = val_loss();
      log_rows.push_back(std::to_string(step + 1) + "," + fmt(lr) + "," + fmt(loss_acc / loss_n) +
                         "," + fmt(vl) + "," + fmt(gn) + "," + fmt(tps, "%.0f"));
      progress.note("step " + std::to_string(step + 1) + ": train loss " +
                    fmt(loss_acc / loss_n, "%.4f") + ", val loss " + fmt(vl, "%.4f"));
      res.train_loss = loss_acc / loss_n;
      res.val_loss = vl;
      loss_acc = 0, loss_n = 0;
    }
    if ((step + 1) % o.ckpt_every == 0 || last || pause || g_interrupted) checkpoint(step + 1);
    res.steps = step + 1;
    res.tokens_per_s = tps;
    if (g_interrupted) {
      progress.finish();
      std::signal(SIGINT, SIG_DFL);
      fail("train: interrupted at step ", step + 1, "; checkpoint saved in ", o.out,
           " (continue with --resume)");
    }
    if (pause) break;
  }
  progress.finish();
  std::signal(SIGINT, SIG_DFL);
  return res;
}

}  // namespace poslab
