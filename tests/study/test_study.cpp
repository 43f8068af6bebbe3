// The study as data (study/study.h), its tables (collect.h, timing.h) and its schedules
// (schedule.h): the plan names every run once, with the seeds and settings of each part; a
// runs.csv row comes from the files a run leaves; stage times add up; a plan run through
// `xargs -P 2` gives the same results and report as the study made in one process.
#include <catch2/catch.hpp>

#include <algorithm>
#include <array>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <map>
#include <set>
#include <sstream>

#include "data/atomic_file.h"
#include "study/archive.h"
#include "study/collect.h"
#include "study/eta.h"
#include "study/runner.h"
#include "study/schedule.h"
#include "study/screening.h"
#include "study/study.h"
#include "study/timing.h"
#include "study/tune.h"
#include "tests/support/temp_dir.h"
#include "train/log.h"

using namespace poslab;
using Catch::Contains;
namespace fs = std::filesystem;

namespace {

// How many runs of the plan have names starting with `prefix`.
size_t count_prefix(const StudyPlan& p, const std::string& prefix) {
  size_t n = 0;
  for (const RunSpec& r : p.runs) n += r.name.rfind(prefix, 0) == 0;
  return n;
}

// A cached evaluation of run `run` at length L (runner.h: read_eval reads it) with the loss
// `loss`, over `windows` windows, and buckets [start, end) with their loss and sliding loss.
void write_eval(const StudyConfig& c, const std::string& run, const std::string& pe, int64_t L,
                double loss, int64_t windows = 2,
                const std::vector<std::array<double, 4>>& buckets = {}) {
  std::string b;
  for (const auto& [start, end, l, sliding] : buckets)
    b += std::string(b.empty() ? "" : ",") + "{\"start\":" + std::to_string(int64_t(start)) +
         ",\"end\":" + std::to_string(int64_t(end)) + ",\"loss\":" + std::to_string(l) +
         ",\"sliding_loss\":" + std::to_string(sliding) + "}";
  const std::string path = eval_path(c, {run, pe, 1, ScalingKind::none}, L);
  fs::create_directories(fs::path(path).parent_path());
  write_file_atomic(path, "{\"loss\":" + std::to_string(loss) + ",\"len\":" + std::to_string(L) +
                              ",\"tokens\":" + std::to_string(windows * L) + ",\"windows\":" +
                              std::to_string(windows) + ",\"buckets\":[" + b + "]}\n");
}

// A tuning run's loss at T0, in the results folder `c` (or an archive's: c.out its parent).
void write_tuning_loss(const StudyConfig& c, const std::string& pe, const char* lr, int seed,
                       double loss) {
  const std::string run = std::string("tune_") + pe + "_lr" + lr + "_b4" +
                          (seed > 1 ? "_s" + std::to_string(seed) : "");
  write_eval(c, run, pe, c.ctx, loss);
}

// Every measurement the plan asks of run r, as files a made run leaves (fake numbers): its
// evaluations (every scaling), the 32-token window, its probes (copy v2's columns).
void write_outputs(const StudyConfig& c, const StudyPlan& p, const RunSpec& r) {
  for (const EvalSpec& e : p.evals)
    if (e.run == r.name)
      for (int64_t L : c.lens)
        if (evaluates_at(r, L) && !fs::exists(eval_path(c, e, L))) {
          write_eval(c, r.name, e.pe, L, 2.0, 2);
          const std::string plain = eval_path(c, {r.name, e.pe, 1, ScalingKind::none}, L);
          if (eval_path(c, e, L) != plain) fs::rename(plain, eval_path(c, e, L));
        }
  if (const std::string w = window_eval_path(c, r); !w.empty()) {
    write_eval(c, "window", r.scheme, c.ctx, 2.0, 2);
    fs::rename(eval_path(c, {"window", r.scheme, 1, ScalingKind::none}, c.ctx), w);
  }
  for (const std::string& f : probe_files(r))
    if (f == "copy.csv")
      write_rows<CopyCsvRow>(c.run_dir(r.name) + "/copy.csv", {});
    else
      write_file_atomic(c.run_dir(r.name) + "/" + f, "x\n");
}

}  // namespace

TEST_CASE("the study plan names each run once, part by part, with each part's seeds", "[study]") {
  test::TempDir d;  // no results and no archive to read: the plan of a study not begun
  StudyConfig c = study_config(StudySize::full);
  c.out = d.file("results"), c.archive.clear();
  const StudyPlan p = study_plan(c);
  std::set<std::string> names;
  for (const RunSpec& r : p.runs) {
    CHECK(names.insert(r.name).second);
    CHECK(r.train.out == c.run_dir(r.name));
    CHECK(r.train.data == c.corpus_dir(r.corpus));
    CHECK(r.train.schedule == Schedule::wsd);  // every run of the study
    // without results, only the fine-tunes wait: the promotions come first
    CHECK(r.waits == (r.train.init_from.empty() ? "" : "the screening"));
  }
  REQUIRE(p.pes == std::vector<std::string>{"none", "learned", "sinusoidal", "rope", "alibi", "t5",
                                            "kerple", "fire", "prope", "rope_rand", "rope_nope4"});
  CHECK(p.screened == std::vector<std::string>{"xpos", "learned_rand", "prope25"});
  CHECK(count_prefix(p, "kjv_") == 0);
  CHECK(count_prefix(p, "rope_theta") == 2 * 2);
  CHECK(count_prefix(p, "mlm_") == 2 * 2);
  // every task for every main scheme with 3 seeds, but NoPE's reverse and passkey (2, kept)
  CHECK(count_prefix(p, "task_unscramble_") == 11 * 3);
  CHECK(count_prefix(p, "task_reverse_") == 11 * 3 - 1);
  CHECK(count_prefix(p, "task_passkey_") == 11 * 3 - 1);
  CHECK_THROWS(p.run("task_passkey_none_s3"));
  CHECK(p.run("task_passkey_rope_s3").task->name == "passkey");
  CHECK(c.steps == 7200);  // B = 7,200 x 16 x 256 = 29.5 M tokens
  size_t main = 0, swapped = 0;
  for (const std::string& pe : p.pes)
    for (uint64_t seed : {1, 2, 3}) {
      const RunSpec& r = p.run(main_run_name(pe, seed));  // throws if missing
      CHECK(r.corpus == "pystdlib");
      CHECK(r.scheme == pe);
      // each scheme in its canonical form, at its own learning rate
      const bool learned = r.train.model.pe.kind == PeKind::learned;
      CHECK(r.train.model.embedding == (learned ? EmbeddingKind::gpt2 : EmbeddingKind::scaled));
      CHECK(r.train.adam.lr == c.lr_for(pe));
      CHECK(r.train.seed == seed);
      CHECK(r.train.steps == 7200);
      CHECK(r.train.stop_after == 0);
      CHECK(r.train.warmup == 100);
      CHECK(r.train.decay_share == 0.2);
      // the states where the B/4 and B/2 branches start (0.8 B/4, 0.8 B/2), and 0.8 B
      CHECK(r.train.keep_steps == std::vector<int64_t>{1440, 2880, 5760});
      CHECK(r.train.model.pe.max_len == (learned ? 4096 : 0));
      CHECK(r.probes);
      CHECK(!r.t0_only);
      // its branches: the same options but the steps, starting from its kept state
      for (int64_t divisor : {4, 2}) {
        const RunSpec& b = p.run(budget_run_name(pe, divisor, seed));
        CHECK(b.after == r.name);
        CHECK(b.train.steps == 7200 / divisor);
        CHECK(b.start_step == 7200 / divisor * 4 / 5);
        CHECK(b.train.branch_from == kept_state_path(r.train.out, b.start_step));
        CHECK(lr_schedule(b.train).decay_start() == b.start_step);
        CHECK(b.train.warmup == r.train.warmup);
        CHECK(b.train.adam.lr == r.train.adam.lr);
        CHECK(b.t0_only == (divisor == 2));  // B/4 at every length: the ablations' reference
        CHECK(!b.probes);
      }
      ++main;
    }
  CHECK(main == 33);
  // the new schemes: the encodings of v5 and RoPE with one option each
  const PosencConfig prope = p.run("prope_s1").train.model.pe;
  CHECK((prope.kind == PeKind::rope && prope.rope_proportion == 7.0 / 16));
  const PosencConfig rand = p.run("rope_rand_s2").train.model.pe;
  CHECK((rand.kind == PeKind::rope && rand.random_positions == 4096));
  CHECK(p.run("rope_nope4_s3").train.model.pe.nope_every == 4);
  CHECK(p.run("kerple_s1").train.model.pe.kind == PeKind::kerple);
  CHECK(p.run("fire_s1").train.model.pe.kind == PeKind::fire);
  // a random-position task run draws up to 16 times its window
  const RunSpec& rand_task = p.run("task_passkey_rope_rand_s1");
  CHECK(rand_task.train.model.pe.random_positions == 16 * rand_task.train.model.block_size);
  // the screened schemes: the constant phase of a run on B's schedule, paused where its B/4
  // branch starts, and that branch, 2 seeds
  for (const char* pe : {"xpos", "learned_rand", "prope25"})
    for (uint64_t seed : {1, 2}) {
      const RunSpec& r = p.run(screen_run_name(pe, seed));
      CHECK(r.name == std::string(pe) + "_screen_s" + std::to_string(seed));
      CHECK(r.train.steps == 7200);
      CHECK(r.train.stop_after == 1440);
      CHECK(r.train.keep_steps == std::vector<int64_t>{1440});
      CHECK(!r.probes);
      const RunSpec& b = p.run(budget_run_name(pe, 4, seed));
      CHECK(b.after == r.name);
      CHECK(b.train.branch_from == kept_state_path(r.train.out, 1440));
      CHECK(b.train.steps == 1800);
      CHECK(!b.t0_only);
      CHECK_THROWS(p.run(budget_run_name(pe, 2, seed)));
      CHECK_THROWS(p.run(main_run_name(pe, seed)));  // a main run only once promoted
    }
  const PosencConfig lr = p.run("learned_rand_screen_s1").train.model.pe;
  CHECK((lr.kind == PeKind::learned && lr.max_len == 4096 && lr.random_positions == 4096));
  CHECK(p.run("prope25_screen_s2").train.model.pe.rope_proportion == 0.25);
  CHECK(p.run("xpos_screen_s1").train.model.pe.kind == PeKind::xpos);
  // promoting them would add their main runs (seed 3 too), branches and tasks
  CHECK(p.undecided.size() == 3);
  CHECK(p.contingent.size() == 3 * (3 * 3 + 3 * 3));  // (its screened runs are made already)
  // the break experiments and the ablations: 2 seeds at B/4 with the main runs' schedule
  for (uint64_t seed : {1, 2}) {
    for (const char* pe : {"none", "learned", "sinusoidal", "rope"}) {
      const RunSpec& r = p.run(swapped_run_name(pe, seed));
      CHECK(r.train.model.embedding ==
            (std::string(pe) == "learned" ? EmbeddingKind::scaled : EmbeddingKind::gpt2));
      CHECK(r.train.steps == 1800);
      CHECK(r.train.warmup == 100);
      ++swapped;
    }
    for (const char* run :
         {"rope_theta10_s", "rope_theta1e6_s", "mlm_none_s", "mlm_rope_s", "t5_dist256_s"})
      CHECK(p.run(run + std::to_string(seed)).train.steps == 1800);
  }
  CHECK(swapped == 8);
  CHECK(p.run("t5_dist256_s2").train.model.pe.t5_max_distance == 256);
  // the fine-tunes at 4 T0, 3 seeds each: linear and yarn on RoPE, ALiBi without a scaling
  for (uint64_t seed : {1, 2, 3}) {
    const RunSpec& pi = p.run(finetune_run_name(4, seed));
    CHECK(pi.name == "rope_pi4_s" + std::to_string(seed));
    CHECK(pi.train.model.block_size == 4 * 256);
    CHECK(pi.train.init_from == c.run_dir(main_run_name("rope", seed)) + "/model.safetensors");
    CHECK(pi.after == main_run_name("rope", seed));
    CHECK(pi.train.rope_scaling.kind == ScalingKind::linear);
    CHECK(pi.train.rope_scaling.factor == 4);
    // tokens: 5% of B
    CHECK(pi.train.steps * pi.train.batch * 1024 == c.steps * c.batch * 256 / 20);
    const RunSpec& yarn = p.run("rope_yarn4_s" + std::to_string(seed));
    CHECK((yarn.train.rope_scaling.kind == ScalingKind::yarn &&
           yarn.train.rope_scaling.factor == 4 && yarn.train.rope_scaling.train_len == 256));
    const RunSpec& alibi = p.run("alibi_ft4_s" + std::to_string(seed));
    CHECK(alibi.train.rope_scaling.kind == ScalingKind::none);
    CHECK(alibi.after == main_run_name("alibi", seed));
    CHECK(alibi.train.model.block_size == 1024);
  }
  CHECK(count_prefix(p, "tune_") == 6 * 3 + 8 * 4);  // the kept grid, the grown one
  CHECK(p.runs.size() == 50 + 5 * 9 + 12 + 97 + 18 + 6 * 9 + 9);
  // in the order they are made: the tuning; the new main runs, each with its branches, seed by
  // seed; the screening; the tasks seed by seed; the breaks and ablations; the kept main runs
  // (made again only for what v5 measures anew); the fine-tunes
  CHECK(p.runs[0].name == "tune_none_lr0.002_b16");
  CHECK(p.runs[50].name == "kerple_s1");
  CHECK(p.runs[51].name == "kerple_b4_s1");
  CHECK(p.runs[52].name == "kerple_b2_s1");
  CHECK(p.runs[50 + 15].name == "kerple_s2");
  CHECK(p.runs[95].name == "xpos_screen_s1");
  CHECK(p.runs[96].name == "xpos_b4_s1");
  CHECK(p.runs[107].name == "task_unscramble_none_s1");
  CHECK(p.runs[204].name == "mlm_none_s1");
  CHECK(p.runs[222].name == "none_s1");
  CHECK(p.runs[276].name == "rope_pi4_s1");
  CHECK(p.runs.back().name == "alibi_ft4_s3");
  CHECK(p.run("rope_theta10_s2").train.model.pe.theta == 10);
  CHECK(p.run("rope_theta1e6_s1").train.model.pe.theta == 1e6);
  const RunSpec& mlm = p.run("mlm_none_s2");
  CHECK((mlm.train.objective == Objective::mlm && !mlm.train.model.causal && mlm.mlm_check));
  CHECK(mlm.train.keep_steps.empty());
  for (const EvalSpec& e : p.evals) CHECK(names.count(e.run) == 1);
  REQUIRE_THROWS_WITH(p.run("rope_s9"), Contains("unknown run 'rope_s9'; valid: tune_none_"));
  std::vector<std::string> corpora{"pystdlib"};
  for (const TaskSpec& t : p.tasks) corpora.push_back("task_" + t.name);
  CHECK(p.corpora() == corpora);
  // tuning: at B/16 with the same schedule, scored at T0
  for (const RunSpec& r : p.runs)
    if (r.tuning)
      CHECK((r.train.steps == 450 && r.train.warmup == 100 && r.t0_only && r.train.seed == 1));
  CHECK(p.run("tune_kerple_lr0.016_b16").train.adam.lr == 0.016);
  CHECK_THROWS(p.run("tune_rope_lr0.016_b16"));  // a kept scheme's grid lacks the new rate
}

TEST_CASE("the plan waits on the tuning: a run whose learning rate is not chosen is not made",
          "[study]") {
  test::TempDir d;
  StudyConfig c = study_config(StudySize::full);
  c.out = d.file("results"), c.archive.clear();
  c.lr_pending = {"kerple"};
  c.lr_undecided = {"t5"};
  c.lr_by_pe = {{"t5", 0.008}}, c.kept_lr_by_pe = {{"t5", 0.008}};
  const StudyPlan p = study_plan(c);
  CHECK(p.run("kerple_s1").waits == "the tuning of kerple");
  CHECK(p.run("kerple_b4_s2").waits == "the tuning of kerple");
  CHECK(p.run("t5_s1").waits == "the learning-rate check of t5");
  CHECK(p.run("task_reverse_kerple_s1").waits.empty());  // tasks train at their own rates
  CHECK(p.run("t5_dist256_s1").waits.empty());           // ablations keep their rate
  for (const RunSpec* r : pending_runs(c, p)) CHECK(r->waits.empty());
  // what a move of t5 to the grown grid's rate would train again is counted apart
  CHECK_THAT(p.undecided.back(), Contains("the learning rate 0.016 for t5 (9 runs)"));
  // a move: t5's main runs come last, at the new rate; its ablation keeps the old one
  c.lr_undecided.clear();
  c.lr_by_pe["t5"] = 0.016;
  const StudyPlan moved = study_plan(c);
  CHECK(moved.runs.back().name == "t5_b2_s3");
  CHECK(moved.run("t5_s1").train.adam.lr == 0.016);
  // the screening undecided: the fine-tunes wait for it, a moved scheme's runs do not (a
  // screening without their B/4 branches waits for them)
  CHECK(moved.run("rope_yarn4_s2").waits == "the screening");
  CHECK(moved.run("t5_b4_s1").waits.empty());
  CHECK(moved.run("alibi_ft4_s1").train.adam.lr == c.lr_for("alibi") * c.finetune_lr_ratio);
  CHECK(moved.run("t5_dist256_s1").train.adam.lr == 0.008);
}

TEST_CASE(
    "a study's jobs: a main run makes its branches and fine-tune; a run is done when its "
    "done.json says the same options",
    "[study]") {
  test::TempDir d;
  StudyConfig c = study_config(StudySize::tiny);
  c.out = d.file("study");
  const StudyPlan p = study_plan(c);
  // nothing done: the branches and the fine-tune are no jobs of their own
  std::vector<const RunSpec*> jobs = pending_runs(c, p);
  for (const RunSpec* r : jobs) CHECK(r->after.empty());
  CHECK(children(p, p.run("rope_s1")).size() == 4);   // b4, b2, the fine-tunes (linear, yarn)
  CHECK(children(p, p.run("alibi_s1")).size() == 3);  // b4, b2, trained on at 4 T0
  CHECK(children(p, p.run("none_s1")).size() == 2);
  // a done.json with the run's options makes it done; other options do not
  const RunSpec& main = p.run("none_s1");
  fs::create_directories(c.run_dir(main.name));
  write_file_atomic(c.run_dir(main.name) + "/done.json",
                    "{\"run\":\"none_s1\",\"signature\":\"pe=none steps=1\"}\n");
  CHECK_FALSE(run_done(c, p, main));
  write_file_atomic(c.run_dir(main.name) + "/done.json",
                    "{\"run\":\"none_s1\",\"signature\":\"" + run_signature(main) + "\"}\n");
  CHECK(marked_done(c, main));
  CHECK_FALSE(run_done(c, p, main));  // made, but none of its measurements is here
  write_outputs(c, p, main);
  CHECK(run_done(c, p, main));
  // its parent done, a pending branch is a job of its own
  jobs = pending_runs(c, p);
  CHECK(std::count_if(jobs.begin(), jobs.end(),
                      [](const RunSpec* r) { return r->name == "none_b4_s1"; }) == 1);
  CHECK(std::count_if(jobs.begin(), jobs.end(),
                      [](const RunSpec* r) { return r->name == "none_s1"; }) == 0);
  StudyConfig forced = c;
  forced.force = true;
  CHECK_FALSE(run_done(forced, p, main));
}

TEST_CASE("RoPE scaling is evaluated on every main seed of rope, prope and rope_nope4 only",
          "[study]") {
  for (StudySize size : {StudySize::full, StudySize::quick}) {
    const StudyConfig c = study_config(size);
    const StudyPlan p = study_plan(c);
    std::vector<std::string> scaled;
    std::map<std::string, int> unscaled;  // run -> evaluations without scaling
    for (const EvalSpec& e : p.evals) {
      const RunSpec& r = p.run(e.run);
      if (!r.train.init_from.empty()) {  // a fine-tune, evaluated with its own fixed factor
        CHECK(e.scaling == r.train.rope_scaling.kind);
        CHECK(e.factor == (e.scaling == ScalingKind::none ? 0 : 4));
        continue;
      }
      if (e.scaling != ScalingKind::none) scaled.push_back(e.run + ":" + scaling_label(e));
      if (e.scaling == ScalingKind::none) ++unscaled[e.run];
    }
    std::vector<std::string> expected;
    for (const char* pe : {"rope", "prope", "rope_nope4"})  // not rope_rand: it draws positions
      for (uint64_t seed : first_seeds(c.main_seeds))
        for (const char* s : {"linear", "ntk", "dynamic", "yarn", "llama3", "yarn_untruncated"})
          expected.push_back(main_run_name(pe, seed) + ":" + s);
    std::sort(scaled.begin(), scaled.end());
    std::sort(expected.begin(), expected.end());
    CHECK(scaled == expected);
    // every next-token run on the study corpus is evaluated once without scaling, but a
    // screened run's constant phase (its B/4 branch is)
    for (const RunSpec& r : p.runs)
      CHECK(unscaled[r.name] == (r.train.objective == Objective::lm && !r.task &&
                                         r.train.init_from.empty() && r.train.stop_after == 0
                                     ? 1
                                     : 0));
  }
}

TEST_CASE("run names, seeds and sizes", "[study]") {
  CHECK(main_run_name("t5", 3) == "t5_s3");
  CHECK(theta_run_name(10, 2) == "rope_theta10_s2");
  CHECK(theta_run_name(1e6, 1) == "rope_theta1e6_s1");
  CHECK(swapped_run_name("learned", 2) == "learned_scaled_s2");
  CHECK(swapped_run_name("rope", 1) == "rope_gpt2_s1");
  CHECK(budget_run_name("t5", 4, 1) == "t5_b4_s1");
  CHECK(finetune_run_name(4, 1) == "rope_pi4_s1");
  CHECK(finetune_run_name("rope", ScalingKind::yarn, 4, 2) == "rope_yarn4_s2");
  CHECK(finetune_run_name("alibi", ScalingKind::none, 4, 3) == "alibi_ft4_s3");
  CHECK(scaling_label({"rope_s1", "rope", 1, ScalingKind::yarn, 0, false}) == "yarn_untruncated");
  CHECK(study_scheme("rope_rand").random_factor == 16);
  REQUIRE_THROWS_WITH(study_scheme("nope"), Contains("unknown scheme 'nope'; valid: none, "));
  CHECK(mlm_run_name("rope", 1) == "mlm_rope_s1");
  CHECK(task_run_name("passkey", "rope", 2) == "task_passkey_rope_s2");
  CHECK(theta_label(10000) == "1e4");
  CHECK(theta_label(0.5) == "0.5");
  CHECK(first_seeds(3) == std::vector<uint64_t>{1, 2, 3});
  CHECK(last20_step(480) == 384);
  CHECK(last20_step(4) == 3);
  CHECK(last20_step(1) == 0);
  for (const char* s : {"full", "quick", "tiny", "large"})
    CHECK(study_size_name(parse_study_size(s)) == std::string(s));
  REQUIRE_THROWS_WITH(parse_study_size("huge"),
                      Contains("--scale: expected full|quick|tiny|large"));
  const StudyConfig full = study_config(StudySize::full), large = study_config(StudySize::large);
  CHECK(large.steps > full.steps);
  CHECK(large.main_seeds > full.main_seeds);
  CHECK(large.out == "results-large");
  CHECK((large.d == full.d && large.ctx == full.ctx && large.lens == full.lens));
}

TEST_CASE("a job's command carries the study's settings and the run's name", "[study]") {
  StudyConfig c = study_config(StudySize::tiny);
  c.out = "some dir";
  const StudyPlan p = study_plan(c);
  const std::string line = job_command_line(c, p.run("rope_s2"));
  CHECK_THAT(line, Contains(" experiments --out 'some dir' --tiny --steps 16 --seeds 2 "
                            "--device cpu --job rope_s2"));
  StudyConfig l = study_config(StudySize::large);
  CHECK_THAT(job_command_line(l, study_plan(l).run("t5_s5")),
             Contains(" --scale large --steps " + std::to_string(l.steps) +
                      " --seeds 5 --device cpu --job t5_s5"));
}

TEST_CASE("the jobs probe's throughput leaves the warm-up steps out", "[study]") {
  // A run whose first step takes 1 s and every later one 0.1 s, 1000 tokens a step: log.csv's
  // tokens/s counts from step 1 (rounded, as log.csv writes it), the steady rate is 10,000.
  auto row = [](int64_t k) {
    LogRow r;
    r.step = k;
    r.tokens_per_s = std::round(1000.0 * static_cast<double>(k) / (1.0 + 0.1 * (k - 1)));
    return r;
  };
  const std::vector<LogRow> rows = {row(10), row(20), row(30), row(40)};
  CHECK(rows.back().tokens_per_s < 8200);  // from step 1: the warm-up counted
  CHECK(steady_throughput(rows) == Approx(10000).epsilon(1e-3));
  CHECK(steady_throughput({row(40)}) == rows.back().tokens_per_s);
  CHECK(steady_throughput({}) == 0);
}

TEST_CASE("runs.csv: val_loss at T0, last20_gain = the loss at 80% of the steps minus at the end",
          "[study]") {
  test::TempDir d;
  StudyConfig c = study_config(StudySize::tiny);
  c.out = d.path();
  const StudyPlan p = study_plan(c);
  const RunSpec& r = p.run("rope_s1");
  const std::string dir = c.run_dir(r.name);
  fs::create_directories(dir);
  write_file_atomic(dir + "/log.csv",
                    log_text({{3, 1e-3, 2.9, 2.8, 1, 100, 0}, {4, 1e-3, 2.7, 2.6, 1, 100, 0}}));
  record_stage(dir, "train rope_s1", 12.5, true);
  const int64_t T0 = c.ctx, W = eval_windows(c, r, T0);
  auto eval_json = [&](double loss) {
    EvalResult e;
    e.loss = loss, e.len = T0, e.windows = W, e.tokens = W * T0;
    e.buckets = {{0, T0, loss}};
    return e.json();
  };
  write_file_atomic(eval_path(c, {r.name, "rope", 1, ScalingKind::none}, T0), eval_json(2.25));
  write_file_atomic(last20_eval_path(c, r), eval_json(2.5));
  REQUIRE(last20_eval_path(c, r) == dir + "/eval_step12_32.json");
  RunRow row = run_row(c, p, r);
  CHECK(row.run == "rope_s1");
  CHECK((row.pe == "rope" && row.seed == 1 && row.objective == "lm"));
  CHECK((row.corpus == "pystdlib" && row.embedding == "scaled"));
  CHECK(row.steps == 16);
  CHECK(row.tokens == 16 * c.batch * c.ctx);
  CHECK((row.schedule == "wsd" && row.branch_of.empty()));
  CHECK(row.train_seconds == 12.5);
  CHECK(row.val_loss == 2.25);  // the evaluation at T0, not the log's 2.6
  CHECK(row.last20_gain == Approx(0.25));
  // a masked LM: its fixed-mask loss; the gain from its log (steps 3 and 4)
  const RunSpec& m = p.run("mlm_rope_s1");
  fs::create_directories(c.run_dir(m.name));
  REQUIRE(m.train.steps == 4);  // B/4: 80% of them is step 3
  write_file_atomic(c.run_dir(m.name) + "/log.csv",
                    log_text({{3, 1e-3, 3.1, 3.0, 1, 100, 0}, {4, 1e-3, 2.9, 2.75, 1, 100, 0}}));
  write_rows<MlmRow>(c.run_dir(m.name) + "/mlm.csv", {{m.name, "rope", 1, 3.125, 0.5}});
  RunRow mr = run_row(c, p, m);
  CHECK(mr.val_loss == 3.125);
  CHECK(mr.last20_gain == Approx(0.25));
  CHECK(std::isnan(mr.train_seconds));  // no timing.csv: an empty cell
  // a run without its evaluation names the command that makes it
  fs::remove(eval_path(c, {r.name, "rope", 1, ScalingKind::none}, T0));
  REQUIRE_THROWS_WITH(run_row(c, p, r), Contains("--job rope_s1"));
}

TEST_CASE("archived runs come back as done; others and --force are left alone", "[study]") {
  test::TempDir d;
  StudyConfig c = study_config(StudySize::tiny);
  c.out = d.file("study");
  c.archive = d.file("docs/runs");
  const StudyPlan p = study_plan(c);
  const RunSpec &a = p.run("alibi_s1"), &b = p.run("t5_s2");
  for (const RunSpec* r : {&a, &b}) {
    fs::create_directories(c.archive + "/" + r->name);
    write_file_atomic(c.archive + "/" + r->name + "/eval_none_32.json", "{}\n");
  }
  write_file_atomic(c.archive + "/alibi_s1/done.json",
                    "{\"signature\":\"" + run_signature(a) + "\"}\n");
  write_file_atomic(c.archive + "/t5_s2/done.json", "{\"signature\":\"pe=t5 steps=9\"}\n");
  write_file_atomic(c.archive + "/throughput.csv", "invocation\n");
  write_file_atomic(c.archive + "/tuning.csv", "pe,lr\n");
  StudyConfig forced = c;
  forced.force = true;
  CHECK(import_archived_runs(forced, p) == 0);
  CHECK(import_archived_runs(c, p) == 1);
  CHECK(marked_done(c, a));
  CHECK(fs::exists(c.run_dir("alibi_s1") + "/eval_none_32.json"));
  CHECK_FALSE(fs::exists(c.run_dir("t5_s2")));  // made with other options: made again
  CHECK(fs::exists(c.out + "/throughput.csv"));
  CHECK(read_file(c.out + "/tuning.csv") == "pe,lr\n");
  CHECK(import_archived_runs(c, p) == 0);  // already here
}

TEST_CASE(
    "learning rates: a kept scheme at its grid's edge tries the new rate on 2 seeds and moves "
    "only where it wins on both; a new scheme takes the whole grid's best",
    "[study]") {
  test::TempDir d;
  StudyConfig c = study_config(StudySize::tiny);
  c.out = d.file("fresh/results");
  c.archive = d.file("docs/runs");  // the kept schemes' grid was made before, elsewhere
  c.tune_first = true;
  c.tune_lrs = {1e-3, 2e-3, 4e-3};  // the kept schemes' grid: 1e-3, 2e-3
  StudyConfig archived = c;
  archived.out = d.file("docs");
  write_tuning_loss(archived, "rope", "0.001", 1, 1.8);  // an inner choice: kept
  write_tuning_loss(archived, "rope", "0.002", 1, 1.9);
  write_tuning_loss(archived, "t5", "0.001", 1, 2.0);  // at the edge: checked
  write_tuning_loss(archived, "t5", "0.002", 1, 1.9);
  for (const char* lr : {"0.001", "0.002", "0.004"})
    write_tuning_loss(c, "kerple", lr, 1, lr == std::string("0.004") ? 1.5 : 1.7);
  choose_learning_rates(c);
  CHECK(c.lr_by_pe.at("rope") == 1e-3);
  CHECK(c.lr_by_pe.at("kerple") == 4e-3);  // the new rate is on a new scheme's grid
  CHECK(c.lr_by_pe.at("t5") == 2e-3);
  CHECK(c.lr_undecided == std::vector<std::string>{"t5"});
  CHECK(std::count(c.lr_pending.begin(), c.lr_pending.end(), "none") == 1);  // no grid yet
  StudyPlan p;
  tuning_runs(c, p);
  // t5's check: the new rate on seeds 1 and 2, its choice on seed 2; rope has none
  for (const char* run : {"tune_t5_lr0.004_b4", "tune_t5_lr0.004_b4_s2", "tune_t5_lr0.002_b4_s2"})
    CHECK(p.run(run).train.seed == (std::string(run).back() == '2' ? 2u : 1u));
  CHECK_THROWS(p.run("tune_rope_lr0.004_b4"));
  // the new rate wins on seed 1 only: t5 stays
  write_tuning_loss(c, "t5", "0.004", 1, 1.85);
  write_tuning_loss(c, "t5", "0.004", 2, 1.95);
  write_tuning_loss(c, "t5", "0.002", 2, 1.9);
  choose_learning_rates(c);
  CHECK(c.lr_by_pe.at("t5") == 2e-3);
  CHECK(c.lr_undecided.empty());
  // on both: it moves, and its kept runs keep the old one
  write_tuning_loss(c, "t5", "0.004", 2, 1.8);
  choose_learning_rates(c);
  CHECK(c.lr_by_pe.at("t5") == 4e-3);
  CHECK(c.kept_lr_by_pe.at("t5") == 2e-3);
  const std::vector<TuningRow> rows = tuning_rows(c);
  CHECK(std::count_if(rows.begin(), rows.end(), [](const TuningRow& t) { return t.seed == 2; }) ==
        2);
  // a run made again on a fresh clone (--job --force) trains at the chosen rate
  c.force = true;
  choose_learning_rates(c);
  CHECK(study_plan(c).run("t5_s1").train.adam.lr == 4e-3);
  CHECK(study_plan(c).run("rope_s1").train.adam.lr == 1e-3);
}

TEST_CASE(
    "screening: a scheme is promoted when it beats every main scheme at B/4 on the loss at T0 "
    "or past T0 against the sliding window; the decision is kept",
    "[study]") {
  test::TempDir d;
  StudyConfig c = study_config(StudySize::tiny);
  c.out = d.file("results");
  c.main_pes = {"rope", "alibi"};
  c.screened_pes = {"xpos", "prope25"};
  REQUIRE((c.screen_seeds == 1 && c.ctx == 32 && c.lens.back() == 128));
  const Screening none = screening_status(c);
  CHECK(none.undecided == c.screened_pes);
  // B/4 branches: the loss at T0, and positions [0, 32) and [32, 128) of the windows of 128
  auto b4 = [&](const std::string& pe, double at_t0, double past, double sliding) {
    write_eval(c, budget_run_name(pe, 4, 1), pe, 32, at_t0);
    write_eval(c, budget_run_name(pe, 4, 1), pe, 128, past, 2,
               {{0, 32, at_t0, at_t0}, {32, 128, past, sliding}});
  };
  b4("rope", 2.0, 2.1, 2.0);    // past T0: +0.1
  b4("alibi", 2.1, 2.0, 2.05);  // -0.05
  b4("xpos", 1.95, 2.2, 2.1);   // the lowest loss at T0: promoted
  CHECK(screening_status(c).undecided == std::vector<std::string>{"prope25"});  // no branch yet
  b4("prope25", 2.05, 2.0, 2.01);  // -0.01: not below ALiBi's -0.05
  const Screening s = screening_status(c);
  CHECK(s.promoted == std::vector<std::string>{"xpos"});
  CHECK(s.not_promoted == std::vector<std::string>{"prope25"});
  const std::vector<ScreeningRow> rows = read_rows<ScreeningRow>(c.out + "/screening.csv");
  REQUIRE(rows.size() == 2);
  CHECK((rows[0].pe == "xpos" && rows[0].best_loss_t0_pe == "rope" && rows[0].promoted == "yes"));
  CHECK(rows[1].best_vs_sliding == Approx(-0.05));
  CHECK(rows[1].vs_sliding == Approx(-0.01));
  // the promoted scheme is a main scheme: its run goes on to B, with every seed and its tasks
  const StudyPlan p = study_plan(c);
  CHECK(p.pes.back() == "xpos");
  CHECK(p.screened == std::vector<std::string>{"prope25"});
  const RunSpec& xpos = p.run("xpos_s1");
  CHECK((xpos.train.stop_after == 0 && xpos.probes));
  // seed 1 continues its screened run from the state it kept where the B/4 branch starts
  const RunSpec& screen = p.run("xpos_screen_s1");
  CHECK(xpos.after == screen.name);
  CHECK(xpos.start_step == screen.train.stop_after);
  CHECK(xpos.train.branch_from == kept_state_path(screen.train.out, xpos.start_step));
  CHECK(p.run("xpos_b4_s1").after == "xpos_s1");  // the same branch as when it was screened
  CHECK(p.run("xpos_s2").train.steps == c.steps);
  CHECK(p.run("xpos_b2_s1").after == "xpos_s1");
  CHECK(p.run("task_passkey_xpos_s1").task);
  CHECK(p.run("prope25_screen_s1").train.stop_after > 0);
  CHECK(p.undecided.empty());
  // the decision stands when the branches it read change (a main scheme trained again)
  b4("xpos", 2.5, 2.5, 2.0);
  CHECK(screening_status(c).promoted == std::vector<std::string>{"xpos"});
}

TEST_CASE(
    "a run made earlier counts as made; what the plan now asks of it (copy v2, a new scaling) "
    "is made with its model, and only that is planned",
    "[study]") {
  test::TempDir d;
  StudyConfig c = study_config(StudySize::tiny);
  c.out = d.file("results");
  const StudyPlan p = study_plan(c);
  const RunSpec& r = p.run("rope_s1");
  fs::create_directories(c.run_dir(r.name));
  write_file_atomic(c.run_dir(r.name) + "/done.json",
                    "{\"signature\":\"" + run_signature(r) + "\"}\n");
  CHECK(marked_done(c, r));
  for (const EvalSpec& e : p.evals)
    if (e.run == r.name)
      for (int64_t L : c.lens) write_eval(c, r.name, "rope", L, 2.0, 2);
  // every scaling's file: eval_path names them apart
  for (const EvalSpec& e : p.evals)
    if (e.run == r.name)
      for (int64_t L : c.lens)
        if (!fs::exists(eval_path(c, e, L)))
          fs::copy_file(eval_path(c, {r.name, "rope", 1, ScalingKind::none}, L),
                        eval_path(c, e, L));
  fs::copy_file(eval_path(c, {r.name, "rope", 1, ScalingKind::none}, c.ctx),
                window_eval_path(c, r));
  for (const char* f : {"attribution.csv", "rope_pairs.csv"})
    write_file_atomic(c.run_dir(r.name) + "/" + f, "x\n");
  // v4's copy.csv: no gain and share columns
  write_file_atomic(c.run_dir(r.name) + "/copy.csv",
                    "run,pe,seed,distance,n,loss_planted,loss_control\n");
  CHECK_FALSE(run_done(c, p, r));
  // its model is not here: planned, the model and copy v2; nothing else
  const double with_model = planned_tokens(c, p, r);
  write_file_atomic(c.run_dir(r.name) + "/model.safetensors", "");
  const double probe_only = planned_tokens(c, p, r);
  CHECK(probe_only > 0);
  CHECK(with_model > probe_only);
  write_rows<CopyCsvRow>(c.run_dir(r.name) + "/copy.csv", {});
  CHECK(run_done(c, p, r));
  // done: not pending; its whole work counts in the study's total (evaluations included)
  const std::vector<const RunSpec*> pending = pending_runs(c, p);
  CHECK(std::find(pending.begin(), pending.end(), &r) == pending.end());
  CHECK(planned_tokens(c, p, r) > with_model);
  // a scaling the table added since: not done again
  fs::remove(eval_path(c, {r.name, "rope", 1, ScalingKind::llama3}, 64));
  CHECK_FALSE(run_done(c, p, r));
}

TEST_CASE("stage times add up across resumed stages and are replaced when redone", "[study]") {
  test::TempDir d;
  record_stage(d.path(), "train x", 2, false);
  record_stage(d.path(), "train x", 3, false);  // resumed: adds
  record_stage(d.path(), "eval x", 1.5, false);
  CHECK(stage_seconds(d.path(), "train x") == 5);
  record_stage(d.path(), "eval x", 4, true);  // redone from scratch: replaces
  std::vector<TimingRow> rows = read_stages(d.path());
  REQUIRE(rows.size() == 2);
  CHECK((rows[0].stage == "train x" && rows[0].seconds == 5));
  CHECK((rows[1].stage == "eval x" && rows[1].seconds == 4));
  CHECK(std::isnan(stage_seconds(d.path(), "tasks x")));
  CHECK(read_stages(d.file("none")).empty());
}

namespace {

// Runs `cmd` on one thread per process (so both schedules compute alike), stderr silenced.
int sh(const std::string& cmd) {
  return std::system(("OMP_NUM_THREADS=1 " + cmd + " 2> /dev/null").c_str());
}

// REPORT.md without what depends on the clock: lines that name a date, a time or seconds,
// and the last two columns (tokens/s, train time) of the training table.
std::string without_timing(const std::string& md) {
  // the sections that print seconds (the headline's ms/step, timing.csv, every run) are left out
  // whole; the CSVs they come from are compared without them
  std::istringstream in(md);
  std::string out, line;
  bool timed = false;
  while (std::getline(in, line)) {
    if (line.rfind("## ", 0) == 0)
      timed = line == "## Headline" || line.rfind("## Cost", 0) == 0 ||  // ms/step, seconds
              line == "## Every trained model";
    if (timed || line.rfind("| date", 0) == 0 || line.rfind("| wall time", 0) == 0 ||
        line.rfind("| invocations", 0) == 0 || line.rfind("| training time", 0) == 0 ||
        line.rfind("| compute time", 0) == 0)
      continue;
    out += line + "\n";
  }
  return out;
}

// The tiny study made in one process (--jobs 1, one thread), once per test process: the end-to-end
// test reads it, and the test of the other ways to make it (--jobs 2, a plan through xargs)
// compares theirs with it. A tiny study is most of this program's time; made once, not twice.
struct TinyStudy {
  test::TempDir dir;
  std::string out = dir.file("one"), stderr_text;
  double wall = 0;  // seconds the process took
  TinyStudy() {
    const auto t0 = std::chrono::steady_clock::now();
    const std::string cmd = "OMP_NUM_THREADS=1 " + std::string(POSLAB_BIN) +
                            " experiments --tiny --jobs 1 --out " + out + " > /dev/null 2> " +
                            dir.file("stderr.txt");
    if (std::system(cmd.c_str()) != 0) throw std::runtime_error("failed: " + cmd);
    wall = seconds_since(t0);
    stderr_text = read_file(dir.file("stderr.txt"));
  }
};
const TinyStudy& tiny_study_in_one_process() {
  static const TinyStudy made;  // removed at exit with its folder
  return made;
}

}  // namespace

TEST_CASE("the tiny study end to end: timing.csv holds every stage, its sum within the wall time",
          "[study][slow]") {
  const TinyStudy& one = tiny_study_in_one_process();
  const std::string& out = one.out;
  const double wall = one.wall;
  CHECK_THAT(one.stderr_text, Contains("expected time: "));
  std::map<std::string, double> stages;
  double sum = 0;
  for (const TimingRow& t : read_rows<TimingRow>(out + "/timing.csv")) {
    CHECK(stages.count(t.stage) == 0);
    stages[t.stage] = t.seconds;
    CHECK(t.seconds >= 0);
    sum += t.seconds;
  }
  for (const char* s :
       {"prepare pystdlib", "ngram pystdlib", "train rope_s1", "eval rope_s1", "probe rope_s1",
        "train rope_b4_s1", "eval rope_b4_s1", "train rope_pi4_s1", "eval mlm_none_s1", "report"})
    CHECK(stages.count(s) == 1);
  CHECK(stages.count("tasks task_passkey_alibi_s1") == 1);
  CHECK(sum > 0);
  CHECK(sum <= wall);
  // runs.csv: every run once, val_loss everywhere, last20_gain for the next-token runs
  const StudyPlan p = study_plan(study_config(StudySize::tiny));
  std::vector<RunRow> runs = read_rows<RunRow>(out + "/runs.csv");
  REQUIRE(runs.size() == p.runs.size());
  for (const RunRow& r : runs) {
    CHECK(std::isfinite(r.val_loss));
    CHECK(std::isfinite(r.train_seconds));
    // (a run of one step keeps no earlier model; a fine-tune's log has too few rows; a screened
    // run's constant phase pauses before 80% of its steps)
    const RunSpec& spec = p.run(r.run);
    if (r.objective == "lm" && r.corpus.rfind("task_", 0) != 0 && r.steps >= 2 &&
        spec.train.init_from.empty() && spec.train.stop_after == 0)
      CHECK(std::isfinite(r.last20_gain));
  }
  // the branches: runs.csv names the run each comes from (a screened scheme's B/4 branch: its
  // screened run)
  for (const RunRow& r : runs) {
    CHECK(r.schedule == "wsd");
    const std::string from = r.run.substr(0, r.run.find("_b")) + r.run.substr(r.run.rfind("_s"));
    const bool branch =
        r.run.find("_b4_") != std::string::npos || r.run.find("_b2_") != std::string::npos;
    CHECK(r.branch_of == (!branch                      ? ""
                          : p.run(r.run).after == from ? from
                                                       : screen_run_name(r.pe, r.seed)));
  }
  // extrapolation.csv: rope_scaling empty for the schemes without one, "none" for plain RoPE;
  // the 32-token window's loss at T0 on the main runs only
  for (const EvalRow& e : read_rows<EvalRow>(out + "/extrapolation.csv")) {
    CHECK((study_scheme(e.pe).pe == PeKind::rope) == !e.rope_scaling.empty());
    const bool main_plain = e.run == main_run_name(e.pe, e.seed) && e.len == 32 &&
                            (e.rope_scaling.empty() || e.rope_scaling == "none");
    CHECK(std::isfinite(e.loss_window32) == main_plain);
  }
  CHECK(read_rows<CorpusRow>(out + "/corpus.csv").at(0).corpus == "pystdlib");
  // attention.csv: every layer and head of each scheme's seed-1 model, keys up to the query
  std::vector<AttentionRow> att = read_rows<AttentionRow>(out + "/attention.csv");
  const StudyConfig tiny = study_config(StudySize::tiny);
  CHECK(att.size() == p.pes.size() * tiny.layers * tiny.heads * tiny.attention_len *
                          (tiny.attention_len + 1) / 2);
  // attention_distance.csv: every layer and head of the same models at T0 and 4 T0, each
  // distance between 0 (the query's own key) and L - 1 (the first key)
  std::vector<AttentionDistanceRow> dist =
      read_rows<AttentionDistanceRow>(out + "/attention_distance.csv");
  CHECK(dist.size() == p.pes.size() * 2 * tiny.layers * tiny.heads);
  for (const AttentionDistanceRow& r : dist) {
    INFO(r.run << " L=" << r.len << " layer " << r.layer << " head " << r.head);
    CHECK((r.len == tiny.ctx || r.len == 4 * tiny.ctx));
    CHECK(r.windows >= 1);
    CHECK(r.uniform == Approx((r.len - 1) / 4.0));
    CHECK(r.distance >= 0);
    CHECK(r.distance <= r.len - 1);
  }
}

TEST_CASE("mean attention distance: the query's own key 0, the first key (T-1)/2, uniform (T-1)/4",
          "[study]") {
  const int64_t T = 5;
  std::vector<double> p(3 * T * T, 0.0);  // heads: self, first key, uniform over j <= i
  for (int64_t i = 0; i < T; ++i) {
    p[(0 * T + i) * T + i] = 1;
    p[(1 * T + i) * T + 0] = 1;
    for (int64_t j = 0; j <= i; ++j) p[(2 * T + i) * T + j] = 1.0 / double(i + 1);
  }
  std::vector<double> d = mean_attention_distance(Tensor::from_vector(p, {1, 3, T, T}));
  REQUIRE(d.size() == 3);
  CHECK(d[0] == 0);
  CHECK(d[1] == Approx((T - 1) / 2.0));  // mean of i over i = 0..T-1
  CHECK(d[2] == Approx((T - 1) / 4.0));  // mean of i/2
  CHECK_THROWS_WITH(mean_attention_distance(Tensor::zeros({3, T, T})),
                    Catch::Contains("expected (1,H,T,T)"));
}

TEST_CASE(
    "a plan run through xargs -P 2, and --jobs 2 --gpus 2 (each run pinned to one GPU), give "
    "the report of the study made in one process",
    "[study][slow]") {
  test::TempDir d;
  const std::string bin = POSLAB_BIN, one = tiny_study_in_one_process().out, two = d.file("two");
  const std::string three = d.file("three");
  // --gpus 2 as well: the many-GPU recipe (docs/cli.md) starts run k of the N at once with
  // CUDA_VISIBLE_DEVICES = k % G, said on the first line of its job.log; checked on the CPU
  // (which ignores it): each run on "GPU" 0 or 1, both used, and the same results.
  REQUIRE(sh(bin + " experiments --tiny --jobs 2 --gpus 2 --out " + three + " > /dev/null") == 0);
  std::set<std::string> gpus_seen;
  for (const RunSpec& r : study_plan(study_config(StudySize::tiny)).runs) {
    if (!r.after.empty()) continue;  // made in its parent's job (runner.h: make_job)
    const std::string log = read_file(three + "/runs/" + r.name + "/job.log");
    const std::string first = log.substr(0, log.find('\n'));
    CHECK((first == "CUDA_VISIBLE_DEVICES=0" || first == "CUDA_VISIBLE_DEVICES=1"));
    gpus_seen.insert(first);
  }
  CHECK(gpus_seen.size() == 2);
  REQUIRE(sh(bin + " experiments --tiny --out " + two + " --plan > " + d.file("plan.txt")) == 0);
  REQUIRE(read_file(d.file("plan.txt")).find("--job task_passkey_alibi_s1") != std::string::npos);
  // round by round: the fine-tunes wait for the screening the first round decides
  int rounds = 0;
  for (; rounds < 4 && !read_file(d.file("plan.txt")).empty(); ++rounds) {
    REQUIRE(sh("xargs -P 2 -I{} sh -c '{} 2> /dev/null' < " + d.file("plan.txt")) == 0);
    REQUIRE(sh(bin + " experiments --tiny --out " + two + " --plan > " + d.file("plan.txt")) == 0);
  }
  CHECK(rounds >= 2);
  CHECK(read_file(d.file("plan.txt")).empty());  // nothing pending
  REQUIRE(sh(bin + " experiments --tiny --out " + two + " --report > /dev/null") == 0);
  for (const char* f : {"extrapolation.csv", "position_loss.csv", "mlm.csv", "tasks.csv", "loc.csv",
                        "ngram.csv", "attention.csv", "runs/rope_s1/model.safetensors",
                        "runs/rope_s1/model_step3.safetensors"}) {
    CHECK(read_file(one + "/" + f) == read_file(two + "/" + f));
    CHECK(read_file(one + "/" + f) == read_file(three + "/" + f));
  }
  // the same stages were timed, whoever made them
  auto stage_names = [](const std::string& dir) {
    std::set<std::string> names;
    for (const TimingRow& t : read_rows<TimingRow>(dir + "/timing.csv")) names.insert(t.stage);
    return names;
  };
  CHECK(stage_names(one) == stage_names(two));
  CHECK(stage_names(one) == stage_names(three));
  const std::string report = without_timing(read_file(one + "/REPORT.md"));
  CHECK(report == without_timing(read_file(two + "/REPORT.md")));
  CHECK(report == without_timing(read_file(three + "/REPORT.md")));
}

TEST_CASE("--tune: every scheme at every learning rate x batch size, one row each, a choice",
          "[study][slow]") {
  test::TempDir d;
  const std::string out = d.file("t");
  REQUIRE(sh(std::string(POSLAB_BIN) + " experiments --tiny --tune --out " + out + " > " +
             d.file("stdout.txt")) == 0);
  StudyConfig c = study_config(StudySize::tiny);
  c.out = out;
  std::vector<TuningRow> rows = read_rows<TuningRow>(out + "/tuning.csv");
  StudyPlan tuning;
  tuning_runs(c, tuning);  // the grid and the edge checks it called for
  REQUIRE(rows.size() == tuning.runs.size());
  CHECK(rows.size() >
        c.kept_pes.size() * (c.tune_lrs.size() - 1) +
            (c.main_pes.size() + c.screened_pes.size() - c.kept_pes.size()) * c.tune_lrs.size());
  for (const TuningRow& t : rows) {
    CHECK(std::isfinite(t.val_loss));
    CHECK(t.tokens == t.steps * t.batch * c.ctx);
  }
  for (const std::string& pe : c.main_pes)  // one learning rate per scheme
    CHECK_THAT(read_file(d.file("stdout.txt")), Contains("choice: " + pe + " lr "));
}
