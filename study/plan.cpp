// plan.cpp — the study as a list of run specifications, built part by part (see study.h).
// Changing what the study measures means changing these functions, nothing else.
#include <algorithm>
#include <cmath>
#include <cstdio>

#include "study/screening.h"
#include "study/study.h"
#include "study/tune.h"

namespace poslab {

// Each scheme in its canonical form (canonical_embedding) with its own tuned learning rate, the
// warmup-stable-decay schedule with the main runs' warmup (so a branch or an ablation at B/4
// has the learning rates of the main run's first steps).
TrainOptions base_options(const StudyConfig& c, const std::string& corpus, const std::string& pe,
                          uint64_t seed) {
  const StudyScheme& scheme = study_scheme(pe);
  TrainOptions o;
  o.data = c.corpus_dir(corpus);
  o.model.n_embd = c.d, o.model.n_layer = c.layers, o.model.n_head = c.heads;
  o.model.block_size = c.ctx;
  o.model.embedding = canonical_embedding(scheme.pe);
  o.model.device = c.device;
  // rows past T0 exist (untrained), so that learned can be evaluated up to 4096
  if (scheme.pe == PeKind::learned) o.model.pe.max_len = std::max<int64_t>(4096, c.lens.back());
  apply_scheme(scheme, o.model);
  o.steps = c.steps;
  o.batch = c.batch;
  o.adam.lr = c.lr_for(pe);
  o.schedule = Schedule::wsd;
  o.decay_share = c.decay_share;
  o.warmup = std::min<int64_t>(100, c.steps / 10);
  o.seed = seed;
  o.eval_every = std::max<int64_t>(1, c.steps / 10);
  o.eval_batches = 4;
  return o;
}

TrainOptions with_steps(TrainOptions o, int64_t steps) {
  o.steps = steps;
  o.eval_every = std::max<int64_t>(1, steps / 10);
  return o;
}

RunSpec run_spec(const StudyConfig& c, const std::string& name, const std::string& corpus,
                 const std::string& scheme, TrainOptions o) {
  o.out = c.run_dir(name);
  RunSpec r;
  r.name = name;
  r.scheme = scheme;
  r.corpus = corpus;
  r.train = o;
  return r;
}

int64_t budget_steps(const StudyConfig& c, int64_t divisor) {
  return std::max<int64_t>(1, c.steps / divisor);
}
int64_t branch_step(const StudyConfig& c, int64_t divisor) {
  TrainOptions o =
      with_steps(base_options(c, StudyConfig::kStudyCorpus, "rope", 1), budget_steps(c, divisor));
  return lr_schedule(o).decay_start();
}

namespace {

// A next-token run evaluated at every length (scaling none); the model at 80% of the steps is
// kept, for last20_gain.
void add_lm_run(const StudyConfig& c, StudyPlan& p, const std::string& name, const std::string& pe,
                const TrainOptions& o) {
  p.runs.push_back(run_spec(c, name, StudyConfig::kStudyCorpus, pe, o));
  if (last20_step(o.steps) > 0) p.runs.back().train.keep_steps = {last20_step(o.steps)};
  p.evals.push_back({name, pe, o.seed, ScalingKind::none});
}

// A cooldown branch of run `main` at B / divisor: its state at the branch's decay start,
// decayed over the branch's last steps; evaluated at every length, or at T0 only.
void add_branch(const StudyConfig& c, StudyPlan& p, const std::string& main, const std::string& pe,
                uint64_t seed, int64_t divisor) {
  const int64_t at = branch_step(c, divisor);
  TrainOptions o =
      with_steps(base_options(c, StudyConfig::kStudyCorpus, pe, seed), budget_steps(c, divisor));
  if (at > 0) o.branch_from = kept_state_path(c.run_dir(main), at);
  const std::string name = budget_run_name(pe, divisor, seed);
  p.runs.push_back(run_spec(c, name, StudyConfig::kStudyCorpus, pe, o));
  p.runs.back().after = main;
  p.runs.back().start_step = at;
  p.runs.back().t0_only = divisor != c.ablation_divisor;
  p.evals.push_back({name, pe, seed, ScalingKind::none});
}

// One main run at budget B, evaluated at every length and probed (probes.h), keeping its state
// where its branches start (0.8 B/4, 0.8 B/2); the branches follow in the same job: B/4
// evaluated at every length, B/2 at T0.
void add_main_run(const StudyConfig& c, StudyPlan& p, const std::string& pe, uint64_t seed) {
  const std::string main = main_run_name(pe, seed);
  add_lm_run(c, p, main, pe, base_options(c, StudyConfig::kStudyCorpus, pe, seed));
  p.runs.back().probes = true;
  std::vector<int64_t>& keep = p.runs.back().train.keep_steps;
  for (int64_t divisor : c.budget_divisors)
    if (const int64_t at = branch_step(c, divisor); at > 0) keep.push_back(at);
  std::sort(keep.begin(), keep.end());
  for (int64_t divisor : c.budget_divisors) add_branch(c, p, main, pe, seed, divisor);
}

// 2. Every scheme of `pes` at T0 with every seed at budget B, seed by seed.
void main_runs(const StudyConfig& c, StudyPlan& p, const std::vector<std::string>& pes) {
  for (uint64_t seed : first_seeds(c.main_seeds))
    for (const std::string& pe : pes) add_main_run(c, p, pe, seed);
}

// 7. RoPE scaling, zero-shot (the table of rope_scaling_table), on every main model of the
// scaled schemes (rope, prope, rope_nope4; not rope_rand: a scaling needs contiguous
// positions).
void scaling_evals(const StudyConfig& c, StudyPlan& p) {
  for (const std::string& pe : c.scaled_pes) {
    if (std::find(p.pes.begin(), p.pes.end(), pe) == p.pes.end()) continue;
    for (uint64_t seed : first_seeds(c.main_seeds))
      for (const TableScaling& s : rope_scaling_table())
        p.evals.push_back({main_run_name(pe, seed), pe, seed, s.kind, 0, s.truncate});
  }
}

// 3. A screened scheme (screening.h): seed by seed, the constant phase of a run on B's schedule
// up to where its B/4 branch starts (<pe>_screen_s<seed>: the trainer pauses there), and that
// branch, evaluated at every length. A promoted scheme keeps its screened runs (its branch is
// then its main run's, the same run: with_branch false).
void screened_runs(const StudyConfig& c, StudyPlan& p, const std::vector<std::string>& pes,
                   bool with_branch = true) {
  const int64_t divisor = c.ablation_divisor, at = branch_step(c, divisor);
  for (uint64_t seed : first_seeds(c.screen_seeds))
    for (const std::string& pe : pes) {
      TrainOptions o = base_options(c, StudyConfig::kStudyCorpus, pe, seed);
      o.stop_after = at;
      o.keep_steps = {at};
      const std::string name = screen_run_name(pe, seed);
      p.runs.push_back(run_spec(c, name, StudyConfig::kStudyCorpus, pe, o));
      if (with_branch) add_branch(c, p, name, pe, seed, divisor);
    }
}

// 3. The promoted schemes become main schemes: their main runs, branches and tasks. The main
// run of a screened seed continues its screened run's constant phase from the state kept
// there (a cooldown branch's mechanism: the same model as trained straight, trainer.h).
void promoted_runs(const StudyConfig& c, StudyPlan& p, const std::vector<std::string>& pes) {
  screened_runs(c, p, pes, false);
  const size_t first = p.runs.size();
  main_runs(c, p, pes);
  const int64_t at = branch_step(c, c.ablation_divisor);
  for (size_t i = first; i < p.runs.size(); ++i) {
    RunSpec& r = p.runs[i];
    if (!r.probes || static_cast<int64_t>(r.train.seed) > c.screen_seeds || at <= 0) continue;
    r.after = screen_run_name(r.scheme, r.train.seed);
    r.start_step = at;
    r.train.branch_from = kept_state_path(c.run_dir(r.after), at);
  }
  task_runs(c, p, pes);
}

// The fine-tunes at finetune_factor T0 (SPEC 7 v5 part 7): RoPE with linear interpolation (Chen
// et al. 2023) and with YaRN (s against the original T0), the scaling applied in every forward
// of the fine-tune and of its evaluation; ALiBi trained on at that length without one (the
// control: does any scheme use the longer context?).
struct FinetuneKind {
  const char* pe;
  ScalingKind scaling;
};
const std::vector<FinetuneKind>& finetune_kinds() {
  static const std::vector<FinetuneKind> kKinds{
      {"rope", ScalingKind::linear}, {"rope", ScalingKind::yarn}, {"alibi", ScalingKind::none}};
  return kKinds;
}

// One fine-tune: the main run of `pe` and `seed` trained on at s T0 for finetune_share of B's
// tokens (Chen et al. fine-tune about 1,000 steps), at a tenth of the learning rate; evaluated
// at every length with s fixed.
void add_finetune(const StudyConfig& c, StudyPlan& p, const FinetuneKind& k, uint64_t seed) {
  const int64_t s = c.finetune_factor;
  TrainOptions o = base_options(c, StudyConfig::kStudyCorpus, k.pe, seed);
  o.model.block_size = s * c.ctx;
  o.batch = std::max<int64_t>(1, c.batch / s);  // the same tokens per step
  const double tokens = c.finetune_share * static_cast<double>(c.steps * c.batch * c.ctx);
  o = with_steps(o, std::max<int64_t>(1, std::llround(tokens / (o.batch * s * c.ctx))));
  o.adam.lr *= c.finetune_lr_ratio;
  o.warmup = std::max<int64_t>(1, o.steps / 10);
  o.init_from = c.run_dir(main_run_name(k.pe, seed)) + "/model.safetensors";
  if (k.scaling != ScalingKind::none) o.rope_scaling = {k.scaling, static_cast<double>(s), c.ctx};
  const std::string name = finetune_run_name(k.pe, k.scaling, s, seed);
  p.runs.push_back(run_spec(c, name, StudyConfig::kStudyCorpus, k.pe, o));
  p.runs.back().after = main_run_name(k.pe, seed);
  const double factor = k.scaling == ScalingKind::none ? 0 : static_cast<double>(s);
  p.evals.push_back({name, k.pe, seed, k.scaling, factor});
}

void finetune_runs(const StudyConfig& c, StudyPlan& p) {
  for (uint64_t seed : first_seeds(std::min(c.finetune_seeds, c.main_seeds)))
    for (const FinetuneKind& k : finetune_kinds()) add_finetune(c, p, k, seed);
}

// The seed text's break experiments and the ablations, each at B / ablation_divisor with the
// main runs' schedule (read against their branch at that budget): no mask and no PE, a masked
// LM, NoPE against RoPE (break 2); RoPE's base theta (break 3); each scheme of
// swapped_embedding_pes under the other embedding convention (so each rank can be read under
// both); T5 with max_distance = T0. They keep the learning rate they were made with (a change
// of a scheme's rate trains again its main runs, branches and fine-tunes only).
void ablation_runs(const StudyConfig& c, StudyPlan& p) {
  const int64_t steps = budget_steps(c, c.ablation_divisor);
  auto options = [&](const std::string& pe, uint64_t seed) {
    TrainOptions o = with_steps(base_options(c, StudyConfig::kStudyCorpus, pe, seed), steps);
    o.adam.lr = c.kept_lr_for(pe);
    return o;
  };
  for (uint64_t seed : first_seeds(c.ablation_seeds)) {
    for (const std::string& pe : mlm_pes()) {
      TrainOptions o = options(pe, seed);
      o.model.causal = false;
      o.objective = Objective::mlm;
      p.runs.push_back(run_spec(c, mlm_run_name(pe, seed), StudyConfig::kStudyCorpus, pe, o));
      p.runs.back().mlm_check = true;
    }
    for (double theta : ablation_thetas()) {
      TrainOptions o = options("rope", seed);
      o.model.pe.theta = theta;
      add_lm_run(c, p, theta_run_name(theta, seed), "rope", o);
    }
    for (const std::string& pe : swapped_embedding_pes()) {
      TrainOptions o = options(pe, seed);
      o.model.embedding = swapped_embedding(o.model.pe.kind);
      add_lm_run(c, p, swapped_run_name(pe, seed), pe, o);
    }
    TrainOptions t5 = options("t5", seed);
    t5.model.pe.t5_max_distance = c.ctx;
    add_lm_run(c, p, t5_distance_run_name(c.ctx, seed), "t5", t5);
  }
}

bool contains(const std::vector<std::string>& v, const std::string& x) {
  return std::find(v.begin(), v.end(), x) != v.end();
}

// The runs p.runs[first, last) wait while their scheme's learning rate is not chosen, or, for a
// kept scheme, while its move to the larger rate is undecided (a move trains them again).
void mark_waiting(const StudyConfig& c, StudyPlan& p, size_t first, size_t last) {
  for (size_t i = first; i < last; ++i) {
    RunSpec& r = p.runs[i];
    if (contains(c.lr_pending, r.scheme)) r.waits = "the tuning of " + r.scheme;
    if (contains(c.lr_undecided, r.scheme)) r.waits = "the learning-rate check of " + r.scheme;
  }
}

// Moves the runs and evaluations a part added to `q` into p's contingent ones.
void add_contingent(StudyPlan& p, StudyPlan&& q, const std::string& what) {
  p.contingent.insert(p.contingent.end(), q.runs.begin(), q.runs.end());
  p.contingent_evals.insert(p.contingent_evals.end(), q.evals.begin(), q.evals.end());
  p.undecided.push_back(what + " (" + std::to_string(q.runs.size()) + " runs)");
}

// The main schemes whose main runs come last: the kept ones whose learning rate moved (tune.h),
// and those whose move is undecided (contingent: what a move would add).
struct LrSplit {
  std::vector<std::string> stay, moved;
};
LrSplit lr_split(const StudyConfig& c, const std::vector<std::string>& pes) {
  LrSplit s;
  for (const std::string& pe : pes)
    (contains(c.kept_pes, pe) && c.lr_for(pe) != c.kept_lr_for(pe) ? s.moved : s.stay)
        .push_back(pe);
  return s;
}

// The undecided parts, counted apart: each screened scheme's promotion, each kept scheme's move
// to the larger learning rate.
void contingent_parts(const StudyConfig& c, StudyPlan& p,
                      const std::vector<std::string>& screening) {
  for (const std::string& pe : screening) {
    StudyPlan q;
    q.pes = {pe};
    promoted_runs(c, q, {pe});
    std::erase_if(q.runs, [](const RunSpec& r) { return r.train.stop_after > 0; });  // made
    add_contingent(p, std::move(q), "the promotion of " + pe);
  }
  for (const std::string& pe : c.lr_undecided) {
    StudyConfig moved = c;
    moved.lr_by_pe[pe] = c.tune_lrs.back();
    StudyPlan q;
    q.pes = {pe};
    main_runs(moved, q, {pe});
    add_contingent(p, std::move(q),
                   "the learning rate " + tune_lr_label(c.tune_lrs.back()) + " for " + pe);
  }
}

}  // namespace

// In the order the runs are made (study.h): what v5 adds first, the kept main runs that need
// their model again after them; then, if the time limit binds, what is left for a later
// invocation comes in this order: the promotions, the fine-tunes, the main runs of a scheme
// whose learning rate moved (the fine-tunes wait while a promotion is undecided, so that a round
// makes the promotions first; a promotion reads the B/4 branches there are, a moved scheme's
// from before its move when they are there).
StudyPlan study_plan(const StudyConfig& c) {
  StudyPlan p;
  const Screening screen = screening_status(c);
  p.pes = c.main_pes;
  for (const std::string& pe : screen.promoted) p.pes.push_back(pe);
  p.screened = screen.not_promoted;
  for (const std::string& pe : screen.undecided) p.screened.push_back(pe);
  const LrSplit lr = lr_split(c, c.main_pes);
  std::vector<std::string> fresh, kept;  // not in the kept schemes / in them
  for (const std::string& pe : lr.stay) (contains(c.kept_pes, pe) ? kept : fresh).push_back(pe);
  if (c.tune_first) tuning_runs(c, p);
  // tasks train at their own rates, the ablations at their kept ones: they never wait
  size_t from = p.runs.size();
  main_runs(c, p, fresh);
  screened_runs(c, p, p.screened);
  mark_waiting(c, p, from, p.runs.size());
  task_runs(c, p, c.main_pes);
  ablation_runs(c, p);
  from = p.runs.size();
  main_runs(c, p, kept);
  promoted_runs(c, p, screen.promoted);
  scaling_evals(c, p);
  const size_t finetunes = p.runs.size();
  finetune_runs(c, p);
  const size_t moved = p.runs.size();
  main_runs(c, p, lr.moved);
  mark_waiting(c, p, from, p.runs.size());
  // the promotions come before the fine-tunes: they wait while one is undecided (not the moved
  // schemes' runs: a screening without their B/4 branches, as in a study begun without the
  // archive, waits for them)
  for (size_t i = finetunes; i < moved && !screen.undecided.empty(); ++i)
    if (p.runs[i].waits.empty()) p.runs[i].waits = "the screening";
  contingent_parts(c, p, screen.undecided);
  return p;
}

const RunSpec& StudyPlan::run(const std::string& name) const {
  std::string valid;
  for (const RunSpec& r : runs) {
    if (r.name == name) return r;
    valid += (valid.empty() ? "" : ", ") + r.name;
  }
  fail("--job: unknown run '", name, "'; valid: ", valid);
}

std::vector<std::string> StudyPlan::corpora() const {
  std::vector<std::string> out;
  for (const RunSpec& r : runs)
    if (std::find(out.begin(), out.end(), r.corpus) == out.end()) out.push_back(r.corpus);
  return out;
}

std::vector<uint64_t> first_seeds(int64_t n) {
  std::vector<uint64_t> seeds;
  for (int64_t s = 1; s <= n; ++s) seeds.push_back(static_cast<uint64_t>(s));
  return seeds;
}

int64_t last20_step(int64_t steps) {
  return steps * 4 / 5;
}

std::string main_run_name(const std::string& pe, uint64_t seed) {
  return pe + "_s" + std::to_string(seed);
}
std::string theta_run_name(double theta, uint64_t seed) {
  return main_run_name("rope_theta" + theta_label(theta), seed);
}
std::string screen_run_name(const std::string& pe, uint64_t seed) {
  return main_run_name(pe + "_screen", seed);
}
std::string budget_run_name(const std::string& pe, int64_t divisor, uint64_t seed) {
  return main_run_name(pe + "_b" + std::to_string(divisor), seed);
}
std::string swapped_run_name(const std::string& pe, uint64_t seed) {
  return main_run_name(pe + "_" + embedding_name(swapped_embedding(study_scheme(pe).pe)), seed);
}
std::string finetune_run_name(int64_t factor, uint64_t seed) {
  return finetune_run_name("rope", ScalingKind::linear, factor, seed);
}
std::string finetune_run_name(const std::string& pe, ScalingKind scaling, int64_t factor,
                              uint64_t seed) {
  const std::string how = scaling == ScalingKind::linear ? "pi"
                          : scaling == ScalingKind::none ? "ft"
                                                         : scaling_name(scaling);
  return main_run_name(pe + "_" + how + std::to_string(factor), seed);
}
std::string t5_distance_run_name(int64_t max_distance, uint64_t seed) {
  return main_run_name("t5_dist" + std::to_string(max_distance), seed);
}
EmbeddingKind canonical_embedding(PeKind pe) {
  return pe == PeKind::learned ? EmbeddingKind::gpt2 : EmbeddingKind::scaled;
}
EmbeddingKind swapped_embedding(PeKind pe) {
  return canonical_embedding(pe) == EmbeddingKind::gpt2 ? EmbeddingKind::scaled
                                                        : EmbeddingKind::gpt2;
}
std::string mlm_run_name(const std::string& pe, uint64_t seed) {
  return "mlm_" + main_run_name(pe, seed);
}
std::string task_run_name(const std::string& task, const std::string& pe, uint64_t seed) {
  return "task_" + task + "_" + main_run_name(pe, seed);
}

const std::vector<double>& ablation_thetas() {
  static const std::vector<double> kThetas{10, 1e6};
  return kThetas;
}
const std::vector<std::string>& swapped_embedding_pes() {
  static const std::vector<std::string> kPes{"none", "learned", "sinusoidal", "rope"};
  return kPes;
}
const std::vector<std::string>& mlm_pes() {
  static const std::vector<std::string> kPes{"none", "rope"};
  return kPes;
}
const std::vector<TableScaling>& rope_scaling_table() {
  static const std::vector<TableScaling> kTable{{ScalingKind::linear},  {ScalingKind::ntk},
                                                {ScalingKind::dynamic}, {ScalingKind::yarn},
                                                {ScalingKind::llama3},  {ScalingKind::yarn, false}};
  return kTable;
}

std::string scaling_label(const EvalSpec& e) {
  if (e.scaling == ScalingKind::yarn && !e.truncate) return "yarn_untruncated";
  return scaling_name(e.scaling);
}

// "%g" gives 10, 10000 -> "10000", 1e+06; powers of ten from 1000 up read better as 1e4, 1e6.
std::string theta_label(double theta) {
  char b[32];
  std::snprintf(b, sizeof b, "%g", theta);
  for (int k = 3; k <= 12; ++k)
    if (theta == std::stod("1e" + std::to_string(k))) return "1e" + std::to_string(k);
  return b;
}

}  // namespace poslab
