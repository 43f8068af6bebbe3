// The trained models a learner gets with the repository: docs/results/models/<pe>.safetensors,
// the seed-1 model of each main scheme of the study. Evaluated the way the learner evaluates
// them — `poslab eval` on a freshly prepared pystdlib corpus, at L = T0 — each gives the loss its
// run recorded in docs/results/runs/<pe>_s1/eval_none_256.json, the file the report's row of
// extrapolation.csv (run <pe>_s1, len 256, no scaling) is read from.
#include <catch2/catch.hpp>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <stdexcept>

#include "data/atomic_file.h"
#include "data/json.h"
#include "tests/support/command.h"
#include "tests/support/temp_dir.h"

using namespace poslab;
using poslab::test::output_of;
namespace fs = std::filesystem;

namespace {

// The number named key of a JSON object; an error naming the key when it is missing.
double number(const Json& j, const std::string& key) {
  const Json* v = j.find(key);
  if (!v) throw std::runtime_error("no \"" + key + "\" in the evaluation's JSON");
  return v->as_number();
}

}  // namespace

TEST_CASE("the committed models evaluate to the losses their runs recorded", "[models]") {
  const std::string src = POSLAB_SOURCE_DIR, bin = POSLAB_BIN;
  const fs::path models = src + "/docs/results/models";
  test::TempDir dir;
  int status = -1;
  std::string prep =
      output_of(bin + " prepare --corpus pystdlib --out " + dir.file("data"), &status);
  INFO(prep);
  REQUIRE(status == 0);

  int checked = 0;
  for (const auto& entry : fs::directory_iterator(models)) {
    if (entry.path().extension() != ".safetensors") continue;
    const std::string pe = entry.path().stem().string();
    const std::string recorded = src + "/docs/results/runs/" + pe + "_s1/eval_none_256.json";
    INFO("model " << entry.path() << " against " << recorded);
    REQUIRE(fs::exists(recorded));
    // Its vocabulary is the corpus's (eval refuses one that differs); the windows are all of
    // the val split's, as the study reads them at L = T0.
    std::string out = output_of(bin + " eval --ckpt " + entry.path().string() + " --data " +
                                    dir.file("data") + " --len 256 --json",
                                &status);
    INFO(out);
    REQUIRE(status == 0);
    Json now = json_parse(out, "poslab eval --json"),
         then = json_parse(read_file(recorded), recorded);
    CHECK(number(now, "windows") == number(then, "windows"));
    CHECK(number(now, "tokens") == number(then, "tokens"));
    // The same sums in the same order: equal digits on the machine that made the run; another
    // CPU (AVX2 against AVX-512 kernels) may round the f32 logits differently, so a margin.
    CHECK(std::abs(number(now, "loss") - number(then, "loss")) < 1e-5);
    ++checked;
  }
  CHECK(checked >= 1);
}
