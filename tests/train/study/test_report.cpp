// Tests for train/study/report.h: the numbers REPORT.md prints from a synthetic results folder
// with the v2 columns (report_fixture.h): means over seeds taken on the losses and then
// exponentiated, the Student t interval, the near-convergence marks, the sections' tables.
#include "train/study/report.h"

#include <catch2/catch.hpp>

#include <cmath>

#include "tests/train/study/report_fixture.h"

using namespace poslab;
using namespace poslab::report_detail;
using namespace report_test;

TEST_CASE("report numbers are formatted to 4 significant figures", "[report]") {
  CHECK(fmt(15) == "15.00");
  CHECK(fmt(0.0123456) == "0.01235");
  CHECK(fmt(1234.4) == "1234");
  CHECK(fmt(3.21e7) == "3.21e7");
  CHECK(fmt(NAN) == "n/a");
  CHECK(fmt_plain(1e6) == "1e6");
  CHECK(fmt_count(812544) == "812,544");
  CHECK(fmt_percent(0.875) == "87.5%");
  // A perplexity is exp of the mean loss, its interval exp of the loss interval.
  CHECK(fmt_ppl(mean_interval({std::log(4.0), std::log(16.0)})) ==
        fmt(8.0) + " (" + fmt(std::exp(std::log(8.0) - 12.706 * std::log(2.0))) + "–" +
            fmt(std::exp(std::log(8.0) + 12.706 * std::log(2.0))) + ")");
  CHECK(fmt_ppl(mean_interval({2.0})) == "7.389 (1 seed)");
  CHECK(fmt_ppl(mean_interval({})) == "n/a");
  CHECK(fmt_nats(mean_interval({-0.05, -0.07})) == "-0.0600 ± 0.1271");
  CHECK(fmt_nats(mean_interval({0.01})) == "+0.0100 (1 seed)");
}

TEST_CASE("the headline: ppl = exp(mean loss over seeds) with its t interval", "[report]") {
  TempDir d;
  write_study(d);
  const std::string md = report_of(d);
  CHECK(md.rfind("# poslab study (test)\n", 0) == 0);
  CHECK(row(md, "## 1. Headline", "pe") ==
        "| pe | seeds | params | lines | train ppl | ppl L=256 | ppl L=1024 | ppl L=4096 |");
  // rope: losses 1.80/1.85/1.90 at 256 -> exp(1.85) = 6.360, half 4.303 * 0.05 / sqrt(3);
  // train loss (last row of each curve) 1.70/1.75/1.80 -> exp(1.75) = 5.755.
  CHECK(row(md, "## 1. Headline", "rope") ==
        "| rope | 3 | 800,000 | 120 | 5.755 (5.082–6.516) | 6.360 (5.617–7.201) | "
        "7.768 (6.861–8.795) | 11.02 (8.598–14.13) |");
  // learned, 2 seeds: t = 12.706; no curves, no loc row.
  CHECK(row(md, "## 1. Headline", "learned")
            .rfind("| learned | 2 | n/a | n/a | n/a | 7.965 "
                   "(5.797–10.94) |",
                   0) == 0);
  // sinusoidal, one seed: said so, no interval.
  CHECK(row(md, "## 1. Headline", "sinusoidal").find("| 7.389 (1 seed) | 20.09 (1 seed) |") !=
        std::string::npos);
  // none is above the 3-gram on every seed: marked, and the mark explained.
  CHECK(row(md, "## 1. Headline", "none ‡").rfind("| none ‡ | 2 | 790,000 | 10 |", 0) == 0);
  CHECK(md.find("‡ = not near convergence") != std::string::npos);
}

TEST_CASE("near convergence: gains, n-gram lines, the verdict per scheme", "[report]") {
  TempDir d;
  write_study(d);
  const std::string md = report_of(d);
  CHECK(row(md, "## 2. Near convergence", "rope_s2") ==
        "| rope_s2 | 2,000 | 8,192,000 | 300.0 | 1.850 | 0.02000 |");
  CHECK(row(md, "Reference lines", "fortunes") == "| fortunes | 1 | 1 | 3.300 | 27.11 |");
  CHECK(md.find("**none** (val loss at T0 per seed 1: 2.300, 2: 2.350): **not below the 3-gram "
                "(2.200) on every seed**. Not near convergence within this budget: its "
                "extrapolation numbers are **not interpretable**") != std::string::npos);
  CHECK(md.find("**rope** (val loss at T0 per seed 1: 1.800, 2: 1.850, 3: 1.900): below the "
                "3-gram (2.200) on every seed; below the 4-gram (1.950) on every seed.") !=
        std::string::npos);
}

TEST_CASE("extrapolation, sliding window and RoPE scaling tables", "[report]") {
  TempDir d;
  write_study(d);
  const std::string md = report_of(d);
  // Per scheme and length: windows, loss ± half, ppl with interval, each seed's ppl.
  CHECK(row(md, "## 3. Extrapolation", "alibi") ==
        "| alibi | 256 | 40 | 1.900 ± 0.254 | 6.686 (5.186–8.620) | 1: 6.554, 2: 6.821 |");
  // Sliding: rope's gap at 4096 is 0.50/0.55/0.60 -> +0.55 ± 4.303 * 0.05 / sqrt(3).
  CHECK(row(md, "## 4. Sliding window", "rope").find("| +0.5500 ± 0.1242 |") != std::string::npos);
  CHECK(row(md, "## 4. Sliding window", "alibi").find("| -0.0600 ± 0.1271 |") != std::string::npos);
  // RoPE scaling: every seed, and the mean with its interval.
  CHECK(row(md, "## 5. RoPE scaling", "ntk")
            .find("| " + fmt_ppl(mean_interval({2.0, 2.1, 2.2})) + " |") != std::string::npos);
  CHECK(row(md, "The same, every seed", "linear").rfind("| linear | 1 |", 0) == 0);
}

TEST_CASE("ablations, tasks, kjv and cost tables", "[report]") {
  TempDir d;
  write_study(d);
  const std::string md = report_of(d);
  // theta 10 against the main runs of the same seeds (1, 2).
  CHECK(row(md, "6.1 RoPE base theta", "10")
            .rfind("| 10 | 1, 2 | " + fmt_ppl(mean_interval({2.0, 2.1})) + " |", 0) == 0);
  CHECK(row(md, "6.1 RoPE base theta", "10000 (main runs, same seeds)")
            .rfind("| 10000 (main runs, same seeds) | 1, 2 | " +
                       fmt_ppl(mean_interval({1.80, 1.85})) + " |",
                   0) == 0);
  CHECK(row(md, "6.1 RoPE base theta", "1e6").rfind("| 1e6 | 1 | 6.360 (1 seed) |", 0) == 0);
  CHECK(
      row(md, "6.2 The unscaled embedding", "learned, gpt2").rfind("| learned, gpt2 | 1, 2 |", 0) ==
      0);
  CHECK(row(md, "6.3 No causal mask", "none") ==
        "| none | 2 | 2.550 ± 0.635 | 2e-6 | 1: 1e-6, 2: 2e-6 |");
  // Tasks: the Wilson interval from tasks.csv, † past the training length.
  CHECK(row(md, "Task `reverse`", "pe") == "| pe | seed | 24 | 48† |");
  CHECK(row(md, "Task `reverse`", "rope") == "| rope | 1 | 99.0% (95.0–100) | 90.0% (85.0–94.0) |");
  CHECK(row(md, "Task `passkey`", "alibi") == "| alibi | 1 | 0.5 | n/a | 90.0% (70.0–97.0) |");
  // kjv: the same table for the kjv runs.
  CHECK(row(md, "kjv: val perplexity", "rope")
            .rfind("| rope | " + fmt_ppl(mean_interval({1.70, 1.75})), 0) == 0);
  // Cost: timing.csv summed by stage kind.
  CHECK(row(md, "Compute time of the study", "train") ==
        "| train | 2 | 3 min 30 s (210 s) | 89.4% |");
  CHECK(row(md, "Compute time of the study", "**total**") ==
        "| **total** | 4 | 3 min 55 s (235 s) | 100.0% |");
  CHECK(md.find("| rope | 0.003 | 16 | 200 | 819,200 | 2.300 | 31.00 | lowest |") !=
        std::string::npos);
  CHECK(md.find("| compute time of the study (sum of timing.csv) | 3 min 55 s (235 s) |") !=
        std::string::npos);
}
