// The study as data (train/study/study.h) and its schedules (schedule.h): the plan names every
// run once and finds models by scheme; a plan run through `xargs -P 2` gives the same results
// and report as the study made in one process.
#include <catch2/catch.hpp>

#include <cstdlib>
#include <filesystem>
#include <set>
#include <sstream>

#include "data/atomic_file.h"
#include "tests/support/temp_dir.h"
#include "train/study/schedule.h"
#include "train/study/study.h"

using namespace poslab;
using Catch::Contains;
namespace fs = std::filesystem;

TEST_CASE("the study plan names each run once, in the order of the tables", "[study]") {
  const StudyConfig c = study_config(StudySize::full);
  const StudyPlan p = study_plan(c);
  std::set<std::string> names;
  for (const RunSpec& r : p.runs) {
    CHECK(names.insert(r.name).second);
    CHECK(r.train.out == c.run_dir(r.name));
  }
  // 6 schemes x 2 seeds, 2 theta ablations, 2 masked LMs, 3 tasks x 6 schemes x 2 task seeds
  CHECK(p.runs.size() == 52);
  CHECK(p.runs.front().name == "none_s1");
  CHECK(p.runs[12].name == "rope_theta10");
  CHECK(p.runs.back().name == "task_passkey_t5_s2");
  for (const std::string& pe : p.pes) {  // every scheme's main run, found by its name
    const RunSpec& r = p.run(main_run_name(pe, c.seeds.front()));
    CHECK(pe_name(r.train.model.pe) == pe);
    CHECK(r.train.seed == c.seeds.front());
  }
  for (const EvalSpec& e : p.evals) CHECK(names.count(e.run) == 1);
  REQUIRE_THROWS_WITH(p.run("rope_s9"), Contains("unknown run 'rope_s9'; valid: none_s1, "));
}

TEST_CASE("the scaling evaluations are made on the RoPE model of the first seed", "[study]") {
  const StudyPlan p = study_plan(study_config(StudySize::quick));
  std::vector<std::string> scaled;
  for (const EvalSpec& e : p.evals)
    if (e.scaling != ScalingKind::none) scaled.push_back(e.run + ":" + scaling_name(e.scaling));
  CHECK(scaled == std::vector<std::string>{"rope_s1:linear", "rope_s1:ntk", "rope_s1:dynamic",
                                           "rope_s1:yarn"});
}

TEST_CASE("a job's command carries the study's settings and the run's name", "[study]") {
  StudyConfig c = study_config(StudySize::tiny);
  c.out = "some dir";
  const StudyPlan p = study_plan(c);
  const std::string line = job_command_line(c, p.run("rope_s2"));
  CHECK_THAT(line, Contains(" experiments --out 'some dir' --tiny --steps 4 --seeds 2 "
                            "--device cpu --job rope_s2"));
}

namespace {

// Runs `cmd` on one thread per process (so both schedules compute alike), stderr silenced.
int sh(const std::string& cmd) {
  return std::system(("OMP_NUM_THREADS=1 " + cmd + " 2> /dev/null").c_str());
}

// REPORT.md without what depends on the clock: the date, wall and training times, and the
// last two columns (tokens/s, train time) of the training table.
std::string without_timing(const std::string& md) {
  std::istringstream in(md);
  std::string out, line;
  bool training = false;
  while (std::getline(in, line)) {
    if (line.rfind("## ", 0) == 0) training = line == "## 1. Training";
    if (line.rfind("| date", 0) == 0 || line.rfind("| wall time", 0) == 0 ||
        line.rfind("| training time", 0) == 0)
      continue;
    if (training && line.rfind("| ", 0) == 0)
      for (int k = 0; k < 2; ++k) line.erase(line.find_last_of("|", line.size() - 2) + 1);
    out += line + "\n";
  }
  return out;
}

}  // namespace

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
                        "attention_rope.csv", "runs/rope_s1/model.safetensors"}) {
    CHECK(read_file(one + "/" + f) == read_file(two + "/" + f));
    CHECK(read_file(one + "/" + f) == read_file(three + "/" + f));
  }
  const std::string report = without_timing(read_file(one + "/REPORT.md"));
  CHECK(report.find("## 5. Order and retrieval tasks") != std::string::npos);
  CHECK(report == without_timing(read_file(two + "/REPORT.md")));
  CHECK(report == without_timing(read_file(three + "/REPORT.md")));
}
