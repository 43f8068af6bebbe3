// commands.cpp — prepare, train, eval and generate: flags in, library calls, results out.
#include "train/commands.h"

#include <cmath>
#include <cstdio>
#include <filesystem>

#include "data/atomic_file.h"
#include "data/corpus.h"
#include "tensor/device.h"
#include "train/args.h"
#include "train/checkpoint.h"
#include "train/eval.h"
#include "train/rope_scaling_options.h"
#include "train/trainer.h"

namespace poslab {

int cmd_prepare(int argc, char** argv) {
  Args a(
      "prepare",
      {{"corpus", "fortunes|fortunes-zh|pystdlib|kjv|FILE  the text to prepare (default fortunes)"},
       {"out", "DIR  output folder, e.g. data/fortunes"}},
      argc, argv);
  if (a.help()) return std::puts(a.usage().c_str()), 0;
  std::string out = a.str("out", "");
  if (out.empty()) fail("--out: required (e.g. --out data/fortunes)");
  Corpus c = prepare_corpus(a.str("corpus", "fortunes"));
  write_corpus(c, out);
  std::printf("prepared %s: vocab %zu, train %zu tokens, val %zu tokens, from %zu source(s)\n",
              out.c_str(), c.vocab.size(), c.train.size(), c.val.size(), c.parts.size());
  // What the text was made from (also in corpus.json): a corpus built from other files is
  // told apart by its file count, bytes and SHA-256.
  const CorpusInfo& i = c.info;
  std::printf("  %zu files, %zu bytes as read; prepared text %zu bytes, sha256 %s\n", i.files,
              i.file_bytes, i.bytes, i.sha256.c_str());
  std::printf("  train %zu files, val %zu files (%zu bytes as read, %zu prepared); from %s\n",
              i.train_files, i.val_files, i.val_file_bytes, i.val_bytes, i.source.c_str());
  return 0;
}

// Model and training flags shared by `train` and `experiments`.
static std::vector<FlagSpec> train_flags() {
  return {{"data", "DIR  prepared corpus"},
          {"out", "DIR  run directory"},
          {"pe", "none|learned|sinusoidal|rope|alibi|t5|kerple|fire|xpos (default rope)"},
          {"steps", "N  training steps (default 2000)"},
          {"batch", "N  sequences per step (default 16)"},
          {"ctx", "N  training context length T0 (default 256)"},
          {"d", "N  model width (default 128)"},
          {"layers", "N  blocks (default 4)"},
          {"heads", "N  attention heads (default 4)"},
          {"lr", "X  peak learning rate (default 1e-3)"},
          {"warmup", "N  warmup steps (default min(100, steps/10))"},
          {"schedule",
           "cosine|wsd  learning rate after the warmup: cosine decay, or constant then a linear "
           "decay over the last --decay-share of the steps (default cosine)"},
          {"decay-share", "f  wsd: the share of the steps that decays, in (0, 1] (default 0.2)"},
          {"branch-from",
           "FILE  a cooldown branch: start from a run's kept state_step<N>.safetensors (wsd)"},
          {"weight-decay", "X  AdamW decoupled weight decay on Linear weights (default 0.1)"},
          {"seed", "N  seed for init and batches (default 1337)"},
          {"theta", "X  RoPE base (default 10000)"},
          {"rope-layout",
           "interleaved|half  RoPE pairs (2i, 2i+1) or (i, i+r/2) (default interleaved)"},
          {"rope-fraction",
           "f  RoPE: rotate r = 2 floor(f D/2) dims of each head, f in (0, 1] (default 1)"},
          {"max-len", "N  learned: rows of the position table (default ctx)"},
          {"t5-buckets", "N  t5: rows of the relative-bias table (default 32)"},
          {"t5-max-distance", "N  t5: offsets from here on share the last bucket (default 128)"},
          {"rope-proportion",
           "p  rope: the fastest floor(p D/2) pairs turn, the others never (p-RoPE), p in [0, 1] "
           "(default 1)"},
          {"fire-width", "W  fire: hidden width of the bias MLP (default 32)"},
          {"xpos-scale-base", "B  xpos: the decay zeta^(n/B) (default 512)"},
          {"nope-every",
           "k  every k-th layer without position: rope, xpos, alibi, t5, kerple, fire (default 0: "
           "off)"},
          {"random-positions",
           "Lmax  training draws sorted positions from [0, Lmax) per sequence, Lmax >= ctx "
           "(default 0: off)"},
          {"causal", "true|false  causal mask (default true)", true},
          {"embedding",
           "gpt2|scaled  token vectors as GPT-2 (std 0.02) or scaled by sqrt(d) (default gpt2)"},
          {"objective",
           "lm|mlm|answer  next-token, masked-LM, or answer-only training on a task corpus "
           "(default lm)"},
          {"eval-every", "N  steps between val evaluations and checkpoints (default steps/10)"},
          {"stop-after", "N  pause after step N (checkpoint, exit); continue with --resume"},
          {"device", "cpu|cuda (default cpu)"},
          {"resume", "continue the run in --out from its checkpoint", true},
          {"force", "start over even if --out holds a run", true},
          {"quiet", "no progress output", true},
          {"detect-anomaly",
           "check every op's gradients and name the first op that makes NaN/inf (slow)", true}};
}

Device device_option(const Args& a) {
  Device d = parse_device(a.choice("device", "cpu", {"cpu", "cuda"}));
  require_device(d, "--device cuda");
  return d;
}

// The flags of one scheme each; each refuses the other schemes. GPTConfig::validate checks
// the values.
static void positional_options(const Args& a, PosencConfig& pe) {
  pe.theta = a.number("theta", 10000, 1.0000001, 1e12);
  pe.max_len = a.integer("max-len", 0, 1, 1 << 24);
  pe.rope_layout =
      parse_rope_layout(a.choice("rope-layout", "interleaved", {"interleaved", "half"}));
  pe.rope_fraction = a.number("rope-fraction", 1, -1e300, 1e300);
  pe.t5_buckets = a.integer("t5-buckets", 32, 1, 1 << 16);
  pe.t5_max_distance = a.integer("t5-max-distance", 128, 1, 1 << 24);
  if (a.has("max-len") && pe.kind != PeKind::learned)
    fail("--max-len applies only to --pe learned");
  const bool rotary = pe.kind == PeKind::rope || pe.kind == PeKind::xpos;
  if (a.has("theta") && !rotary) fail("--theta applies only to --pe rope and xpos");
  if (a.has("rope-layout") && !rotary)
    fail("--rope-layout interleaved|half applies only to --pe rope and xpos");
  if (a.has("rope-fraction") && pe.kind != PeKind::rope)
    fail("--rope-fraction f (f in (0, 1]) applies only to --pe rope");
  for (const char* flag : {"t5-buckets", "t5-max-distance"})
    if (a.has(flag) && pe.kind != PeKind::t5)
      fail("--", flag, " N (a positive integer) applies only to --pe t5");
  pe.rope_proportion = a.number("rope-proportion", 1, -1e300, 1e300);
  pe.fire_width = a.integer("fire-width", 32, -(1 << 30), 1 << 16);
  pe.xpos_scale_base = a.number("xpos-scale-base", 512, -1e300, 1e300);
  pe.nope_every = a.integer("nope-every", 0, -(1 << 30), 1 << 20);
  pe.random_positions = a.integer("random-positions", 0, -(1 << 30), 1 << 24);
  if (a.has("rope-proportion") && pe.kind != PeKind::rope)
    fail("--rope-proportion p (p in [0, 1]) applies only to --pe rope");
  if (a.has("fire-width") && pe.kind != PeKind::fire)
    fail("--fire-width W (W >= 1) applies only to --pe fire");
  if (a.has("xpos-scale-base") && pe.kind != PeKind::xpos)
    fail("--xpos-scale-base B (B > 0) applies only to --pe xpos");
}

TrainOptions train_options(const Args& a) {
  TrainOptions o;
  o.data = a.str("data", "");
  o.out = a.str("out", "");
  o.model.pe.kind = parse_pe(a.str("pe", "rope"));
  o.steps = a.integer("steps", 2000, 1, 100000000);
  o.batch = a.integer("batch", 16, 1, 1 << 20);
  o.model.block_size = a.integer("ctx", 256, 1, 1 << 20);
  o.model.n_embd = a.integer("d", 128, 1, 1 << 16);
  o.model.n_layer = a.integer("layers", 4, 1, 1024);
  o.model.n_head = a.integer("heads", 4, 1, 1024);
  o.adam.lr = a.number("lr", 1e-3, 1e-12, 10);
  o.warmup = a.integer("warmup", -1, 0, 100000000);
  o.schedule = parse_schedule(a.choice("schedule", "cosine", {"cosine", "wsd"}));
  o.decay_share = a.number("decay-share", 0.2, 1e-9, 1);
  if (a.has("decay-share") && o.schedule != Schedule::wsd)
    fail("--decay-share applies only to --schedule wsd");
  o.branch_from = a.str("branch-from", "");
  o.adam.weight_decay = a.number("weight-decay", 0.1, 0, 10);
  o.seed = static_cast<uint64_t>(a.integer("seed", 1337, 0, INT64_MAX));
  positional_options(a, o.model.pe);
  o.model.causal = a.boolean("causal", true);
  o.model.embedding = parse_embedding(a.choice("embedding", "gpt2", embedding_names()));
  o.objective = parse_objective(a.choice("objective", "lm", objective_names()));
  o.eval_every = a.integer("eval-every", -1, 1, 100000000);
  o.stop_after = a.integer("stop-after", 0, 1, 100000000);
  o.resume = a.boolean("resume", false);
  o.force = a.boolean("force", false);
  o.quiet = a.boolean("quiet", false);
  o.model.device = device_option(a);
  return o;
}

int cmd_train(int argc, char** argv) {
  Args a("train", train_flags(), argc, argv);
  if (a.help()) return std::puts(a.usage().c_str()), 0;
  TrainOptions o = train_options(a);
  set_detect_anomaly(a.boolean("detect-anomaly", false));
  TrainResult r = train(o);
  std::printf("trained %s: %lld steps, train loss %.4f, val loss %.4f, %.0f tokens/s\n",
              o.out.c_str(), (long long)r.steps, r.train_loss, r.val_loss, r.tokens_per_s);
  return 0;
}

// Refuses a data folder that does not belong to the checkpoint, and non-finite weights
// (docs/evaluation.md).
static void check_pairing(const GPT& m, const std::string& ckpt,
                          const std::vector<std::string>& vocab, const std::string& vocab_path) {
  if (static_cast<int64_t>(vocab.size()) != m.config().vocab_size)
    fail(vocab_path, ": holds ", vocab.size(), " entries, but ", ckpt, " has vocab_size ",
         m.config().vocab_size, "; this data folder does not belong to this checkpoint");
  for (const NamedParam& p : m.parameters())
    if (!kernel::all_finite(p.tensor))
      fail(ckpt, ": tensor '", p.name, "' holds NaN or inf values");
}

// eval's flags: the window, the RoPE scaling (rope_scaling_options.h), the interventions.
static std::vector<FlagSpec> eval_flags() {
  std::vector<FlagSpec> flags{
      {"ckpt", "FILE  runs/NAME/model.safetensors"},
      {"data", "DIR  prepared corpus"},
      {"len", "N  window length L (default 1024)"},
      {"split", "train|val (default val)"},
      {"windows", "N  evaluate the first N windows (default all that fit)"},
      {"buckets", "N  position buckets (default 16)"},
      {"position-offset", "P  the window's tokens sit at positions P..P+L-1 (default 0)"},
      {"attention-window", "W  key j visible to query i only if |i-j| < W (default: none)"},
      {"logit-scale", "none|log  log: row i's logits times max(1, ln n_i / ln T0)"},
      {"positions",
       "random|contiguous  a model trained with --random-positions reads drawn positions "
       "(default random, up to its Lmax) or 0..L-1"},
      {"seed", "S  the seed of the positions' draws (default 0)"},
      {"json", "print one JSON object", true},
      {"device", "cpu|cuda (default cpu)"}};
  for (const FlagSpec& f : rope_scaling_flags()) flags.push_back(f);
  return flags;
}

// --positions and --seed: a model trained with random positions reads, by default, positions
// drawn per window from [0, Lmax) (posenc/random_positions.h); --positions contiguous reads
// 0..L-1 (the only choice past Lmax). Returns whether the windows draw.
static bool positions_option(const Args& a, const GPTConfig& c, int64_t L, Interventions& iv) {
  const int64_t Lmax = c.pe.random_positions;
  const std::string how =
      a.choice("positions", Lmax > 0 ? "random" : "contiguous", {"random", "contiguous"});
  const uint64_t seed = static_cast<uint64_t>(a.integer("seed", 0, 0, INT64_MAX));
  if (how == "contiguous") return false;
  if (Lmax == 0)
    fail("--positions random: this model was trained without --random-positions (use ",
         "--positions contiguous)");
  if (L > Lmax)
    fail("--positions random: a window of L = ", L, " cannot draw ", L, " distinct positions ",
         "from [0, Lmax = ", Lmax, "); use --positions contiguous or --len <= ", Lmax);
  if (iv.position_offset > 0 || iv.rope_scaling.kind != ScalingKind::none)
    fail("--positions random: --position-offset and --rope-scaling need --positions contiguous");
  iv.draw_max = Lmax, iv.draw_seed = seed;
  return true;
}

int cmd_eval(int argc, char** argv) {
  Args a("eval", eval_flags(), argc, argv);
  if (a.help()) return std::puts(a.usage().c_str()), 0;
  Device device = device_option(a);
  std::string ckpt = a.str("ckpt", ""), data = a.str("data", "");
  if (ckpt.empty()) fail("--ckpt: required (runs/NAME/model.safetensors)");
  if (data.empty()) fail("--data: required (the prepared corpus the model was trained on)");
  int64_t L = a.integer("len", 1024, 1, 1 << 24);
  std::string split = a.choice("split", "val", {"train", "val"});
  int64_t windows = a.integer("windows", 0, 1, INT64_MAX);
  int64_t buckets = a.integer("buckets", 16, 1, 1 << 20);
  Checkpoint ck = load_checkpoint(ckpt, device);
  std::vector<std::string> vocab = load_vocab(data + "/vocab.json");
  check_pairing(*ck.model, ckpt, vocab, data + "/vocab.json");
  const RopeScaling sc = rope_scaling_options(a, scaled_model(ck.model->config()));
  Interventions iv;
  iv.rope_scaling = sc;
  iv.position_offset = a.integer("position-offset", 0, 0, INT64_MAX / 2);
  iv.attention_window = a.integer("attention-window", 0, 1, INT64_MAX / 2);
  iv.log_scale = a.choice("logit-scale", "none", {"none", "log"}) == "log";
  if (iv.position_offset > 0 && sc.kind != ScalingKind::none)
    fail(
        "--position-offset: only defined with --rope-scaling none (a scaling picks its factor "
        "from the window's length, not its positions), but got --rope-scaling ",
        scaling_name(sc.kind));
  const bool random = positions_option(a, ck.model->config(), L, iv);
  std::vector<uint16_t> toks = load_tokens(data + "/" + split + ".bin", vocab.size());
  EvalResult r = evaluate(*ck.model, toks, L, windows, std::min(buckets, L), split, nullptr, 0, iv);
  if (a.boolean("json", false)) {
    std::string j = r.json();
    j.pop_back();
    char extra[512];
    std::snprintf(extra, sizeof extra,
                  ",\"split\":\"%s\",\"pe\":\"%s\",\"rope_scaling\":\"%s\",\"step\":%lld,"
                  "\"position_offset\":%lld,\"attention_window\":%lld,\"logit_scale\":\"%s\","
                  "\"positions\":\"%s\"}",
                  split.c_str(), pe_name(ck.model->config().pe.kind), scaling_name(sc.kind),
                  (long long)ck.step, (long long)iv.position_offset, (long long)iv.attention_window,
                  iv.log_scale ? "log" : "none", random ? "random" : "contiguous");
    std::printf("%s%s\n", j.c_str(), extra);
  } else {
    std::printf("%s L=%lld %s: loss %.4f nats, ppl %.3f over %lld tokens (%lld windows)%s\n",
                pe_name(ck.model->config().pe.kind), (long long)L, split.c_str(), r.loss, r.ppl,
                (long long)r.tokens, (long long)r.windows,
                ck.model->config().causal ? "" : "  [causal=false: not a perplexity]");
    if (iv.position_offset > 0 || iv.attention_window > 0 || iv.log_scale)
      std::printf("  interventions: position offset %lld, attention window %s, logit scale %s\n",
                  (long long)iv.position_offset,
                  iv.attention_window > 0 ? std::to_string(iv.attention_window).c_str() : "none",
                  iv.log_scale ? "log" : "none");
    for (const auto& b : r.buckets)
      std::printf("  positions %5lld-%5lld  loss %.4f\n", (long long)b.start, (long long)b.end - 1,
                  b.loss);
  }
  return 0;
}

// The next token from the last position's logits: the argmax at temperature 0, otherwise a
// draw from softmax(logits / temperature).
static int32_t sample_next(std::vector<double> row, double temp, Generator& gen) {
  int32_t next = 0;
  if (temp == 0) {
    for (size_t v = 1; v < row.size(); ++v)
      if (row[v] > row[next]) next = static_cast<int32_t>(v);
    return next;
  }
  double mx = row[0], z = 0;
  for (double x : row) mx = std::max(mx, x);
  for (double& x : row) z += (x = std::exp((x - mx) / temp));
  double u = gen.uniform() * z;
  for (size_t v = 0; v < row.size(); ++v)
    if ((u -= row[v]) <= 0 || v + 1 == row.size()) return static_cast<int32_t>(v);
  return next;
}

// generate's flags: the prompt, the sampling, and a RoPE scaling as eval's.
static std::vector<FlagSpec> generate_flags() {
  std::vector<FlagSpec> flags{{"ckpt", "FILE  runs/NAME/model.safetensors"},
                              {"vocab", "FILE  vocab.json (default: beside the checkpoint)"},
                              {"prompt", "TEXT  the start of the text"},
                              {"tokens", "N  characters to generate (default 200)"},
                              {"temperature", "t  sampling temperature, 0 = greedy (default 0.8)"},
                              {"seed", "N  sampling seed (default 0)"},
                              {"device", "cpu|cuda (default cpu)"}};
  for (const FlagSpec& f : rope_scaling_flags()) flags.push_back(f);  // for generating past T0
  return flags;
}

int cmd_generate(int argc, char** argv) {
  Args a("generate", generate_flags(), argc, argv);
  if (a.help()) return std::puts(a.usage().c_str()), 0;
  Device device = device_option(a);
  std::string ckpt = a.str("ckpt", "");
  if (ckpt.empty()) fail("--ckpt: required");
  std::string vpath =
      a.str("vocab", std::filesystem::path(ckpt).parent_path().string() + "/vocab.json");
  Checkpoint ck = load_checkpoint(ckpt, device);
  std::vector<std::string> vocab = load_vocab(vpath);
  check_pairing(*ck.model, ckpt, vocab, vpath);
  const RopeScaling scaling = rope_scaling_options(a, scaled_model(ck.model->config()));
  std::string prompt = a.str("prompt", "");
  if (prompt.empty()) prompt.push_back('\n');  // start from a line break
  std::vector<uint16_t> ids = encode(vocab, prompt);
  int64_t n = a.integer("tokens", 200, 1, 1 << 20);
  double temp = a.number("temperature", 0.8, 0, 100);
  Generator gen(static_cast<uint64_t>(a.integer("seed", 0, 0, INT64_MAX)));
  const GPT& m = *ck.model;
  int64_t total = static_cast<int64_t>(ids.size()) + n;
  if (m.config().pe.kind == PeKind::learned && total > m.config().pe.max_len)
    fail("--tokens: prompt + tokens = ", total,
         " positions, but the learned table has max_len = ", m.config().pe.max_len);
  if (m.config().pe.random_positions > 0)
    std::fprintf(stderr,
                 "generate: this model was trained on random positions from [0, %lld); decoding "
                 "reads positions 0..n-1 (contiguous)\n",
                 static_cast<long long>(m.config().pe.random_positions));
  KVCache cache = m.new_cache(total);
  Ids prompt_ids{std::vector<int32_t>(ids.begin(), ids.end()),
                 {1, static_cast<int64_t>(ids.size())}};
  Tensor logits = m.decode(prompt_ids, cache, scaling);
  std::printf("%s", prompt.c_str());
  for (int64_t i = 0; i < n; ++i) {
    int32_t next =
        sample_next(logits.slice(1, logits.size(1) - 1, logits.size(1)).to_vector(), temp, gen);
    std::printf("%s", vocab[next].c_str());
    std::fflush(stdout);
    if (i + 1 < n) logits = m.decode(Ids{{next}, {1, 1}}, cache, scaling);
  }
  std::printf("\n");
  return 0;
}

}  // namespace poslab
