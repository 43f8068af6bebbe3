// gpt_reference_main.cpp — a training program made of nn/gpt_reference.cpp alone: it reads a
// corpus prepared by `poslab prepare` (train.bin, val.bin: uint16 token ids; vocab.json), trains
// the model of gpt_reference.cpp as `poslab train` does (the same seed gives the same weights,
// batches and steps) and prints the loss curve. Standard library only:
//
//   g++ -std=c++20 -O2 nn/gpt_reference.cpp nn/gpt_reference_main.cpp -o reference_train
//   ./reference_train --data data/fortunes-zh --pe rope --d 64 --layers 2 --ctx 64 --lr 3e-3
//   make reference-train PE=rope          (builds it, prepares the corpus, trains the demo model)
//
// The flags are poslab train's, with its defaults (docs/cli.md); every `eval_every` steps it
// prints the mean training loss since the last line and the loss on the same val batches as
// poslab train: the numbers of a run's log.csv.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <map>
#include <sstream>
#include <stdexcept>

#include "gpt_reference.h"

using namespace poslab::reference;

namespace {

std::string read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw std::runtime_error(path + ": cannot open (prepare it with `poslab prepare`)");
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

// vocab.json is a JSON array of strings, one per token id: its length is all we need.
int64_t vocab_size(const std::string& path) {
  const std::string s = read_file(path);
  size_t i = s.find('[');
  int64_t n = 0;
  while (i != std::string::npos && i < s.size()) {
    i = s.find_first_of("\"]", i + 1);
    if (i == std::string::npos || s[i] == ']') break;
    for (++i; i < s.size() && s[i] != '"'; ++i)
      if (s[i] == '\\') ++i;  // an escaped character, \" included
    ++n;
  }
  if (n == 0) throw std::runtime_error(path + ": expected a JSON array of strings");
  return n;
}

// A .bin file: 2 bytes per token, low byte first.
std::vector<uint16_t> read_tokens(const std::string& path, int64_t V) {
  const std::string s = read_file(path);
  std::vector<uint16_t> t(s.size() / 2);
  for (size_t i = 0; i < t.size(); ++i) {
    t[i] = static_cast<uint16_t>(static_cast<unsigned char>(s[2 * i]) |
                                 static_cast<unsigned char>(s[2 * i + 1]) << 8);
    if (t[i] >= V) throw std::runtime_error(path + ": a token id past the vocabulary");
  }
  return t;
}

struct Options {
  Config model;
  TrainSettings train;
  std::string data;
  int64_t eval_every = -1, eval_batches = 8;
};

Options parse(int argc, char** argv) {
  std::map<std::string, std::string> f;
  for (int i = 1; i < argc; i += 2) {
    const std::string flag = argv[i];
    if (flag.rfind("--", 0) != 0 || i + 1 >= argc)
      throw std::invalid_argument("expected flags with values, as --pe rope, but got " + flag);
    f[flag.substr(2)] = argv[i + 1];
  }
  auto take = [&](const char* name, const std::string& fallback) {
    auto it = f.find(name);
    if (it == f.end()) return fallback;
    std::string v = it->second;
    f.erase(it);
    return v;
  };
  auto num = [&](const char* name, double fallback) {
    return std::stod(take(name, std::to_string(fallback)));
  };
  auto integer = [&](const char* name, int64_t fallback) {
    return std::stoll(take(name, std::to_string(fallback)));
  };
  Options o;
  Config& c = o.model;
  o.data = take("data", "");
  c.pe = parse_pe(take("pe", "rope"));
  c.n_embd = integer("d", 128), c.n_layer = integer("layers", 4), c.n_head = integer("heads", 4);
  c.block_size = integer("ctx", 256);
  c.causal = take("causal", "true") == "true";
  c.scaled_embedding = take("embedding", "gpt2") == "scaled";
  c.max_len = integer("max-len", 0), c.theta = num("theta", 10000);
  c.rope_half = take("rope-layout", "interleaved") == "half";
  c.rope_fraction = num("rope-fraction", 1), c.rope_proportion = num("rope-proportion", 1);
  c.t5_buckets = integer("t5-buckets", 32), c.t5_max_distance = integer("t5-max-distance", 128);
  c.fire_width = integer("fire-width", 32), c.xpos_scale_base = num("xpos-scale-base", 512);
  c.nope_every = integer("nope-every", 0), c.random_positions = integer("random-positions", 0);
  TrainSettings& t = o.train;
  t.steps = integer("steps", 2000), t.batch = integer("batch", 16);
  t.lr = num("lr", 1e-3), t.warmup = integer("warmup", -1);
  t.seed = static_cast<uint64_t>(integer("seed", 1337));
  o.eval_every = integer("eval-every", -1), o.eval_batches = integer("eval-batches", 8);
  if (!f.empty()) throw std::invalid_argument("unknown flag --" + f.begin()->first);
  if (o.data.empty()) throw std::invalid_argument("--data DIR: required (`poslab prepare`)");
  if (o.eval_every < 1) o.eval_every = std::max<int64_t>(1, t.steps / 10);
  return o;
}

}  // namespace

int main(int argc, char** argv) try {
  Options o = parse(argc, argv);
  o.model.vocab_size = vocab_size(o.data + "/vocab.json");
  const std::vector<uint16_t> train = read_tokens(o.data + "/train.bin", o.model.vocab_size),
                              val = read_tokens(o.data + "/val.bin", o.model.vocab_size);
  Run run = start_run(o.model, o.train);
  std::printf(
      "nn/gpt_reference.cpp: pe %s, V %lld, d %lld, %lld layers, %lld heads, ctx %lld, "
      "batch %lld, lr %g, seed %llu; %zu training tokens\n",
      pe_name(o.model.pe), (long long)o.model.vocab_size, (long long)o.model.n_embd,
      (long long)o.model.n_layer, (long long)o.model.n_head, (long long)o.model.block_size,
      (long long)o.train.batch, o.train.lr, (unsigned long long)o.train.seed, train.size());
  double sum = 0, secs = 0;  // the losses since the last line; seconds in training steps
  int64_t n = 0;
  for (int64_t s = 0; s < o.train.steps; ++s) {
    const auto t0 = std::chrono::steady_clock::now();
    sum += train_step(run, train, s), ++n;
    secs += std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    if ((s + 1) % o.eval_every != 0 && s + 1 != o.train.steps) continue;
    std::printf("step %5lld  train loss %.4f  val loss %.4f  (%.2f s a step)\n", (long long)(s + 1),
                sum / n, val_loss(run, val, o.eval_batches), secs / (s + 1));
    std::fflush(stdout);
    sum = 0, n = 0;
  }
  return 0;
} catch (const std::exception& e) {
  std::fprintf(stderr, "reference_train: %s\n", e.what());
  return 1;
}
