// Tests for train/study/report.h, continued: "What the numbers say" claims only what holds
// for every seed (or where the intervals separate), missing files turn sections into "not
// run", and every plot the report links is well-formed SVG.
#include <catch2/catch.hpp>

#include <set>

#include "tests/train/study/report_fixture.h"
#include "tests/train/study/xml_check.h"

using namespace poslab;
using namespace poslab::report_detail;
using namespace report_test;

TEST_CASE("a finding is made only when it holds for every seed", "[report]") {
  TempDir d;
  write_study(d);
  const std::string md = report_of(d);
  // rope rises on all three seeds, alibi falls on both.
  CHECK(finding(md, "**rope** from") ==
        "- **rope** from L=256 to L=4096: ppl 6.360 → 11.02; rises on every seed.");
  CHECK(finding(md, "**alibi** from").find("falls on every seed.") != std::string::npos);
  // learned: seed 1 rises, seed 2 falls -> no claim of a direction.
  CHECK(finding(md, "**learned** from").find("not of one sign on every seed") != std::string::npos);
  // sinusoidal has one seed: nothing claimed.
  CHECK(finding(md, "**sinusoidal** from").find("one seed, no claim.") != std::string::npos);
  // none is not near convergence: no claim about its extrapolation at all.
  CHECK(finding(md, "**none** from") == "");
  CHECK(finding(md, "**Near convergence**").find("**not met by none**") != std::string::npos);
  // Sliding window: rope's gap is above 0 on every seed and its interval too; alibi's is below
  // 0 on every seed, but its interval (2 seeds: t = 12.7) contains 0 -> no claim.
  const std::string sliding = finding(md, "**Sliding window**");
  CHECK(sliding.find("Hurt by the longer context on every seed, interval above 0: rope (+0.5500 "
                     "± 0.1242).") != std::string::npos);
  CHECK(sliding.find("No difference that holds for every seed: learned") != std::string::npos);
  CHECK(sliding.find("alibi (-0.0600 ± 0.1271)") != std::string::npos);
  CHECK(sliding.find("uses the longer context") == std::string::npos);
}

TEST_CASE("findings on rankings, ablations and tasks follow the same rule", "[report]") {
  TempDir d;
  write_study(d);
  const std::string md = report_of(d);
  // At 4096 only near-converged schemes are ranked: none is left out.
  const std::string at_max = finding(md, "At L=4096");
  CHECK(at_max.find("none") == std::string::npos);
  CHECK(at_max.find("alibi") != std::string::npos);
  // ntk below plain RoPE on every seed; linear is not of one sign.
  const std::string scaling = finding(md, "**RoPE scaling**");
  CHECK(scaling.find("ntk " + fmt(std::exp(2.1)) + " (below on every seed)") != std::string::npos);
  CHECK(scaling.find("(within seed noise)") != std::string::npos);
  // theta 10: above theta 10000 at T0 on both seeds, below it at 4096 on both.
  const std::string theta = finding(md, "**RoPE theta 10**");
  CHECK(theta.find("at L=256 above theta 10000 on every seed") != std::string::npos);
  CHECK(theta.find("at L=4096 below theta 10000 on every seed") != std::string::npos);
  CHECK(finding(md, "**RoPE theta 1e6**").find("one seed, no claim") != std::string::npos);
  CHECK(finding(md, "**learned, embedding gpt2**").find("above scaled on every seed") !=
        std::string::npos);
  CHECK(finding(md, "**Masked LM**").find("above it on every seed") != std::string::npos);
  CHECK(finding(md, "**Shuffle check**, masked LM with none").find("float rounding") !=
        std::string::npos);
  // Tasks: rope's every interval at 48 (82-94%) lies above none's (6-18%).
  CHECK(finding(md, "**Task reverse**")
            .find("Separate on every seed (Wilson 95%): rope above "
                  "none.") != std::string::npos);
  CHECK(finding(md, "**Task passkey**").find("alibi above rope") == std::string::npos);
}

TEST_CASE("missing files turn their sections into \"not run\"", "[report]") {
  TempDir d;  // an empty folder: nothing at all
  const std::string md = report_of(d);
  for (const char* f : {"runs.csv", "extrapolation.csv", "tasks.csv", "mlm.csv", "timing.csv",
                        "tuning.csv", "loc.csv", "attention.csv"}) {
    INFO(f);
    CHECK(md.find(std::string("**Not run**: `") + f + "` ") != std::string::npos);
  }
  CHECK(md.find("## What the numbers say") != std::string::npos);
  CHECK(md.find("Not enough results for any finding.") != std::string::npos);
  CHECK(md.find("## Review") == std::string::npos);
  CHECK(fs::exists(d.path + "/plots/rope_rotation.svg"));  // drawn from the formula alone
  CHECK(fs::exists(d.path + "/plots/rope_offset.svg"));

  d.write("mlm.csv", "run,pe,seed,val_loss,shuffle_max_diff\n");  // a header only: not run too
  d.write("review.md", "RoPE and ALiBi, in 200 words.");
  const std::string md2 = report_of(d);
  CHECK(md2.find("**Not run**: `mlm.csv` holds no rows (the quick study skips some parts).") !=
        std::string::npos);
  CHECK(md2.find("## Review\n\nRoPE and ALiBi, in 200 words.") != std::string::npos);
}

TEST_CASE("every plot REPORT.md links exists and is well-formed SVG", "[report]") {
  TempDir d;
  write_study(d);
  const std::string md = report_of(d);
  std::set<std::string> linked;  // every "](plots/NAME.svg)"
  for (size_t a = md.find("](plots/"); a != std::string::npos; a = md.find("](plots/", a + 1)) {
    linked.insert(md.substr(a + 2, md.find(')', a) - a - 2));
  }
  for (const char* p :
       {"plots/ppl_vs_length.svg", "plots/training_curves.svg", "plots/loss_vs_position.svg",
        "plots/sliding_gap.svg", "plots/rope_scaling.svg", "plots/rope_rotation.svg",
        "plots/rope_offset.svg", "plots/attention_rope.svg", "plots/attention_none.svg",
        "plots/passkey.svg", "plots/task_reverse.svg", "plots/kjv_ppl_vs_length.svg",
        "plots/training_curves_kjv.svg"}) {
    INFO(p);
    CHECK(linked.count(p) == 1);
  }
  for (const auto& p : linked) {
    INFO(p);
    REQUIRE(fs::exists(d.path + "/" + p));
    CHECK(xml_error(read_file(d.path + "/" + p)) == "");
  }
  // Seed bands on the perplexity plot; rope and sinusoidal in different colours.
  const std::string ppl = read_file(d.path + "/plots/ppl_vs_length.svg");
  CHECK(ppl.find("class=\"band\"") != std::string::npos);
  CHECK(pe_color("rope") != pe_color("sinusoidal"));
  // Every head of the first and the last layer: 2 layers x 2 heads.
  CHECK(read_file(d.path + "/plots/attention_rope.svg").find(">layer 3, head 1<") !=
        std::string::npos);
}

TEST_CASE("a malformed CSV fails naming the file and the line", "[report]") {
  TempDir d;
  write_study(d);
  const auto error_of = [&] {
    try {
      write_report(d.path, kInfo);
    } catch (const std::runtime_error& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  SECTION("a row with a field missing") {
    const std::string runs = read_file(d.path + "/runs.csv");
    const size_t line3 = runs.find('\n', runs.find('\n') + 1) + 1;
    d.write("runs.csv", runs.substr(0, line3) + "oops,rope,1\n" + runs.substr(line3));
    CHECK(error_of() ==
          d.path + "/runs.csv: line 3: expected 11 fields, as in the header, but got 3");
  }
  SECTION("a field that is not a number") {
    d.write("ngram.csv", "corpus,n,k,val_loss\nfortunes,3,0.1,abc\n");
    CHECK(error_of() ==
          d.path + "/ngram.csv: line 2: column 'val_loss': expected a number, but got 'abc'");
  }
  SECTION("a missing column") {
    d.write("loc.csv", "pe,file,params\nnone,a.cpp,1\n");
    CHECK(error_of() == d.path +
                            "/loc.csv: line 1: expected a column 'lines' in the header, but got "
                            "'pe,file,params'");
  }
}
