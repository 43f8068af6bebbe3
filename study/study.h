// study.h — the study of `make experiments` as data: a list of run specifications built by
// small functions (one per part of the study), and the evaluations to make on them.
//
// The corpus is source code (pystdlib, the Python standard library's top-level modules), where
// reading further pays: an identifier or a call recurs within the previous 256 characters a
// fifth of the time. Same corpus, network, data order, token budget and seeds; only the
// positional scheme changes, each in its canonical form (learned with the gpt2 embedding, the
// others scaled) at its own tuned learning rate (tune.h). A scheme of the study is a positional
// encoding with its options under one name (schemes.cpp: prope is RoPE with 7 of its 16 pairs
// turning, rope_rand RoPE on random positions, ...). Every run trains with the
// warmup-stable-decay schedule (optimizer.h). The parts (plan.cpp), in the order they are made:
//   tuning_runs      each scheme's learning rate (tune.h): first, every other part needs it
//   main_runs        every main scheme at T0, every seed, at the budget B, each evaluated at
//                    every length (every val window, loss per position bucket, the
//                    sliding-window loss on the same targets, the loss with a 32-token attention
//                    window at T0) and probed (probes.h: attribution, copy at a distance, RoPE
//                    pairs); and the budget curve from the same runs: each main run's
//                    constant-phase state at 0.8 B/4 and 0.8 B/2 decayed over 0.2 B/4 and
//                    0.2 B/2 steps (cooldown branches, Hagele et al. 2024): B/4 evaluated at
//                    every length, B/2 at T0
//   scaling_evals    RoPE scaling zero-shot on the main models of rope, prope and rope_nope4
//   screened_runs    the screened schemes at B/4 (screening.h): the constant phase of a run on
//                    B's schedule and its B/4 branch; one that beats every main scheme there is
//                    promoted (promoted_runs: its constant phase continued to B, seeds added)
//   task_runs        unscramble, reverse and passkey, accuracy per scheme (tasks.h)
//   ablation_runs    the seed text's break experiments and the ablations, at B/4: no mask and
//                    no PE (a masked LM, NoPE against RoPE, with a shuffle check of NoPE's
//                    permutation equivariance); rope theta 10 and 1e6; none, learned,
//                    sinusoidal and rope under the other embedding convention; t5 with
//                    max_distance = T0
//   finetune_runs    fine-tunes at 4 T0: RoPE with linear interpolation (Chen et al.) and with
//                    YaRN, and ALiBi trained on at 4 T0 (the control)
// Main runs kept from before (runs made earlier, archive.h) come after the tasks when a new
// measurement needs their model again; the main runs of a scheme whose learning rate changed
// (tune.h) come last. A run whose options wait on results not there yet (a learning rate not
// chosen) is in the plan but not made until they are (RunSpec::waits); the runs a pending
// decision may add (a promotion, a new learning rate) are counted apart (StudyPlan::contingent).
// A run lives in <out>/runs/<name>; everything a run produces (model, log, evaluations cached
// as JSON, probes, masked-LM and task scores as CSV, its stage times) stays in its folder, so
// runs can be made in any order, in parallel, on other machines (runner.h, schedule.h). A run
// that starts from another's state or model (a branch, the fine-tune) is made in the same job
// as that run, right after it. A finished run writes done.json; its small files (not the
// models) can be kept elsewhere (the committed docs/results/runs) and brought back into a
// results folder, where they count as done (archive.h).
// collect_results then writes the study's tables (tables.h), and the report reads them.
#pragma once
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "posenc/posenc.h"
#include "tensor/dtype.h"
#include "train/trainer.h"

namespace poslab {

// How big a study: the real one (this machine), a small one (minutes), a toy one (seconds, for
// tests), and the real one at 8 B and 5 seeds (a GPU or many cores).
enum class StudySize { full, quick, tiny, large };
StudySize parse_study_size(const std::string& name);  // full|quick|tiny|large; error names them
const char* study_size_name(StudySize size);

// The study's settings. The defaults are the full study; study_config() changes them for the
// other sizes, and flags of `poslab experiments` change a few (--steps, --seeds, --device).
struct StudyConfig {
  std::string out;  // results folder
  StudySize size = StudySize::full;
  bool quick = false;  // not the full study (quick, tiny): the report says so
  bool force = false;
  Device device = Device::cpu;
  // --time-limit: make only the runs whose expected time fits this many minutes (0: no
  // limit, the default: the study runs to its end, over several invocations if stopped). Runs are
  // made in the plan's order, which is the order of what to keep (main runs at B and their
  // probes and branches, the fine-tune, the tasks, then the ablations); the runs whose
  // expected time no longer fits are left for a later invocation (which reuses what is done),
  // and the report lists what is missing.
  double time_limit_min = 0;
  // --gpus G with --jobs N: child run k of the N at once on GPU k % G (CUDA_VISIBLE_DEVICES),
  // so N = G puts one run on each GPU of a machine. 0: the children see every GPU.
  int64_t gpus = 0;

  // ---- The budget of the full study, in one place. B, the main runs' budget, is 8x v3's: on
  // source code a model gains from context only after many more tokens than on fortunes (the
  // budget curve, B/4, B/2, B, shows whether B is enough; the report shows it, not this
  // comment). The study takes hours on 2 cores and accumulates across invocations.
  // --------------------------------------------------------------------------------
  int64_t d = 128, layers = 4, heads = 4;  // the network
  int64_t ctx = 256;                       // T0, the training length
  int64_t batch = 16;
  double lr = 4e-3;  // every scheme's learning rate when no tuning was made (quick, tiny)
  std::map<std::string, double> lr_by_pe;  // the tuning's choice per scheme (tune.h)
  int64_t steps = 7200;                    // B = steps x batch x T0: each main run
  double decay_share = 0.2;                // wsd: the last 20% of a run's steps decay to 0.1 x peak
  int64_t task_steps = 800;                // each task run
  int64_t main_seeds = 3, ablation_seeds = 2, task_seeds = 3;
  // NoPE's reverse and passkey seeds: it learned neither task in distribution, so it keeps the
  // runs it has rather than a third seed (SPEC 7 v5 part 6).
  int64_t none_task_seeds = 2;
  // The schemes (schemes.cpp), in the study's order. Main: every part, main_seeds seeds.
  // Screened: the constant phase and B/4 branch of screen_seeds seeds (screening.h), promoted
  // to main when they beat every main scheme there. Scaled: the main schemes whose models take
  // the zero-shot RoPE scaling table.
  std::vector<std::string> main_pes{"none",  "learned",   "sinusoidal", "rope",
                                    "alibi", "t5",        "kerple",     "fire",
                                    "prope", "rope_rand", "rope_nope4"};
  std::vector<std::string> screened_pes{"xpos", "learned_rand", "prope25"};
  int64_t screen_seeds = 2;
  std::vector<std::string> scaled_pes{"rope", "prope", "rope_nope4"};
  // The budget curve: each main run branched at these divisors of B (cooldown branches); the
  // ablations train at B / ablation_divisor with the same schedule, read against that branch.
  std::vector<int64_t> budget_divisors{4, 2};
  int64_t ablation_divisor = 4;
  std::vector<int64_t> lens{256, 512, 1024, 2048, 4096};  // evaluation lengths, T0 first
  int64_t eval_windows = 0;                               // per length; 0: every val window
  int64_t buckets = 64;        // position buckets per evaluation (at 4096: 64 wide, inside T0: 4)
  int64_t attention_len = 32;  // attention.csv: the first attention_len tokens of val
  int64_t attention_windows = 4;  // attention_distance.csv: val windows per length (T0, 4 T0)
  // Context use inside T0: the loss at T0 with attention limited to the last context_window
  // tokens (loss_window32 in extrapolation.csv), against the plain loss.
  int64_t context_window = 32;
  // The probes of the main runs (probes.h): windows of the longest length the attribution and
  // the RoPE pairs use (the same text for every intervention), copy examples per distance.
  int64_t probe_windows = 16;
  int64_t copy_examples = 200;
  // The fine-tunes at finetune_factor T0 (plan.cpp: finetune_kinds): main runs of the first
  // finetune_seeds seeds go on at that length for finetune_share of B's tokens, at
  // finetune_lr_ratio of the learning rate.
  int64_t finetune_seeds = 3, finetune_factor = 4;
  double finetune_share = 0.05, finetune_lr_ratio = 0.1;
  // ------------------------------------------------------------------------------------------

  // The learning rate of a scheme: the tuning's choice, else `lr`. kept_lr_for: the rate its
  // runs kept from before were made with (its choice on the grid without the largest rate):
  // the break experiments, ablations and the runs of a scheme whose rate is not settled keep it.
  double lr_for(const std::string& pe) const {
    auto it = lr_by_pe.find(pe);
    return it == lr_by_pe.end() ? lr : it->second;
  }
  double kept_lr_for(const std::string& pe) const {
    auto it = kept_lr_by_pe.find(pe);
    return it == kept_lr_by_pe.end() ? lr_for(pe) : it->second;
  }
  std::map<std::string, double> kept_lr_by_pe;
  // Schemes whose learning rate is not chosen yet (their tuning runs are not done): their runs
  // wait (RunSpec::waits); and the kept schemes whose move to a larger rate is undecided.
  std::vector<std::string> lr_pending, lr_undecided;

  // The tuning (tune.h): short runs of each scheme at each learning rate x batch size, B /
  // tune_divisor training tokens each with the study's schedule, scored by the loss at T0
  // over every val window (tuning.csv); each scheme gets the learning rate of its lowest loss.
  // The kept schemes were tuned on the grid without its largest rate; one whose choice sat at
  // that grid's edge is tried at the largest rate on tune_edge_seeds seeds, its choice on the
  // same seeds beside it, and moves only where the larger rate wins on every one (tune.h).
  std::vector<std::string> kept_pes{"none", "learned", "sinusoidal", "rope", "alibi", "t5"};
  std::vector<double> tune_lrs{2e-3, 4e-3, 8e-3, 1.6e-2};
  std::vector<int64_t> tune_batches{16};
  int64_t tune_divisor = 16, tune_edge_seeds = 2;
  bool tune_first = true;  // the plan starts with the tuning (the toy study: only with --tune)

  // The expected time (eta.h) when nothing was measured: training tokens per second of the
  // machine, an assumption printed as one (about what 2 cores make with one run per core;
  // --device cuda: 100,000).
  double assumed_tokens_per_s = 40000;

  // Where finished runs' small files are kept and brought back from (archive.h): the
  // committed docs/results/runs for the full study; empty for the other sizes.
  std::string archive;

  // The prepared corpus `name` (pystdlib, task_*), and a run's folder.
  std::string corpus_dir(const std::string& name) const { return out + "/data/" + name; }
  std::string data() const { return corpus_dir(kStudyCorpus); }
  std::string run_dir(const std::string& run) const { return out + "/runs/" + run; }
  static constexpr const char* kStudyCorpus = "pystdlib";
};

// A synthetic task (tasks.h): its corpus, training window and test grid.
struct TaskSpec {
  std::string name;       // unscramble | reverse | passkey
  int64_t train_len = 0;  // the training window T: examples of at most T characters
  int64_t steps = 0;      // training steps of each of its runs
  int64_t train_examples = 0, val_examples = 0;  // the corpus, one example per window
  std::vector<int64_t> test_lens;                // example lengths tested (characters)
  std::vector<double> depths;                    // passkey: every depth at every length
  int64_t test_examples = 0;                     // n fresh examples per cell
  std::string data;                              // the prepared task corpus
};

// One model to train and what to measure on it besides the evaluations of StudyPlan::evals.
struct RunSpec {
  std::string name;        // runs/<name>
  std::string scheme;      // the study's scheme (schemes.cpp): the tables' pe column
  std::string corpus;      // the corpus trained on: pystdlib, task_<task>
  TrainOptions train;      // the trainer's options (out = the run folder)
  bool mlm_check = false;  // masked LM: loss on fixed masks + the shuffle check (mlm.csv)
  bool t0_only = false;    // evaluated at T0 only (the budget curve's B/2 branches, tuning)
  bool tuning = false;     // a tuning run (tune.h): in tuning.csv and timing.csv only
  // A run whose state (a cooldown branch: train.branch_from) or model (a fine-tune:
  // train.init_from) this one starts from: made in that run's job, right after it.
  std::string after;
  int64_t start_step = 0;  // a branch: the step its state comes from (trains the steps after it)
  // A main run: the probes that explain its failures past T0 (probes.h): attribution.csv,
  // copy.csv, and for RoPE rope_pairs.csv.
  bool probes = false;
  std::optional<TaskSpec> task;  // task accuracy at every test length (tasks.csv)
  // Non-empty: the run's options wait on results not there yet (say which: "the tuning of
  // kerple"); it is not made until they are, and a later plan gives its options.
  std::string waits;
};

// The val loss of a run at every length of StudyConfig::lens, with one RoPE scaling.
struct EvalSpec {
  std::string run, pe;  // pe: the run's scheme
  uint64_t seed = 0;
  ScalingKind scaling = ScalingKind::none;
  double factor = 0;     // the scaling's s; 0: max(1, L / T0) (a fine-tuned run: its own s)
  bool truncate = true;  // yarn: the ramp's ends rounded to whole pairs (false: kept real)
};
// The evaluation's scaling as extrapolation.csv's rope_scaling and the cached file name give
// it: scaling_name, and "yarn_untruncated" for yarn with truncate = false.
std::string scaling_label(const EvalSpec& e);
// A scaling of the study's table (scaling_evals): its kind and whether yarn truncates.
struct TableScaling {
  ScalingKind kind;
  bool truncate = true;
};

struct StudyPlan {
  std::vector<TaskSpec> tasks;        // the task corpora to prepare
  std::vector<RunSpec> runs;          // in the order they are made (study.h)
  std::vector<EvalSpec> evals;        // in the order of extrapolation.csv
  std::vector<std::string> pes;       // the schemes of the main runs, in the study's order
  std::vector<std::string> screened;  // the screened schemes not (or not yet) promoted
  // What pending decisions may add, counted by the expected time but not made: the runs of a
  // promotion or of a new learning rate not decided yet, and one line per decision.
  std::vector<RunSpec> contingent;
  std::vector<EvalSpec> contingent_evals;
  std::vector<std::string> undecided;

  const RunSpec& run(const std::string& name) const;  // throws naming valid runs
  std::vector<std::string> corpora() const;  // every corpus a run trains on, first use first
};

StudyConfig study_config(StudySize size);  // the settings of each size
// The whole study, in the order its runs are made (see the top of this file). Reads the
// results of c.out where a part depends on them (the tuning's choices are c.lr_by_pe, set by
// the caller from tune.h; a promotion reads the B/4 branches, screening.h).
StudyPlan study_plan(const StudyConfig& c);

// A scheme of the study (schemes.cpp): its positional encoding and options under one name.
// Random positions are drawn up to random_factor times the training length.
struct StudyScheme {
  std::string name;
  PeKind pe = PeKind::none;
  double rope_proportion = 1;  // --rope-proportion
  int64_t nope_every = 0;      // --nope-every
  int64_t random_factor = 0;   // --random-positions = random_factor x T (0: off)
};
const StudyScheme& study_scheme(const std::string& name);  // throws naming the valid ones
// Sets the scheme's encoding and options on a model whose block_size is set: random
// positions up to random_factor x block_size, a learned table that holds them.
void apply_scheme(const StudyScheme& s, GPTConfig& m);
// How the study reads a model, as `poslab eval` does by default: one trained on random positions
// reads a draw per window from [0, Lmax) (seed 0; SPEC 7 v5 part 9), any other its contiguous
// positions. No RoPE scaling, pair surgery or position offset goes with a draw.
Interventions study_positions(const GPTConfig& m);
// The options every run of the study shares (plan.cpp): the network, the token budget B, the
// scheme in its canonical form with its learning rate, the wsd schedule with the main runs'
// warmup; `corpus` is a folder under <out>/data.
TrainOptions base_options(const StudyConfig& c, const std::string& corpus, const std::string& pe,
                          uint64_t seed);
// The same options with another step count (a branch, an ablation at B/4, a tuning run).
TrainOptions with_steps(TrainOptions o, int64_t steps);
// A run of the plan: its name, scheme (o's, unless given), corpus and options (out = its folder).
RunSpec run_spec(const StudyConfig& c, const std::string& name, const std::string& corpus,
                 const std::string& scheme, TrainOptions o);
// The step count of B / divisor, and the step where its decay starts: a branch starts there.
int64_t budget_steps(const StudyConfig& c, int64_t divisor);
int64_t branch_step(const StudyConfig& c, int64_t divisor);
// The task part (plan_tasks.cpp): the task corpora and every scheme of `pes` x task x seed.
void task_runs(const StudyConfig& c, StudyPlan& p, const std::vector<std::string>& pes);

// Seeds 1..n: every part of the study uses the first seeds, so seed s of two parts is the same
// initialisation and data order.
std::vector<uint64_t> first_seeds(int64_t n);
// The step whose model the runner keeps for last20_gain: 80% of the steps (0 for steps < 2).
int64_t last20_step(int64_t steps);

// ---- The names of the study's runs: the plan gives them, collect and the report find runs
// by them. Seeds are 1-based. ----------------------------------------------------------------
std::string main_run_name(const std::string& pe, uint64_t seed);  // rope_s1
std::string theta_run_name(double theta, uint64_t seed);          // rope_theta10_s1, ..1e6_s1
// A main run's cooldown branch at B / divisor: rope_b4_s1.
std::string budget_run_name(const std::string& pe, int64_t divisor, uint64_t seed);
// A screened scheme's constant phase, paused where its B/4 branch starts: xpos_screen_s1.
std::string screen_run_name(const std::string& pe, uint64_t seed);
std::string swapped_run_name(const std::string& pe,
                             uint64_t seed);  // rope_gpt2_s1, learned_scaled_s1
std::string t5_distance_run_name(int64_t max_distance, uint64_t seed);  // t5_dist256_s1
std::string finetune_run_name(int64_t factor, uint64_t seed);           // rope_pi4_s1
// The fine-tunes at 4 T0 (plan.cpp): rope_pi4_s1 (linear), rope_yarn4_s1, alibi_ft4_s1.
std::string finetune_run_name(const std::string& pe, ScalingKind scaling, int64_t factor,
                              uint64_t seed);
// Each scheme's canonical embedding (SPEC 7.1): learned with gpt2 (GPT-2's convention), the
// others scaled (the Transformer paper's); and the other one, for the ablation.
EmbeddingKind canonical_embedding(PeKind pe);
EmbeddingKind swapped_embedding(PeKind pe);
std::string mlm_run_name(const std::string& pe, uint64_t seed);  // mlm_none_s1
std::string task_run_name(const std::string& task, const std::string& pe,
                          uint64_t seed);  // task_passkey_rope_s1
// What the ablations vary, in the order of the plan.
const std::vector<double>& ablation_thetas();             // 10, 1e6 (the main runs: 10000)
const std::vector<std::string>& swapped_embedding_pes();  // none, learned, sinusoidal, rope
const std::vector<std::string>& mlm_pes();                // none, rope
// linear, ntk, dynamic, yarn, llama3 (lff 1, hff 4), yarn with truncate = false
const std::vector<TableScaling>& rope_scaling_table();
// A theta as run names write it: 10 -> "10", 1e6 -> "1e6", 10000 -> "1e4".
std::string theta_label(double theta);

}  // namespace poslab
