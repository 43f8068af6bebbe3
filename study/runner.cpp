// runner.cpp — one run of the study: train, evaluate, score. See runner.h.
#include "study/runner.h"

#include <chrono>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <thread>

#include "data/answer_mask.h"
#include "data/atomic_file.h"
#include "data/corpus.h"
#include "data/json.h"
#include "study/probes.h"
#include "study/run_evals.h"
#include "study/sliding_cache.h"
#include "study/tables.h"
#include "study/tasks.h"
#include "study/timing.h"
#include "train/checkpoint.h"
#include "train/log.h"

namespace poslab {
namespace fs = std::filesystem;

namespace {

// The step a run trains to: its steps, or where it pauses (a screened run's constant phase).
int64_t last_step(const TrainOptions& o) {
  return o.stop_after > 0 ? o.stop_after : o.steps;
}

bool finished(const std::string& run_dir, const TrainOptions& o) {
  std::string p = run_dir + "/model.safetensors";
  if (!fs::exists(p)) return false;
  try {
    return load_checkpoint(p).step == last_step(o);
  } catch (const std::exception&) {
    return false;
  }
}

bool reuse(const StudyConfig& c, const std::string& path) {
  return !c.force && fs::exists(path);
}

// Trains unless the finished run is there; an interrupted run is continued (a screened run's
// paused constant phase too, when the run now goes on to B). Returns the model; `trained` says
// whether it was (re)trained now. The training time goes to the run's timing.csv as `stage`
// ("train" or "retrain": a model made again for a run made earlier) + " <run>"; a resumed run
// adds to it.
Checkpoint ensure_trained(const StudyConfig& c, const RunSpec& r, bool& trained,
                          const std::string& stage = "train") {
  const std::string dir = c.run_dir(r.name);
  TrainOptions o = r.train;
  o.quiet = false;
  trained = c.force || !finished(dir, o);
  if (trained) {
    std::fprintf(stderr, "%s: %s (%lld steps)\n", r.name.c_str(), stage.c_str(),
                 (long long)last_step(o));
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
    record_stage(dir, stage + " " + r.name, seconds_since(t0), !o.resume);
  } else {
    std::fprintf(stderr, "%s: finished earlier, reused\n", r.name.c_str());
  }
  return load_checkpoint(dir + "/model.safetensors", c.device);
}

// Every test cell of the run's task (each passkey length at each depth; unscramble's test_lens
// are word counts k): n fresh examples, the same for every scheme and seed (one fixed seed per
// cell), exact-match accuracy with its Wilson interval, per-character accuracy. Passkey: the
// same examples by the key's distance from the question, into *by_distance.
std::vector<TaskRow> task_scores(const RunSpec& r, const GPT& model,
                                 std::vector<PasskeyDistanceRow>* by_distance) {
  const TaskSpec& t = *r.task;
  std::vector<std::string> vocab = load_vocab(t.data + "/vocab.json");
  std::vector<double> depths = t.depths;
  if (depths.empty()) depths = {NAN};  // not applicable: an empty cell in tasks.csv
  std::vector<TaskRow> rows;
  uint64_t cell_seed = 1000;  // the corpus is drawn from seed 7 (prepare_study_data)
  DistanceScores distances;
  for (int64_t len : t.test_lens)
    for (double depth : depths) {
      TaskScore sc = task_accuracy(model, vocab, t.name, {len, depth}, t.test_examples, ++cell_seed,
                                   t.name == "passkey" ? &distances : nullptr);
      ProportionInterval ci = wilson_interval(sc.correct, sc.n);
      rows.push_back({.task = t.name,
                      .pe = r.scheme,
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
  for (const auto& [lo, counts] : distances) {
    const auto [n, correct] = counts;
    const ProportionInterval ci = wilson_interval(correct, n);
    by_distance->push_back({r.scheme, static_cast<long>(r.train.seed),
                            trained_length(t.name, t.train_len), lo, distance_bucket(lo).second, n,
                            correct, static_cast<double>(correct) / static_cast<double>(n), ci.low,
                            ci.high});
  }
  return rows;
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
  if (c.force || !probe_current(dir + "/copy.csv")) {
    std::fprintf(stderr, "%s: copy at a distance up to %lld\n", r.name.c_str(), (long long)L);
    const std::vector<uint16_t> train = load_tokens(r.train.data + "/train.bin", vocab.size());
    write_rows(dir + "/copy.csv", copy_rows(r, model, train, val, L, c.copy_examples));
    made = true;
  }
  if (r.scheme == "rope" && !reuse(c, dir + "/rope_pairs.csv")) {
    std::fprintf(stderr, "%s: RoPE pairs at %lld\n", r.name.c_str(), (long long)L);
    write_rows(dir + "/rope_pairs.csv", rope_pair_rows(r, model, val, L, c.probe_windows));
    made = true;
  }
  if (made) record_stage(dir, "probe " + r.name, seconds_since(t0), c.force);
}

// done.json: what the run was made with (its training options as a command line would give
// them), written last; a run is done when it is there and says the same.
std::string done_path(const StudyConfig& c, const RunSpec& r) {
  return c.run_dir(r.name) + "/done.json";
}

// The train and val losses of each row of two logs (log.h) at the same steps: equal when the
// runs trained the same model. Returns the largest difference; NaN when the steps differ.
double log_difference(const std::vector<LogRow>& a, const std::vector<LogRow>& b) {
  if (a.size() != b.size()) return NAN;
  double most = 0;
  for (size_t i = 0; i < a.size(); ++i) {
    if (a[i].step != b[i].step) return NAN;
    most = std::max({most, std::abs(a[i].train_loss - b[i].train_loss),
                     std::abs(a[i].val_loss - b[i].val_loss)});
  }
  return most;
}

// The model of a run made earlier whose model is not here (only its small files came back,
// archive.h), made again so that a measurement the plan now asks for can read it: trained in
// <out>/retrain/<run>, so the run's own files stay as they were made, then moved into the run's
// folder ("retrain <run>" in its timing.csv). retrain.json there says whether the new log's
// losses equal the old ones, row by row: training is deterministic on one machine, so equal
// logs say this is the model whose measurements the run holds.
void retrain_model(const StudyConfig& c, const RunSpec& r) {
  const std::string dir = c.run_dir(r.name), side = c.out + "/retrain/" + r.name;
  std::fprintf(stderr, "%s: its model is not here; training it again in %s\n", r.name.c_str(),
               side.c_str());
  TrainOptions o = r.train;
  o.out = side;
  o.quiet = false;
  o.resume = fs::exists(side + "/state.safetensors") && !finished(side, o);
  o.force = !o.resume;
  if (!o.branch_from.empty() && !fs::exists(o.branch_from)) o.branch_from.clear();
  if (o.resume) o.branch_from.clear();
  auto t0 = std::chrono::steady_clock::now();
  if (!finished(side, o)) train(o);
  record_stage(dir, "retrain " + r.name, seconds_since(t0), !o.resume);
  fs::copy_file(side + "/model.safetensors", dir + "/model.safetensors",
                fs::copy_options::overwrite_existing);
  const double diff = log_difference(read_log(side + "/log.csv"), read_log(dir + "/log.csv"));
  char b[64];
  std::snprintf(b, sizeof b, "%.6g", std::isnan(diff) ? -1.0 : diff);  // -1: other steps
  write_file_atomic(dir + "/retrain.json", "{\"run\":" + json_quote(r.name) +
                                               ",\"same_log\":" + (diff == 0 ? "true" : "false") +
                                               ",\"max_log_difference\":" + b + "}\n");
}

bool earlier_run(const StudyConfig& c, const RunSpec& r) {
  return !c.force && marked_done(c, r);
}

// A run that starts from another's model (a fine-tune) needs that model here. The plan makes
// it in the parent's job, right after the parent; a parent made earlier, elsewhere, is made
// again (retrain_model), its measurements kept.
void ensure_parent_model(const StudyConfig& c, const RunSpec& parent, const RunSpec& r) {
  if (r.train.init_from.empty() || fs::exists(r.train.init_from)) return;
  std::fprintf(stderr, "%s: %s is not here\n", r.name.c_str(), r.train.init_from.c_str());
  if (earlier_run(c, parent)) return retrain_model(c, parent);
  bool trained = false;
  StudyConfig keep = c;
  keep.force = false;
  ensure_trained(keep, parent, trained);
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
  // the options added since, named only when set, so a run made before them keeps its line
  std::string sig = b;
  if (m.pe.rope_proportion != 1) sig += " rope_proportion=" + std::to_string(m.pe.rope_proportion);
  if (m.pe.nope_every > 0) sig += " nope_every=" + std::to_string(m.pe.nope_every);
  if (m.pe.random_positions > 0)
    sig += " random_positions=" + std::to_string(m.pe.random_positions);
  if (o.stop_after > 0) sig += " stop_after=" + std::to_string(o.stop_after);
  if (!o.init_from.empty() && o.rope_scaling.kind != ScalingKind::linear)
    sig += std::string(" finetune_scaling=") + scaling_name(o.rope_scaling.kind);
  return sig;
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

bool task_outputs_done(const StudyConfig& c, const RunSpec& r) {
  const std::string dir = c.run_dir(r.name);
  return fs::exists(dir + "/tasks.csv") &&
         (r.task->name != "passkey" || fs::exists(dir + "/passkey_distance.csv"));
}

bool run_done(const StudyConfig& c, const StudyPlan& p, const RunSpec& r) {
  if (c.force) return false;
  const bool marked = marked_done(c, r);
  if (!r.waits.empty() && !marked) return false;  // its options are not settled
  if (!marked && !finished(c.run_dir(r.name), r.train)) return false;
  for (const std::string& f : probe_files(r))
    if (!probe_current(c.run_dir(r.name) + "/" + f)) return false;
  return evals_done(c, p, r) && !(r.task && !task_outputs_done(c, r));
}

std::vector<std::string> probe_files(const RunSpec& r) {
  if (!r.probes) return {};
  std::vector<std::string> files{"attribution.csv", "copy.csv"};
  if (r.scheme == "rope") files.push_back("rope_pairs.csv");
  return files;
}

bool probe_current(const std::string& path) {
  if (!fs::exists(path)) return false;
  if (fs::path(path).filename() != "copy.csv") return true;
  std::ifstream in(path);
  std::string header;
  std::getline(in, header);
  return header.find(",share") != std::string::npos;  // copy v2's columns (copy_probe.h)
}

// A run made earlier (its done.json says these options) that lacks a measurement the plan now
// asks for makes only what is missing, with its model (made again when it is not here:
// retrain_model); what it made stays, done.json too. Any other run trains unless finished, and
// a model trained now keeps no measurement of an older one.
void make_run(const StudyConfig& config, const StudyPlan& p, const RunSpec& r) {
  if (!r.waits.empty())
    fail("--job ", r.name, ": its options wait for ", r.waits, "; make that first");
  if (!r.after.empty()) ensure_parent_model(config, p.run(r.after), r);
  const bool earlier = earlier_run(config, r);
  if (earlier && !finished(config.run_dir(r.name), r.train)) retrain_model(config, r);
  bool trained = false;
  Checkpoint ck = ensure_trained(config, r, trained);
  StudyConfig c = config;
  c.force = config.force || trained;
  const std::string dir = c.run_dir(r.name);
  if (!evals_done(c, p, r)) evaluate_all(c, p, r, *ck.model);
  if (r.probes) make_probes(c, r, *ck.model);
  if (r.task && (c.force || !task_outputs_done(c, r))) {
    auto t0 = std::chrono::steady_clock::now();
    std::vector<PasskeyDistanceRow> by_distance;
    const std::vector<TaskRow> rows = task_scores(r, *ck.model, &by_distance);
    if (c.force || !fs::exists(dir + "/tasks.csv")) write_rows(dir + "/tasks.csv", rows);
    if (r.task->name == "passkey") write_rows(dir + "/passkey_distance.csv", by_distance);
    record_stage(dir, "tasks " + r.name, seconds_since(t0), c.force);
  }
  if (earlier) return;
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
  for (const RunSpec* child : children(p, r))  // one that waits is a later round's job
    if (child->waits.empty() && !run_done(c, p, *child)) make_run(c, p, *child);
}

}  // namespace poslab
