// The study as data (train/study/study.h), its tables (collect.h, timing.h) and its schedules
// (schedule.h): the plan names every run once, with the seeds and settings of each part; a
// runs.csv row comes from the files a run leaves; stage times add up; a plan run through
// `xargs -P 2` gives the same results and report as the study made in one process.
#include <catch2/catch.hpp>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <map>
#include <set>
#include <sstream>

#include "data/atomic_file.h"
#include "tests/support/temp_dir.h"
#include "train/log.h"
#include "train/study/archive.h"
#include "train/study/collect.h"
#include "train/study/runner.h"
#include "train/study/schedule.h"
#include "train/study/study.h"
#include "train/study/timing.h"
#include "train/study/tune.h"

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

}  // namespace

TEST_CASE("the study plan names each run once, part by part, with each part's seeds", "[study]") {
  const StudyConfig c = study_config(StudySize::full);
  const StudyPlan p = study_plan(c);
  std::set<std::string> names;
  for (const RunSpec& r : p.runs) {
    CHECK(names.insert(r.name).second);
    CHECK(r.train.out == c.run_dir(r.name));
    CHECK(r.train.data == c.corpus_dir(r.corpus));
    CHECK(r.train.schedule == Schedule::wsd);  // every run of the study
  }
  REQUIRE(p.pes ==
          std::vector<std::string>{"none", "learned", "sinusoidal", "rope", "alibi", "t5"});
  CHECK(count_prefix(p, "kjv_") == 0);
  CHECK(count_prefix(p, "rope_theta") == 2 * 2);
  CHECK(count_prefix(p, "mlm_") == 2 * 2);
  // unscramble every scheme with 3 seeds, reverse and passkey with 2
  CHECK(count_prefix(p, "task_unscramble_") == 6 * 3);
  CHECK(count_prefix(p, "task_reverse_") == 6 * 2);
  CHECK(count_prefix(p, "task_passkey_") == 6 * 2);
  CHECK(c.steps == 7200);  // B = 7,200 x 16 x 256 = 29.5 M tokens
  size_t main = 0, swapped = 0;
  for (const std::string& pe : p.pes)
    for (uint64_t seed : {1, 2, 3}) {
      const RunSpec& r = p.run(main_run_name(pe, seed));  // throws if missing
      CHECK(r.corpus == "pystdlib");
      // each scheme in its canonical form, at its own learning rate
      CHECK(r.train.model.embedding ==
            (pe == "learned" ? EmbeddingKind::gpt2 : EmbeddingKind::scaled));
      CHECK(r.train.adam.lr == c.lr_for(pe));
      CHECK(r.train.seed == seed);
      CHECK(r.train.steps == 7200);
      CHECK(r.train.warmup == 100);
      CHECK(r.train.decay_share == 0.2);
      // the states where the B/4 and B/2 branches start (0.8 B/4, 0.8 B/2), and 0.8 B
      CHECK(r.train.keep_steps == std::vector<int64_t>{1440, 2880, 5760});
      CHECK(r.train.model.pe.max_len == (pe == "learned" ? 4096 : 0));
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
  CHECK(main == 18);
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
  const RunSpec& pi = p.run(finetune_run_name(4, 2));
  CHECK(pi.train.model.block_size == 4 * 256);
  CHECK(pi.train.init_from == c.run_dir("rope_s2") + "/model.safetensors");
  CHECK(pi.after == "rope_s2");
  CHECK(pi.train.rope_scaling.kind == ScalingKind::linear);
  CHECK(pi.train.rope_scaling.factor == 4);
  // tokens: 5% of B
  CHECK(pi.train.steps * pi.train.batch * 1024 == c.steps * c.batch * 256 / 20);
  CHECK(p.runs.size() == 18 * 3 + 2 + 42 + 2 * 9);
  // in the order of what to keep: each main run with its branches, the fine-tune, the tasks
  // seed by seed, then the breaks and ablations
  CHECK(p.runs[0].name == "none_s1");
  CHECK(p.runs[1].name == "none_b4_s1");
  CHECK(p.runs[2].name == "none_b2_s1");
  CHECK(p.runs[18].name == "none_s2");
  CHECK(p.runs[54].name == "rope_pi4_s1");
  CHECK(p.runs[56].name == "task_unscramble_none_s1");
  CHECK(p.runs[56 + 18].name == "task_unscramble_none_s2");
  CHECK(p.runs[56 + 36].name == "task_unscramble_none_s3");
  CHECK(p.runs[98].name == "mlm_none_s1");
  CHECK(p.runs.back().name == "t5_dist256_s2");
  CHECK(p.run("rope_theta10_s2").train.model.pe.theta == 10);
  CHECK(p.run("rope_theta1e6_s1").train.model.pe.theta == 1e6);
  const RunSpec& mlm = p.run("mlm_none_s2");
  CHECK((mlm.train.objective == Objective::mlm && !mlm.train.model.causal && mlm.mlm_check));
  CHECK(mlm.train.keep_steps.empty());
  for (const EvalSpec& e : p.evals) CHECK(names.count(e.run) == 1);
  REQUIRE_THROWS_WITH(p.run("rope_s9"), Contains("unknown run 'rope_s9'; valid: none_s1, "));
  std::vector<std::string> corpora{"pystdlib"};
  for (const TaskSpec& t : p.tasks) corpora.push_back("task_" + t.name);
  CHECK(p.corpora() == corpora);
  // tuning: 3 learning rates per scheme at B/16 with the same schedule
  const StudyPlan tune = tuning_plan(c);
  CHECK(tune.runs.size() == 18);
  for (const RunSpec& r : tune.runs)
    CHECK((r.train.steps == 450 && r.train.schedule == Schedule::wsd && r.train.warmup == 100));
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
  CHECK(children(p, p.run("rope_s1")).size() == 3);  // b4, b2, the fine-tune
  CHECK(children(p, p.run("none_s1")).size() == 2);
  // a done.json with the run's options makes it done; other options do not
  const RunSpec& main = p.run("none_s1");
  fs::create_directories(c.run_dir(main.name));
  write_file_atomic(c.run_dir(main.name) + "/done.json",
                    "{\"run\":\"none_s1\",\"signature\":\"pe=none steps=1\"}\n");
  CHECK_FALSE(run_done(c, p, main));
  write_file_atomic(c.run_dir(main.name) + "/done.json",
                    "{\"run\":\"none_s1\",\"signature\":\"" + run_signature(main) + "\"}\n");
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

TEST_CASE("RoPE scaling is evaluated on every main RoPE seed, nothing else is scaled", "[study]") {
  for (StudySize size : {StudySize::full, StudySize::quick}) {
    const StudyConfig c = study_config(size);
    const StudyPlan p = study_plan(c);
    std::vector<std::string> scaled;
    std::map<std::string, int> unscaled;  // run -> evaluations without scaling
    for (const EvalSpec& e : p.evals) {
      if (e.factor > 0) {  // a fine-tuned run, evaluated with its own fixed factor only
        CHECK((e.scaling == ScalingKind::linear && !p.run(e.run).train.init_from.empty()));
        continue;
      }
      if (e.scaling != ScalingKind::none) scaled.push_back(e.run + ":" + scaling_name(e.scaling));
      if (e.scaling == ScalingKind::none) ++unscaled[e.run];
    }
    std::vector<std::string> expected;
    for (uint64_t seed : first_seeds(c.main_seeds))
      for (const char* s : {"linear", "ntk", "dynamic", "yarn"})
        expected.push_back("rope_s" + std::to_string(seed) + ":" + s);
    CHECK(scaled == expected);
    // every next-token run on the study corpus is evaluated once without scaling
    for (const RunSpec& r : p.runs)
      CHECK(unscaled[r.name] ==
            (r.train.objective == Objective::lm && !r.task && r.train.init_from.empty() ? 1 : 0));
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
  CHECK(run_done(c, p, a));
  CHECK(fs::exists(c.run_dir("alibi_s1") + "/eval_none_32.json"));
  CHECK_FALSE(fs::exists(c.run_dir("t5_s2")));  // made with other options: made again
  CHECK(fs::exists(c.out + "/throughput.csv"));
  CHECK(read_file(c.out + "/tuning.csv") == "pe,lr\n");
  CHECK(import_archived_runs(c, p) == 0);  // already here
}

TEST_CASE("a run made again on a fresh clone takes the archived tuning's learning rate",
          "[study]") {
  // --job and --plan do not tune: they read tuning.csv, which on a fresh clone only the archive
  // has. Read before the archive was brought back, every scheme took StudyConfig::lr, so
  // `--job t5_dist256_s1 --force` trained at 0.004 a run the archive made at 0.008.
  test::TempDir d;
  StudyConfig c = study_config(StudySize::tiny);
  c.out = d.file("fresh/results");
  c.archive = d.file("docs/runs");
  c.force = true;
  CHECK(read_tuning(c).empty());  // no archive yet: no choice
  fs::create_directories(c.archive);
  write_rows<TuningRow>(c.archive + "/tuning.csv", {{"t5", 0.004, 16, 450, 1843200, 2.0992, 175},
                                                    {"t5", 0.008, 16, 450, 1843200, 1.8958, 173},
                                                    {"rope", 0.004, 16, 450, 1843200, 1.6952, 58},
                                                    {"rope", 0.008, 16, 450, 1843200, 1.7165, 90}});
  const std::map<std::string, double> lr = read_tuning(c);
  CHECK(lr.at("t5") == 0.008);
  CHECK(lr.at("rope") == 0.004);
  CHECK(fs::exists(c.out + "/tuning.csv"));
  // and the plan's runs carry it
  c.lr_by_pe = lr;
  CHECK(study_plan(c).run("t5_s1").train.adam.lr == 0.008);
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

}  // namespace

TEST_CASE("the tiny study end to end: timing.csv holds every stage, its sum within the wall time",
          "[study][slow]") {
  test::TempDir d;
  const std::string bin = POSLAB_BIN, out = d.file("one");
  auto t0 = std::chrono::steady_clock::now();
  REQUIRE(std::system(("OMP_NUM_THREADS=1 " + bin + " experiments --tiny --jobs 1 --out " + out +
                       " > /dev/null 2> " + d.file("stderr.txt"))
                          .c_str()) == 0);
  const double wall = seconds_since(t0);
  CHECK_THAT(read_file(d.file("stderr.txt")), Contains("expected time: "));
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
    // (a run of one step keeps no earlier model; a fine-tune's log has too few rows)
    if (r.objective == "lm" && r.corpus.rfind("task_", 0) != 0 && r.steps >= 2 &&
        r.run.find("_pi") == std::string::npos)
      CHECK(std::isfinite(r.last20_gain));
  }
  // the branches: runs.csv names the main run each comes from
  for (const RunRow& r : runs) {
    CHECK(r.schedule == "wsd");
    CHECK(r.branch_of ==
          (r.run.find("_b4_") != std::string::npos || r.run.find("_b2_") != std::string::npos
               ? r.run.substr(0, r.run.find("_b")) + r.run.substr(r.run.rfind("_s"))
               : ""));
  }
  // extrapolation.csv: rope_scaling empty for the schemes without one, "none" for plain RoPE;
  // the 32-token window's loss at T0 on the main runs only
  for (const EvalRow& e : read_rows<EvalRow>(out + "/extrapolation.csv")) {
    CHECK((e.pe == "rope") == !e.rope_scaling.empty());
    const bool main_plain = e.run == main_run_name(e.pe, e.seed) && e.len == 32 &&
                            (e.rope_scaling.empty() || e.rope_scaling == "none");
    CHECK(std::isfinite(e.loss_window32) == main_plain);
  }
  CHECK(read_rows<CorpusRow>(out + "/corpus.csv").at(0).corpus == "pystdlib");
  // attention.csv: every layer and head of each scheme's seed-1 model, keys up to the query
  std::vector<AttentionRow> att = read_rows<AttentionRow>(out + "/attention.csv");
  const StudyConfig tiny = study_config(StudySize::tiny);
  CHECK(att.size() == static_cast<size_t>(6 * tiny.layers * tiny.heads * tiny.attention_len *
                                          (tiny.attention_len + 1) / 2));
  // attention_distance.csv: every layer and head of the same models at T0 and 4 T0, each
  // distance between 0 (the query's own key) and L - 1 (the first key)
  std::vector<AttentionDistanceRow> dist =
      read_rows<AttentionDistanceRow>(out + "/attention_distance.csv");
  CHECK(dist.size() == static_cast<size_t>(6 * 2 * tiny.layers * tiny.heads));
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
    "a plan run through xargs -P 2, and --jobs 2, give the report of the study made in "
    "one process",
    "[study][slow]") {
  test::TempDir d;
  const std::string bin = POSLAB_BIN, one = d.file("one"), two = d.file("two");
  const std::string three = d.file("three");
  REQUIRE(sh(bin + " experiments --tiny --jobs 1 --out " + one + " > /dev/null") == 0);
  REQUIRE(sh(bin + " experiments --tiny --jobs 2 --out " + three + " > /dev/null") == 0);
  REQUIRE(sh(bin + " experiments --tiny --out " + two + " --plan > " + d.file("plan.txt")) == 0);
  REQUIRE(read_file(d.file("plan.txt")).find("--job task_passkey_alibi_s1") != std::string::npos);
  REQUIRE(sh("xargs -P 2 -I{} sh -c '{} 2> /dev/null' < " + d.file("plan.txt")) == 0);
  REQUIRE(sh(bin + " experiments --tiny --out " + two + " --plan > " + d.file("left.txt")) == 0);
  CHECK(read_file(d.file("left.txt")).empty());  // nothing pending
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
  const StudyConfig c = study_config(StudySize::tiny);
  std::vector<TuningRow> rows = read_rows<TuningRow>(out + "/tuning.csv");
  REQUIRE(rows.size() == c.tune_pes.size() * c.tune_lrs.size() * c.tune_batches.size());
  for (const TuningRow& t : rows) {
    CHECK(std::isfinite(t.val_loss));
    CHECK(t.tokens == t.steps * t.batch * c.ctx);
  }
  for (const std::string& pe : c.tune_pes)  // one learning rate per scheme
    CHECK_THAT(read_file(d.file("stdout.txt")), Contains("choice: " + pe + " lr "));
  // the study gathered in the same folder counts the tuning's stages in timing.csv
  REQUIRE(sh(std::string(POSLAB_BIN) + " experiments --tiny --out " + out + " > /dev/null") == 0);
  size_t tune_stages = 0;
  for (const TimingRow& t : read_rows<TimingRow>(out + "/timing.csv"))
    tune_stages += t.stage.rfind("tune train tune_", 0) == 0;
  CHECK(tune_stages == rows.size());
}

TEST_CASE("--gpus pins the runs made at once to one GPU each, without a GPU to see it",
          "[study][slow]") {
  // The many-GPU recipe (docs/cli.md): --jobs N --gpus G starts run k of the N at once with
  // CUDA_VISIBLE_DEVICES = k % G, said on the first line of its job.log. Checked on the CPU:
  // two runs at once on "GPUs" 0 and 1, each run on one of them, both used.
  test::TempDir d;
  const std::string out = d.file("g");
  REQUIRE(sh(std::string(POSLAB_BIN) + " experiments --tiny --jobs 2 --gpus 2 --out " + out +
             " > /dev/null") == 0);
  std::set<std::string> seen;
  const StudyPlan p = study_plan(study_config(StudySize::tiny));
  for (const RunSpec& r : p.runs) {
    if (!r.after.empty()) continue;  // made in its parent's job (runner.h: make_job)
    const std::string log = read_file(out + "/runs/" + r.name + "/job.log");
    const std::string first = log.substr(0, log.find('\n'));
    CHECK((first == "CUDA_VISIBLE_DEVICES=0" || first == "CUDA_VISIBLE_DEVICES=1"));
    seen.insert(first);
  }
  CHECK(seen.size() == 2);
}
