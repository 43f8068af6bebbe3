// Tests for train/study/report.h: the numbers REPORT.md prints from a synthetic results folder
// with the v3 columns (report_fixture.h): means over seeds taken on the losses and then
// exponentiated, the Student t interval (3+ seeds) or both values (2 seeds), perplexity
// intervals clamped at 1, the headline table's rows and columns, the sections' tables.
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
  // 3 seeds: exp of the mean loss, its interval exp of the loss interval (t(2) = 4.303).
  CHECK(fmt_ppl({{1, 2.0}, {2, 2.05}, {3, 2.1}}) == "7.768 (6.861–8.795)");
  // 2 seeds: the two values, not an interval; 1 seed: said so.
  CHECK(fmt_ppl({{1, std::log(4.0)}, {2, std::log(16.0)}}) == "4.000, 16.00");
  CHECK(fmt_ppl({{1, 2.0}}) == "7.389 (1 seed)");
  CHECK(fmt_ppl({}) == "n/a");
  // A lower end below 1 is clamped at 1 and marked.
  CHECK(fmt_ppl({{1, 0.01}, {2, 0.5}, {3, 0.02}}).find(" (1*–") != std::string::npos);
  CHECK(fmt_nats({{1, -0.05}, {2, -0.07}}) == "-0.0500, -0.0700");
  CHECK(fmt_nats({{1, 0.1}, {2, 0.2}, {3, 0.3}}) == "+0.2000 ± 0.2484");
  CHECK(fmt_nats({{1, 0.01}}) == "+0.0100 (1 seed)");
  CHECK(fmt_loss({{1, 1.80}, {2, 1.85}, {3, 1.90}}) == "1.850 ± 0.124");
}

TEST_CASE("the headline table: its columns, a scheme, the references", "[report]") {
  TempDir d;
  write_study(d);
  const std::string md = report_of(d);
  CHECK(md.rfind("# poslab study (test)\n", 0) == 0);
  // The report opens with the headline table (Table 1), before the setup.
  CHECK(md.find("## Headline\n\n**Table 1.**") != std::string::npos);
  CHECK(md.find("## Headline") < md.find("## Setup"));
  CHECK(row(md, "## Headline", "scheme") ==
        "| scheme | seeds | train ppl | ppl 1024 | ppl 4096 | lines | loss T0 | Δ rope | "
        "unseen [T0,4T0) | unseen [8T0,16T0) | copy gain d=1024 | passkey 4× | passkey 16× | "
        "params + | ms/step | converged |");
  // rope, 3 seeds: losses 1.80/1.85/1.90 at 256 (train ppl exp(1.85)); unseen = loss at 4096
  // + 0.1 / + 0.2; copy gain 0.1/0.2/0.3; passkey: seed 1 alone learned it (25% at 1024, 0% at
  // 4096); 10,000 parameters over none; 300 s / 2000 steps; B/2 -> B bought 0.03.
  CHECK(row(md, "## Headline", "rope") ==
        "| rope | 3 | 6.360 | 7.768 (6.861–8.795) | 11.02 (8.598–14.13) | 120 | 1.850 ± 0.124 | "
        "+0.0000 ± 0.0000 | 2.500 ± 0.248 | 2.600 ± 0.248 | +0.2000 ± 0.2484 | "
        "25.0% (L=1024; 1 of 2 seeds) | 0.0% (L=4096; 1 of 2 seeds) | 10,000 | 150 | "
        "no (+0.0300) |");
  // alibi, 2 seeds (1.88, 1.92: train ppl exp(1.90)): both values; converged (0.01); no passkey
  // seed in distribution, no passkey test near 16 x 256.
  CHECK(row(md, "## Headline", "alibi") ==
        "| alibi | 2 | 6.686 | 6.360, 6.554 | 6.050, 6.234 | n/a | 1.880, 1.920 | "
        "+0.0800, +0.0700 | 1.900, 1.930 | 2.000, 2.030 | +0.5000 (1 seed) | "
        "n/a (L=1024; 0 of 1 seeds) | n/a (not tested near 4096) | n/a | 150 | yes (+0.0100) |");
  // References: yarn adds rope_scaling's lines; the n-gram is one number at every length.
  CHECK(row(md, "## Headline", "rope + yarn").rfind("| rope + yarn | 3 | 6.360 | ", 0) == 0);
  CHECK(row(md, "## Headline", "rope + yarn").find("| 200 |") != std::string::npos);
  CHECK(row(md, "## Headline", "rope, theta = 10").rfind("| rope, theta = 10 | 2 |", 0) == 0);
  CHECK(
      row(md, "## Headline", "rope, sliding window")
          .rfind("| rope, sliding window | 3 | 6.360 | 6.360 (5.617–7.201) | 6.360 (5.617–7.201) |",
                 0) == 0);
  // Its unseen columns from the position buckets (1024 wide in the fixture): [256, 1024) is
  // not tiled by them, [2048, 4096) is (sliding_loss 1.8 on every seed).
  CHECK(row(md, "## Headline", "rope, sliding window").find("| n/a | 1.800 ± 0.000 |") !=
        std::string::npos);
  CHECK(row(md, "## Headline", "3-gram") ==
        "| 3-gram |  | 9.025 | 9.025 | 9.025 | n/a | 2.200 | +0.3500 ± 0.1242 | 2.200 | 2.200 | "
        "n/a | n/a | n/a | n/a | n/a | n/a |");
  CHECK(md.find("## What the numbers say") == std::string::npos);
}

TEST_CASE("budget curve and learning-rate grid", "[report]") {
  TempDir d;
  write_study(d);
  const std::string md = report_of(d);
  CHECK(row(md, "The budget curve", "rope") ==
        "| rope | 2.100 | 1.830 | 1.800 | +0.2700 | +0.0300 | no | 2, 1, 1 | changes |");
  CHECK(row(md, "The budget curve", "alibi") ==
        "| alibi | 2.000 | 1.890 | 1.880 | +0.1100 | +0.0100 | yes | 1, 2, 2 | changes |");
  CHECK(row(md, "The learning-rate grid", "pe") ==
        "| pe | batch | lr 0.001 | lr 0.003 | chosen lr |");
  CHECK(row(md, "The learning-rate grid", "rope") == "| rope | 16 | 2.400 | 2.300 | 0.003 |");
}

TEST_CASE("extrapolation, sliding window and RoPE scaling tables", "[report]") {
  TempDir d;
  write_study(d);
  const std::string md = report_of(d);
  // Per scheme and length: windows, loss, ppl, the unseen ranges where the window has them.
  CHECK(row(md, "## Extrapolation", "alibi") ==
        "| alibi | 256 | 40 | 1.880, 1.920 | 6.554, 6.821 | n/a | n/a |");
  // Sliding: rope's gap at 4096 is 0.50/0.55/0.60 -> +0.55 ± 4.303 * 0.05 / sqrt(3).
  CHECK(row(md, "## Sliding window", "rope").find("| +0.5500 ± 0.1242 |") != std::string::npos);
  CHECK(row(md, "## Sliding window", "alibi").find("| -0.0500, -0.0700 |") != std::string::npos);
  CHECK(row(md, "## RoPE scaling", "ntk")
            .find("| " + fmt_ppl({{1, 2.0}, {2, 2.1}, {3, 2.2}}) + " |") != std::string::npos);
  CHECK(row(md, "The same, every seed", "linear").rfind("| linear | 1 |", 0) == 0);
}

TEST_CASE("attribution, copy gain and RoPE pairs tables", "[report]") {
  TempDir d;
  write_study(d);
  const std::string md = report_of(d);
  CHECK(row(md, "## Attribution", "rope") ==
        "| rope | 3 | 1.800 | 2.800 | 2.300 | 2.600 | 2.000 | 2.200 | 2.400 | +1.0000 | 50.0% | "
        "20.0% | 60.0% |");
  CHECK(row(md, "## Copy at a distance", "rope") ==
        "| rope | +0.0500 ± 0.0000 | +0.2000 ± 0.2484 | +0.0500 ± 0.0000 |");
  CHECK(row(md, "## RoPE, frequency by frequency", "1") ==
        "| 1 | 62.83 | 0.2454 | -0.1000 ± 0.0000 |");
}

TEST_CASE("ablations, tasks, kjv, cost and what was cut", "[report]") {
  TempDir d;
  write_study(d);
  const std::string md = report_of(d);
  // theta 10 against the main runs of the same seeds (1, 2).
  CHECK(row(md, "### RoPE base theta", "10").rfind("| 10 | 1, 2 | 7.389, 8.166 |", 0) == 0);
  CHECK(row(md, "### RoPE base theta", "10000 (main runs, same seeds)")
            .rfind("| 10000 (main runs, same seeds) | 1, 2 | 6.050, 6.360 |", 0) == 0);
  CHECK(row(md, "### RoPE base theta", "1e6").rfind("| 1e6 | 1 | 6.360 (1 seed) |", 0) == 0);
  CHECK(row(md, "The embedding convention", "learned, scaled")
            .rfind("| learned, scaled | 1, 2 | 12.18, 13.46 |", 0) == 0);
  CHECK(row(md, "T5 with max_distance", "max_distance = T0")
            .rfind("| max_distance = T0 | 1 | 7.389 (1 seed) |", 0) == 0);
  CHECK(row(md, "No causal mask", "none") ==
        "| none | 2 | 2.500, 2.600 | 2e-6 | 1: 1e-6, 2: 2e-6 |");
  // Tasks: every seed on its own; reverse with its character accuracy; unscramble by k.
  CHECK(row(md, "Task `reverse`", "pe") == "| pe | seed | 24 | 48† |");
  CHECK(row(md, "Task `reverse`", "rope") ==
        "| rope | 1 | 99.0% (95.0–100); chars 99.5% | 90.0% (85.0–94.0); chars 97.0% |");
  CHECK(row(md, "Task `unscramble`", "pe") == "| pe | seed | k=8† |");
  CHECK(row(md, "Task `passkey`", "alibi") ==
        "| alibi | 1 | 0.5 | n/a | 90.0% (70.0–97.0) | n/a |");
  CHECK(row(md, "Seeds that learned each task", "rope") == "| rope | 1 of 2 | 0 of 1 | 1 of 2 |");
  CHECK(row(md, "kjv: val perplexity", "rope").rfind("| rope | 5.474, 5.755 |", 0) == 0);
  CHECK(row(md, "Compute time of the study", "train") ==
        "| train | 2 | 3 min 30 s (210 s) | 89.4% |");
  // What was cut: parts of the plan without rows.
  CHECK(row(md, "## What was cut", "kjv runs") == "| kjv runs | runs.csv | 4 |  |");
  CHECK(row(md, "## What was cut", "RoPE linear interpolation after a fine-tune rope_pi*") ==
        "| RoPE linear interpolation after a fine-tune rope_pi* | runs.csv | 0 | **not in the "
        "results** |");
}
