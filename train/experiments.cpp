#include "train/experiments.h"

#include <chrono>
#include <cmath>
#include <cstdio>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <functional>
#include <sstream>
#include <thread>

#include "data/atomic_file.h"
#include "data/corpus.h"
#include "data/json.h"
#include "tensor/device.h"
#include "train/args.h"
#include "train/checkpoint.h"
#include "train/commands.h"
#include "train/eval.h"
#include "train/progress.h"
#include "train/report.h"
#include "train/tasks.h"
#include "train/trainer.h"

#ifndef POSLAB_SOURCE_DIR
#define POSLAB_SOURCE_DIR "."
#endif

namespace poslab {
namespace fs = std::filesystem;

namespace {

struct Study {
  std::string out;
  bool quick = false, force = false;
  int64_t steps = 0, task_steps = 0, eval_tokens = 0, d = 128, layers = 4, heads = 4, ctx = 256,
          batch = 16;
  double lr = 2e-3;
  std::vector<uint64_t> seeds{1, 2};
  std::vector<int64_t> lens{256, 512, 1024, 2048, 4096};
  std::string data;  // prepared fortunes
  Device device = Device::cpu;
};

std::string num(double v) {
  char b[64];
  std::snprintf(b, sizeof b, "%.6g", v);
  return b;
}

// A CSV file assembled in memory and written atomically.
struct Csv {
  std::string text;
  explicit Csv(const std::string& header) : text(header + "\n") {}
  void row(const std::vector<std::string>& cells) {
    for (size_t i = 0; i < cells.size(); ++i) text += (i ? "," : "") + cells[i];
    text += "\n";
  }
};

// Progress over the whole study: "[12/40] what — elapsed 3m10s, ETA 9m" on stderr.
struct Tracker {
  double total_weight = 0, done_weight = 0;
  int total_jobs = 0, done_jobs = 0;
  std::chrono::steady_clock::time_point t0 = std::chrono::steady_clock::now();
  double elapsed() const {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  }
  void start(const std::string& what) {
    double el = elapsed();
    std::string eta =
        done_weight > 0 ? format_duration(el / done_weight * (total_weight - done_weight)) : "?";
    std::fprintf(stderr, "[%d/%d] %s  (elapsed %s, ETA %s)\n", done_jobs + 1, total_jobs,
                 what.c_str(), format_duration(el).c_str(), eta.c_str());
  }
  void done(double weight) { done_weight += weight, ++done_jobs; }
};

bool finished(const std::string& run_dir, int64_t steps) {
  std::string p = run_dir + "/model.safetensors";
  if (!fs::exists(p)) return false;
  try {
    return load_checkpoint(p).step == steps;
  } catch (const std::exception&) {
    return false;
  }
}

// Trains unless an identical finished run is there. Returns the loaded model.
Checkpoint ensure_run(const Study& s, Tracker& tr, const std::string& name, TrainOptions o,
                      double weight) {
  std::string dir = s.out + "/runs/" + name;
  o.out = dir;
  o.quiet = false;
  if (s.force || !finished(dir, o.steps)) {
    tr.start("train " + name + " (" + std::to_string(o.steps) + " steps)");
    o.force = true;
    o.resume = false;
    if (!s.force && fs::exists(dir + "/state.safetensors")) {  // an interrupted run: continue it
      o.force = false;
      o.resume = true;
    }
    auto t0 = std::chrono::steady_clock::now();
    train(o);
    double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    write_file_atomic(dir + "/train_seconds.txt", num(secs) + "\n");
  } else {
    tr.start("train " + name + ": finished earlier, reused");
  }
  tr.done(weight);
  return load_checkpoint(dir + "/model.safetensors", s.device);
}

// An evaluation cached as JSON beside the run:
// {"loss","last_quarter_loss","tokens","windows","buckets":[...]}
EvalResult cached_eval(const Study& s, const std::string& run, GPT& model,
                       const std::vector<uint16_t>& val, int64_t L, ScalingKind sk,
                       int64_t max_windows) {
  std::string path =
      s.out + "/runs/" + run + "/eval_" + scaling_name(sk) + "_" + std::to_string(L) + ".json";
  int64_t windows = std::max<int64_t>(1, std::min<int64_t>(max_windows, s.eval_tokens / L));
  if (!s.force && fs::exists(path)) {
    try {
      Json j = json_parse(read_file(path), path);
      EvalResult r;
      r.loss = j.find("loss")->as_number();
      r.ppl = std::exp(r.loss);
      r.len = L;
      r.tokens = static_cast<int64_t>(j.find("tokens")->as_number());
      r.windows = static_cast<int64_t>(j.find("windows")->as_number());
      for (const Json& b : j.find("buckets")->as_array())
        r.buckets.push_back({static_cast<int64_t>(b.find("start")->as_number()),
                             static_cast<int64_t>(b.find("end")->as_number()),
                             b.find("loss")->as_number()});
      if (r.windows == windows) return r;
    } catch (const std::exception&) {
    }
  }
  model.posenc().set_scaling({sk, 0, model.config().block_size});
  EvalResult r = evaluate(model, val, L, windows, 64, "val");
  model.posenc().set_scaling({ScalingKind::none, 0, model.config().block_size});
  std::string j = r.json();
  write_file_atomic(path, j + "\n");
  return r;
}

double last_quarter(const EvalResult& r) {  // mean loss over buckets covering the last 25%
  double acc = 0;
  int64_t n = 0;
  for (const auto& b : r.buckets)
    if (b.start >= r.len * 3 / 4) acc += b.loss * (b.end - b.start), n += b.end - b.start;
  return n ? acc / n : NAN;
}

int64_t count_lines(const std::string& rel) {
  std::ifstream in(std::string(POSLAB_SOURCE_DIR) + "/" + rel);
  if (!in) in.open(rel);  // a binary built elsewhere, run from a checkout's root
  if (!in) return 0;
  int64_t n = 0;
  std::string line;
  while (std::getline(in, line)) ++n;
  return n;
}

}  // namespace

int cmd_experiments(int argc, char** argv) {
  Args a("experiments",
         {{"out", "DIR  results folder (default results)"},
          {"quick", "the same pipeline, small: a few minutes", true},
          {"steps", "N  training steps of each main run (default: 480 full, 20 quick)"},
          {"seeds", "N  seeds per scheme in the main table (default 2)"},
          {"force", "redo every run and evaluation", true},
          {"device", "cpu|cuda (default cpu)"}},
         argc, argv);
  if (a.help()) return std::puts(a.usage().c_str()), 0;
  Study s;
  s.device = device_option(a);
  s.quick = a.boolean("quick", false);
  s.force = a.boolean("force", false);
  s.out = a.str("out", s.quick ? "results-quick" : "results");
  // quick: the same pipeline, small enough for a few minutes on 2 cores (20 steps of batch 8,
  // one window per length at 4096, short task runs); full: what fits about 75 minutes on this
  // project's 2-core machine (480 steps of batch 16 = 2M tokens per main run, at ~9k tokens/s)
  s.steps = a.integer("steps", s.quick ? 20 : 480, 1, 10000000);
  if (s.quick) s.batch = 8;
  s.task_steps = s.quick ? 30 : 800;
  s.eval_tokens = s.quick ? 4096 : 32768;
  int64_t nseeds = a.integer("seeds", 2, 1, 16);
  s.seeds.clear();
  for (int64_t i = 1; i <= nseeds; ++i) s.seeds.push_back(static_cast<uint64_t>(i));
  if (s.quick) s.lens = {256, 512, 1024, 2048, 4096};
  std::error_code ec;
  fs::create_directories(s.out + "/runs", ec);
  fs::create_directories(s.out + "/curves", ec);
  if (ec) fail("--out ", s.out, ": cannot create it: ", ec.message());
  write_file_atomic(s.out + "/.write_test", "ok");
  fs::remove(s.out + "/.write_test", ec);

  Tracker tr;
  const std::vector<std::string> pes = pe_names();
  std::vector<std::string> scalings{"linear", "ntk", "dynamic", "yarn"};
  // job weights ~ expected seconds per unit, only for the ETA
  double w_train = 1.0, w_eval = 0.15, w_task = 0.3;
  double P = static_cast<double>(pes.size()), S = static_cast<double>(s.seeds.size());
  tr.total_jobs = static_cast<int>(1 + 2 * P * S + 4 + 2 + 2 + 2 * P + 1);
  tr.total_weight = (P * S + 4) * w_train + P * S * w_eval + 4 * 2 * w_eval + 2 * P * w_task;

  // ---- 0. the corpus ----
  s.data = s.out + "/data/fortunes";
  tr.start("prepare the fortunes corpus");
  if (s.force || !fs::exists(s.data + "/val.bin"))
    write_corpus(prepare_corpus("fortunes"), s.data);
  tr.done(0.01);
  std::vector<std::string> vocab = load_vocab(s.data + "/vocab.json");
  std::vector<uint16_t> val = load_tokens(s.data + "/val.bin", vocab.size());

  auto base = [&](const std::string& pe, uint64_t seed) {
    TrainOptions o;
    o.data = s.data;
    o.model.pe = parse_pe(pe);
    o.model.n_embd = s.d, o.model.n_layer = s.layers, o.model.n_head = s.heads,
    o.model.block_size = s.ctx;
    o.model.device = s.device;
    if (o.model.pe == PeKind::learned) o.model.max_len = 4096;  // rows past T0 exist, untrained
    o.steps = s.steps;
    o.batch = s.batch;
    o.adam.lr = s.lr;
    o.seed = seed;
    o.eval_every = std::max<int64_t>(1, s.steps / 10);
    o.eval_batches = 4;
    return o;
  };

  Csv runs(
      "run,pe,seed,steps,theta,causal,objective,params,train_loss,val_loss,tokens_per_s,train_"
      "seconds");
  Csv extra("run,pe,seed,scaling,len,loss,ppl,last_quarter_loss,last_quarter_ppl,tokens,windows");
  Csv posl("run,pe,scaling,len,start,end,loss");
  auto log_run = [&](const std::string& name, const TrainOptions& o, const GPT& m) {
    std::string dir = s.out + "/runs/" + name;
    std::ifstream in(dir + "/log.csv");
    std::string line, last;
    while (std::getline(in, line))
      if (!line.empty()) last = line;
    std::vector<std::string> f;
    std::stringstream ss(last);
    for (std::string c; std::getline(ss, c, ',');) f.push_back(c);
    std::string secs =
        fs::exists(dir + "/train_seconds.txt") ? read_file(dir + "/train_seconds.txt") : "nan";
    while (!secs.empty() && (secs.back() == '\n')) secs.pop_back();
    runs.row({name, pe_name(o.model.pe), std::to_string(o.seed), std::to_string(o.steps),
              num(o.model.rope_theta), o.model.causal ? "true" : "false", o.objective,
              std::to_string(m.num_parameters()), f.size() > 2 ? f[2] : "nan",
              f.size() > 3 ? f[3] : "nan", f.size() > 5 ? f[5] : "nan", secs});
    fs::copy_file(dir + "/log.csv", s.out + "/curves/" + name + ".csv",
                  fs::copy_options::overwrite_existing, ec);
  };
  auto extrapolate = [&](const std::string& name, const std::string& pe, uint64_t seed, GPT& m,
                         ScalingKind sk, const std::vector<int64_t>& lens, int64_t max_windows) {
    for (int64_t L : lens) {
      if (m.config().pe == PeKind::learned && L > m.config().max_len) continue;
      EvalResult r = cached_eval(s, name, m, val, L, sk, max_windows);
      double lq = last_quarter(r);
      extra.row({name, pe, std::to_string(seed), scaling_name(sk), std::to_string(L), num(r.loss),
                 num(r.ppl), num(lq), num(std::exp(lq)), std::to_string(r.tokens),
                 std::to_string(r.windows)});
      for (const auto& b : r.buckets)
        posl.row({name, pe, scaling_name(sk), std::to_string(L), std::to_string(b.start),
                  std::to_string(b.end), num(b.loss)});
    }
  };

  // ---- 1-2. main runs and extrapolation ----
  std::vector<std::unique_ptr<GPT>> seed1(pes.size());
  for (size_t p = 0; p < pes.size(); ++p)
    for (uint64_t seed : s.seeds) {
      std::string name = pes[p] + "_s" + std::to_string(seed);
      TrainOptions o = base(pes[p], seed);
      Checkpoint ck = ensure_run(s, tr, name, o, w_train);
      log_run(name, o, *ck.model);
      tr.start("evaluate " + name + " at 256..4096");
      extrapolate(name, pes[p], seed, *ck.model, ScalingKind::none, s.lens, 1 << 30);
      tr.done(w_eval);
      if (seed == s.seeds.front()) seed1[p] = std::move(ck.model);
    }

  // ---- 3. RoPE scaling, zero-shot, on the seed-1 RoPE model ----
  GPT& rope = *seed1[3];
  for (const std::string& sc : scalings) {
    tr.start("rope scaling " + sc + " at 256..4096");
    extrapolate("rope_s1", "rope", 1, rope, parse_scaling(sc), s.lens, 1 << 30);
    tr.done(w_eval * 2);
  }

  // ---- 4. ablations: theta, and the masked-LM without a causal mask ----
  for (double theta : {10.0, 1e6}) {
    std::string name = theta == 10 ? "rope_theta10" : "rope_theta1e6";
    TrainOptions o = base("rope", 1);
    o.model.rope_theta = theta;
    Checkpoint ck = ensure_run(s, tr, name, o, w_train);
    log_run(name, o, *ck.model);
    extrapolate(name, "rope", 1, *ck.model, ScalingKind::none, s.lens, 1 << 30);
  }
  Csv mlm("pe,val_loss,shuffle_max_diff");
  for (std::string pe : {"none", "rope"}) {
    std::string name = "mlm_" + pe;
    TrainOptions o = base(pe, 1);
    o.model.causal = false;
    o.objective = "mlm";
    Checkpoint ck = ensure_run(s, tr, name, o, w_train);
    log_run(name, o, *ck.model);
    // masked-LM val loss on fixed masks; and the shuffle check: permute the input, un-permute
    // the outputs, compare
    Generator g(99);
    double vl = 0;
    int nb = 4;
    for (int i = 0; i < nb; ++i) {
      Batch b = sample_batch(val, 8, s.ctx, g, "mlm", 0.15, static_cast<int32_t>(vocab.size()));
      NoGrad ng;
      vl += ck.model->loss(b.x, b.y).item() / nb;
    }
    Batch b = sample_batch(val, 1, 64, g, "mlm", 0.15, static_cast<int32_t>(vocab.size()));
    std::vector<int64_t> perm(64);
    for (int64_t i = 0; i < 64; ++i) perm[i] = (i * 37 + 11) % 64;  // a fixed permutation
    Ids shuffled = b.x;
    for (int64_t i = 0; i < 64; ++i) shuffled.data[i] = b.x.data[perm[i]];
    NoGrad ng;
    Tensor l1 = ck.model->logits(b.x), l2 = ck.model->logits(shuffled);
    double diff = 0;
    int64_t V = l1.size(2);
    std::vector<double> v1 = l1.to_vector(), v2 = l2.to_vector();
    for (int64_t i = 0; i < 64; ++i)
      for (int64_t v = 0; v < V; ++v)
        diff = std::max(diff, std::abs(v2[i * V + v] - v1[perm[i] * V + v]));
    mlm.row({pe, num(vl), num(diff)});
  }

  // ---- 5. tasks ----
  Csv tasks("task,pe,train_len,test_len,accuracy");
  for (std::string task : {"reverse", "passkey"}) {
    int64_t T0 = task == "reverse" ? 64 : 128;
    std::string dd = s.out + "/data/task_" + task;
    if (s.force || !fs::exists(dd + "/val.bin"))
      write_corpus(build_corpus(task_text(task, task == "reverse" ? 20000 : 6000, T0, 7)), dd);
    std::vector<std::string> tv = load_vocab(dd + "/vocab.json");
    for (const std::string& pe : pes) {
      std::string name = "task_" + task + "_" + pe;
      TrainOptions o = base(pe, 1);
      o.data = dd;
      o.model.n_embd = 64, o.model.n_layer = 2, o.model.n_head = 4, o.model.block_size = T0;
      o.model.max_len = o.model.pe == PeKind::learned ? 1024 : 0;
      o.steps = s.task_steps;
      o.batch = 32;
      o.eval_every = std::max<int64_t>(1, o.steps / 10);
      Checkpoint ck = ensure_run(s, tr, name, o, w_task);
      log_run(name, o, *ck.model);
      std::vector<int64_t> test =
          task == "reverse" ? std::vector<int64_t>{22} : std::vector<int64_t>{128, 256, 512};
      for (int64_t len : test) {
        TaskScore sc = task_accuracy(*ck.model, tv, task, len, s.quick ? 50 : 200, 1234);
        tasks.row({task, pe, std::to_string(T0), std::to_string(len), num(sc.exact)});
        tasks.row({task + " per character", pe, std::to_string(T0), std::to_string(len),
                   num(sc.per_char)});
      }
    }
  }

  // ---- 6. attention maps, lines of code, report ----
  tr.start("attention maps, lines of code, report");
  Ids first{std::vector<int32_t>(val.begin(), val.begin() + 64), {1, 64}};
  Csv loc("pe,file,lines,params");
  const char* files[] = {"posenc/none.h", "posenc/learned.h+posenc/learned.cpp",
                         "posenc/sinusoidal.h+posenc/sinusoidal.cpp",
                         "posenc/rope.h+posenc/rope.cpp", "posenc/alibi.h+posenc/alibi.cpp"};
  for (size_t p = 0; p < pes.size(); ++p) {
    Tensor P = seed1[p]->attention_map(first, 0);  // (1,H,64,64)
    std::vector<double> v = P.to_vector();
    int64_t H = P.size(1);
    std::string m;
    for (int64_t i = 0; i < 64; ++i) {
      for (int64_t j = 0; j < 64; ++j) {
        double acc = 0;
        for (int64_t h = 0; h < H; ++h) acc += v[(h * 64 + i) * 64 + j];
        m += (j ? "," : "") + num(acc / H);
      }
      m += "\n";
    }
    write_file_atomic(s.out + "/attention_" + pes[p] + ".csv", m);
    std::string fl = files[p];
    int64_t lines = 0;
    std::stringstream ss(fl);
    for (std::string f; std::getline(ss, f, '+');) lines += count_lines(f);
    loc.row({pes[p], fl, std::to_string(lines), std::to_string(seed1[p]->num_parameters())});
  }
  loc.row({"rope_scaling", "posenc/rope_scaling.h+posenc/rope_scaling.cpp",
           std::to_string(count_lines("posenc/rope_scaling.h") +
                          count_lines("posenc/rope_scaling.cpp")),
           std::to_string(seed1[3]->num_parameters())});
  for (auto [file, csv] : std::vector<std::pair<std::string, Csv*>>{{"runs.csv", &runs},
                                                                    {"extrapolation.csv", &extra},
                                                                    {"position_loss.csv", &posl},
                                                                    {"mlm.csv", &mlm},
                                                                    {"tasks.csv", &tasks},
                                                                    {"loc.csv", &loc}})
    write_file_atomic(s.out + "/" + file, csv->text);
  ReportInfo info;
  info.title = s.quick ? "poslab study (quick)" : "poslab study";
  info.command = s.quick ? "make experiments-quick" : "make experiments";
  std::time_t now = std::time(nullptr);
  char date[64];
  std::strftime(date, sizeof date, "%Y-%m-%d %H:%M UTC", std::gmtime(&now));
  info.date = date;
  info.machine = std::to_string(std::thread::hardware_concurrency()) + " CPU threads";
  if (s.device == Device::cuda) info.machine += ", " + cuda_device_name();
  info.quick = s.quick;
  info.total_seconds = tr.elapsed();
  write_report(s.out, info);
  tr.done(0.01);
  std::fprintf(stderr, "done in %s: %s/REPORT.md\n", format_duration(tr.elapsed()).c_str(),
               s.out.c_str());
  return 0;
}

}  // namespace poslab
