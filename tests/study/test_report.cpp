// Tests for study/report.h: the numbers REPORT.md prints from a synthetic results folder
// with the v4 columns and run names (report_fixture.h): means over seeds taken on the losses and
// then exponentiated, the Student t interval (3+ seeds) or both values (2 seeds), perplexity
// intervals clamped at 1, the two headline tables' rows and columns, the sections' tables. Every
// expected cell is worked out by hand from the fixture's inputs (t(2) = 4.303: a half-width of
// 4.303 x sd / sqrt(3)).
#include "study/report.h"

#include <catch2/catch.hpp>

#include <cmath>

#include "tests/study/report_fixture.h"

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

TEST_CASE("the headline's first table: quality at T0, cost and the rank by budget", "[report]") {
  TempDir d;
  write_study(d);
  const std::string md = report_of(d);
  CHECK(md.rfind("# poslab study (test)\n", 0) == 0);
  // The report opens with the headline tables, before the setup.
  CHECK(md.find("## Headline\n\n**Table 1.**") != std::string::npos);
  CHECK(md.find("## Headline") < md.find("## Setup"));
  CHECK(row(md, "## Headline", "scheme") ==
        "| scheme | seeds | train ppl | ppl 1024 | ppl 4096 | lines | loss T0 | Δ rope | "
        "params + | rank B/4 → B |");
  // rope, 3 seeds: losses 1.80/1.85/1.90 at 256 (train ppl exp(1.85)); 120 lines, 10,000
  // parameters over none; second of six at B/4 (mean 2.15 after alibi's 2.02), first at B.
  CHECK(row(md, "## Headline", "rope") ==
        "| rope | 3 | 6.360 | 7.768 (6.861–8.795) | 11.02 (8.598–14.13) | 120 | 1.850 ± 0.124 | "
        "+0.0000 ± 0.0000 | 10,000 | 2 → 1 |");
  // alibi, 2 seeds (1.88, 1.92: train ppl exp(1.90)): both values; first at B/4, second at B.
  CHECK(row(md, "## Headline", "alibi") ==
        "| alibi | 2 | 6.686 | 6.360, 6.554 | 6.050, 6.234 | n/a | 1.880, 1.920 | "
        "+0.0800, +0.0700 | n/a | 1 → 2 |");
  // none: 0 parameters over itself, last at every budget; t5 (1 seed, no loc.csv row) fifth.
  CHECK(row(md, "## Headline", "none") ==
        "| none | 2 | 10.23 | 9.974, 10.49 | 9.974, 10.49 | 10 | 2.300, 2.350 | "
        "+0.5000, +0.5000 | 0 | 6 → 6 (held) |");
  CHECK(row(md, "## Headline", "t5") ==
        "| t5 | 1 | 8.166 | 8.585 (1 seed) | 9.488 (1 seed) | n/a | 2.100 (1 seed) | "
        "+0.3000 (1 seed) | n/a | 5 → 5 (held) |");
  // References: yarn adds rope_scaling's lines (at 4096 its losses are 1.9, 2.0, 2.1); no rank.
  CHECK(row(md, "## Headline", "rope + yarn") ==
        "| rope + yarn | 3 | 6.360 | 6.360 (5.617–7.201) | 7.389 (5.764–9.473) | 200 | "
        "1.850 ± 0.124 | +0.0000 ± 0.0000 | 10,000 | n/a |");
  // theta = 10 is trained at B/4: Δ rope against RoPE's B/4 branches (at T0 1.80 + 0.28 and
  // 1.85 + 0.30), 2.00 - 2.08 and 2.10 - 2.15
  const std::string theta10 = row(md, "## Headline", "rope, theta = 10 (B/4)");
  CHECK(theta10.rfind("| rope, theta = 10 (B/4) | 2 | 7.768 |", 0) == 0);
  CHECK_THAT(theta10, Catch::Contains("| -0.0800, -0.0500 |"));
  CHECK(row(md, "## Headline", "rope, sliding window") ==
        "| rope, sliding window | 3 | 6.360 | 6.360 (5.617–7.201) | 6.360 (5.617–7.201) | 120 | "
        "1.850 ± 0.124 | +0.0000 ± 0.0000 | 10,000 | n/a |");
  // The n-gram of the main runs' corpus (pystdlib: 2.2), not of the corpus listed first in
  // ngram.csv: one number at every length; Δ rope against each RoPE seed (0.4, 0.35, 0.3).
  CHECK(row(md, "## Headline", "3-gram") ==
        "| 3-gram |  | 9.025 | 9.025 | 9.025 | n/a | 2.200 | +0.3500 ± 0.1242 | n/a | n/a |");
  CHECK(md.find("## What the numbers say") == std::string::npos);
}

TEST_CASE("the headline's second table: how much of its context each scheme uses", "[report]") {
  TempDir d;
  write_study(d);
  const std::string md = report_of(d);
  const std::string t2 = "How much of its context each scheme uses";
  CHECK(md.find(t2) > md.find("## Headline"));
  CHECK(md.find(t2) < md.find("## Setup"));
  // The copy distances nearest T0/4 = 64 and 4 T0 = 1024.
  CHECK(row(md, t2, "scheme") ==
        "| scheme | context > 32 | vs sliding past T0 | unseen [T0,4T0) − sliding | copy d=64 | "
        "copy d=1024 | unseen [T0,4T0) | unseen [8T0,16T0) | passkey 4× | passkey 16× |");
  // rope: loss_window32 − loss 0.32/0.34/0.36; loss − sliding over [256, 4096), width-weighted
  // (768 x 0.00 + 1024 x 0.15 + 2048 x 0.30) / 3840 + 0.01 x seed = 0.21/0.22/0.23; copy gain
  // 0.8/0.9/1.0 at 64 and 0.1/0.2/0.3 at 1024; unseen = loss at 4096 (2.3/2.4/2.5) + 0.1 / + 0.2;
  // passkey: seed 1 alone learned it (25% at 1024, 0% at 4096). Past T0 in the windows of
  // 1024: 0.1/0.2/0.3 above the sliding window, paired by seed.
  CHECK(row(md, t2, "rope") ==
        "| rope | +0.3400 ± 0.0497 | +0.2200 ± 0.0248 | +0.2000 ± 0.2484 | +0.9000 ± 0.2484 | "
        "+0.2000 ± 0.2484 | "
        "2.500 ± 0.248 | 2.600 ± 0.248 | 25.0% (L=1024; 1 of 2 seeds) | "
        "0.0% (L=4096; 1 of 2 seeds) |");
  // alibi: its 1024-wide buckets do not tile [256, 4096): n/a; one seed with copy rows; no
  // passkey seed in distribution, no passkey test near 16 x 256.
  CHECK(row(md, t2, "alibi") ==
        "| alibi | +0.1500, +0.1500 | n/a | n/a | +0.6000 (1 seed) | +0.5000 (1 seed) | 1.900, "
        "1.930 | "
        "2.000, 2.030 | n/a (L=1024; 0 of 1 seeds) | n/a (not tested near 4096) |");
  CHECK(row(md, t2, "none") ==
        "| none | +0.0500, +0.0500 | n/a | n/a | n/a | n/a | 2.400, 2.450 | 2.500, 2.550 | n/a | "
        "n/a |");
  // learned: no loss_window32 measured.
  CHECK(row(md, t2, "learned") ==
        "| learned | n/a | n/a | n/a | n/a | n/a | 3.100, 2.000 | 3.200, 2.100 | n/a | n/a |");
  // rope + yarn: its own position buckets, (768 x −0.3 + 2048 x −0.05) / 3840 = −0.0867 on every
  // seed, and its own unseen losses (1.9/2.0/2.1 + 0.05 / + 0.1); the probes are the plain runs'.
  CHECK(row(md, t2, "rope + yarn") ==
        "| rope + yarn | n/a | -0.0867 ± 0.0000 | n/a | n/a | n/a | 2.050 ± 0.248 | 2.100 ± "
        "0.248 | "
        "n/a | n/a |");
  // The six main schemes and rope + yarn, nothing else.
  const size_t a = md.find(t2), b = md.find("\n\n", md.find("| rope + yarn |", a));
  CHECK(md.substr(a, b - a).find("theta") == std::string::npos);
  CHECK(md.substr(a, b - a).find("gram |") == std::string::npos);
}

TEST_CASE("the budget curve over seeds, its ranks, and the learning-rate grid", "[report]") {
  TempDir d;
  write_study(d);
  const std::string md = report_of(d);
  const std::string t = "The budget curve";
  CHECK(
      row(md, t, "pe") ==
      "| pe | seeds | B/4 | B/2 | B | gain B/4→B/2 | gain B/2→B | converged | rank B/4, B/2, B |  "
      "|");
  // rope: B/4 2.08/2.15/2.22 (sd 0.07), B/2 = B + 0.03; the gains paired by seed: 0.25/0.27/0.29
  // (sd 0.02) and 0.03 on every seed: not converged; second at B/4, first after.
  CHECK(row(md, t, "rope") ==
        "| rope | 3 | 2.150 ± 0.174 | 1.880 ± 0.124 | 1.850 ± 0.124 | +0.2700 ± 0.0497 | "
        "+0.0300 ± 0.0000 | no | 2, 1, 1 | changes |");
  CHECK(row(md, t, "alibi") ==
        "| alibi | 2 | 2.000, 2.040 | 1.890, 1.930 | 1.880, 1.920 | +0.1100, +0.1100 | "
        "+0.0100, +0.0100 | yes | 1, 2, 2 | changes |");
  CHECK(row(md, t, "learned") ==
        "| learned | 2 | 2.250, 2.300 | 2.100, 2.150 | 2.050, 2.100 | +0.1500, +0.1500 | "
        "+0.0500, +0.0500 | no | 4, 4, 4 |  |");
  CHECK(row(md, t, "sinusoidal") ==
        "| sinusoidal | 1 | 2.200 (1 seed) | 2.010 (1 seed) | 2.000 (1 seed) | +0.1900 (1 seed) | "
        "+0.0100 (1 seed) | yes | 3, 3, 3 |  |");
  CHECK(row(md, t, "none").find("| yes | 6, 6, 6 |  |") != std::string::npos);
  CHECK(row(md, "The learning-rate grid", "pe") ==
        "| pe | batch | lr 0.001 | lr 0.003 | chosen lr |");
  CHECK(row(md, "The learning-rate grid", "rope") == "| rope | 16 | 2.400 | 2.300 | 0.003 |");
  // the attention distances: one cell per head, T0 → 4 T0; rope's layer 3 after its layer 0
  const std::string far = "How far back each head attends";
  CHECK(row(md, far, "pe") == "| pe | layer | head 0 | head 1 | uniform |");
  CHECK(md.find("at L = 256 → 1024 (attention_distance.csv)") != std::string::npos);
  CHECK(md.find("averaged over the queries of the first 4 val windows") != std::string::npos);
  CHECK(row(md, far, "rope") == "| rope | 0 | 3.25 → 3.25 | 3.25 → 3.25 | 63.8 → 256 |");
  const size_t l3 = md.find("| rope | 3 |", md.find(far));
  REQUIRE(l3 != std::string::npos);
  CHECK(md.substr(l3, md.find('\n', l3) - l3) ==
        "| rope | 3 | 3.25 → 3.25 | 3.25 → 90.5 | 63.8 → 256 |");
  {  // a third rate: the best at the grid's end is flagged, one inside it is not
    TempDir d3;
    write_study(d3);
    std::vector<TuningRow> tuning = read_rows<TuningRow>(d3.path + "/tuning.csv");
    tuning.push_back({"rope", 1e-2, 16, 200, 819200, 2.2, 30});
    write_rows(d3.path + "/tuning.csv", tuning);
    CHECK(row(report_of(d3), "The learning-rate grid", "rope") ==
          "| rope | 16 | 2.400 | 2.300 | 2.200 | 0.01 (grid's edge) |");
    tuning.back().val_loss = 2.35;
    write_rows(d3.path + "/tuning.csv", tuning);
    CHECK(row(report_of(d3), "The learning-rate grid", "rope") ==
          "| rope | 16 | 2.400 | 2.300 | 2.350 | 0.003 |");
  }

  // Only the seeds that hold all three budgets count: without rope_b2_s3, seed 3's main run
  // (1.90) and B/4 branch (2.22) leave the curve too.
  std::vector<RunRow> runs = read_rows<RunRow>(d.path + "/runs.csv");
  std::erase_if(runs, [](const RunRow& r) { return r.run == "rope_b2_s3"; });
  write_rows(d.path + "/runs.csv", runs);
  const std::string md2 = report_of(d);
  CHECK(row(md2, t, "rope") ==
        "| rope | 2 | 2.080, 2.150 | 1.830, 1.880 | 1.800, 1.850 | +0.2500, +0.2700 | "
        "+0.0300, +0.0300 | no | 2, 1, 1 | changes |");
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
  CHECK(row(md, "## Copy at a distance", "pe") == "| pe | d=64 | d=512 | d=1024 | d=2048 |");
  CHECK(row(md, "## Copy at a distance", "rope") ==
        "| rope | +0.9000 ± 0.2484 | +0.0500 ± 0.0000 | +0.2000 ± 0.2484 | +0.0500 ± 0.0000 |");
  CHECK(row(md, "## RoPE, frequency by frequency", "1") ==
        "| 1 | 62.83 | 0.2454 | -0.1000 ± 0.0000 |");
}

TEST_CASE("the break experiments and the ablations, read against the B/4 branches", "[report]") {
  TempDir d;
  write_study(d);
  const std::string md = report_of(d);
  // The order: breaks 1 and 4, 2, 3, then the ablations (embedding, T5's distance).
  const size_t breaks = md.find("## The seed text's break experiments\n"),
               b1 = md.find("### 1. No PE, and 4. 4096 unscaled\n"),
               b2 = md.find("### 2. No causal mask and no PE"),
               b3 = md.find("### 3. RoPE base theta\n"), ablations = md.find("\n## Ablations\n"),
               embedding = md.find("### The embedding convention swapped"),
               t5 = md.find("### T5 with max_distance = T0");
  REQUIRE(breaks != std::string::npos);
  CHECK(breaks < b1);
  CHECK(b1 < b2);
  CHECK(b2 < b3);
  CHECK(b3 < ablations);
  CHECK(ablations < embedding);
  CHECK(embedding < t5);
  CHECK(t5 != std::string::npos);
  // 1 and 4: the main none and rope runs (budget B) at every length.
  const std::string one = "### 1. No PE";
  CHECK(row(md, one, "main runs (B)") == "| main runs (B) | seeds | L=256 | L=1024 | L=4096 |");
  CHECK(row(md, one, "none") == "| none | 1, 2 | 9.974, 10.49 | 9.974, 10.49 | 9.974, 10.49 |");
  CHECK(row(md, one, "rope") ==
        "| rope | 1, 2, 3 | 6.360 (5.617–7.201) | 7.768 (6.861–8.795) | 11.02 (8.598–14.13) |");
  // 2: the masked LM.
  CHECK(row(md, "### 2. No causal mask", "none") ==
        "| none | 2 | 2.500, 2.600 | 2e-6 | 1: 1e-6, 2: 2e-6 |");
  CHECK(row(md, "### 2. No causal mask", "rope") ==
        "| rope | 2 | 2.200, 2.300 | 0.4000 | 1: 0.3000, 2: 0.4000 |");
  // 3: theta 10 and 1e6 against RoPE's B/4 branches of the same seeds (1, 2): 2.08/2.15,
  // 2.28/2.35, 2.58/2.70; not the main runs (1.80/1.85 at 256).
  const std::string three = "### 3. RoPE base theta";
  CHECK(row(md, three, "10") == "| 10 | 1, 2 | 7.389, 8.166 | 8.166, 9.025 | 9.025, 9.974 |");
  CHECK(row(md, three, "10000 (B/4 branches, same seeds)") ==
        "| 10000 (B/4 branches, same seeds) | 1, 2 | 8.004, 8.585 | 9.777, 10.49 | 13.20, 14.88 |");
  CHECK(row(md, three, "1e6") == "| 1e6 | 1 | 6.360 (1 seed) | 6.686 (1 seed) | 7.389 (1 seed) |");
  // The embedding swap against learned's B/4 branches (its losses + 0.20 at every length).
  CHECK(row(md, "### The embedding convention", "learned, gpt2 (B/4 branch)") ==
        "| learned, gpt2 (B/4 branch) | 1, 2 | 9.488, 9.974 | 14.88, 9.025 | 24.53, 8.166 |");
  CHECK(row(md, "### The embedding convention", "learned, scaled") ==
        "| learned, scaled | 1, 2 | 12.18, 13.46 | 14.88, 16.44 | 18.17, 20.09 |");
  // T5's max distance against t5's B/4 branch (2.30, 2.35, 2.45).
  CHECK(row(md, "### T5 with max_distance", "B/4 branch") ==
        "| B/4 branch | 1 | 9.974 (1 seed) | 10.49 (1 seed) | 11.59 (1 seed) |");
  CHECK(row(md, "### T5 with max_distance", "max_distance = T0") ==
        "| max_distance = T0 | 1 | 7.389 (1 seed) | 8.166 (1 seed) | 9.025 (1 seed) |");
}

TEST_CASE("tasks", "[report]") {
  TempDir d;
  write_study(d);
  const std::string md = report_of(d);
  // Every seed on its own; reverse with its character accuracy; unscramble by k.
  CHECK(row(md, "Task `reverse`", "pe") == "| pe | seed | 24 | 48† |");
  CHECK(row(md, "Task `reverse`", "rope") ==
        "| rope | 1 | 99.0% (95.0–100); chars 99.5% | 90.0% (85.0–94.0); chars 97.0% |");
  CHECK(row(md, "Task `unscramble`", "pe") == "| pe | seed | k=8† |");
  CHECK(row(md, "Task `passkey`", "alibi") ==
        "| alibi | 1 | 0.5 | n/a | 90.0% (70.0–97.0) | n/a |");
  CHECK(row(md, "Seeds that learned each task", "rope") == "| rope | 1 of 2 | 0 of 1 | 1 of 2 |");
}

TEST_CASE("setup: the corpus, the machines and invocations, the val windows", "[report]") {
  TempDir d;
  write_study(d);
  const std::string md = report_of(d);
  CHECK(row(md, "## Setup", "corpus") ==
        "| corpus | pystdlib: 171 files, 4,742,544 bytes prepared, SHA-256 `0781466e`, from "
        "libpython3.11-minimal 3.11.2-6; libpython3.11-stdlib 3.11.2-6; val: 17 whole files, "
        "481,148 bytes as installed |");
  // 39 runs: 11 main runs, 22 branches, 6 at B/4; t5's 3 say nothing, rope seed 3's 3 were made
  // on the big machine by the second invocation, the 6 ablations by the third.
  CHECK(row(md, "## Setup", "runs in runs.csv") == "| runs in runs.csv | 39 |");
  CHECK(row(md, "## Setup", "machines that made the runs") ==
        "| machines that made the runs | 3: Big CPU (avx2 fma avx512f) (3 runs), Test CPU (avx2 "
        "fma) (33 runs), not recorded (3 runs) |");
  CHECK(row(md, "## Setup", "invocations (start, UTC) that made the runs") ==
        "| invocations (start, UTC) that made the runs | 4: 2026-01-01T00:00Z (27 runs), "
        "2026-01-02T00:00Z (3 runs), 2026-01-03T00:00Z (6 runs), not recorded (3 runs) |");
  // The main runs' windows (not the branches' 7 or the scalings' 10) and their largest standard
  // error, rope seed 3's 0.01 + 0.01 k + 0.003 (not the branches' 0.5 or the scalings' 0.9).
  const std::string windows =
      "val windows per length, every main run (the largest standard error of a main run's loss "
      "over its windows, nats)";
  CHECK(row(md, "## Setup", windows) == "| " + windows +
                                            " | 256: 40 (SE ≤ 0.013), 1024: 20 (SE ≤ 0.023), "
                                            "4096: 10 (SE ≤ 0.033) |");
  CHECK(row(md, "## Setup", "schemes (main runs)") ==
        "| schemes (main runs) | none, learned, sinusoidal, rope, alibi, t5 |");
}

TEST_CASE("cost: compute time with the evaluations, throughput per invocation", "[report]") {
  TempDir d;
  write_study(d);
  const std::string md = report_of(d);
  const std::string timing = "Compute time of the study";
  CHECK(row(md, timing, "train") == "| train | 2 | 3 min 30 s (210 s) | 84.0% |");
  CHECK(row(md, timing, "evaluation (eval + probe)") ==
        "| evaluation (eval + probe) | 2 | 35.0 s | 14.0% |");
  CHECK(row(md, timing, "**total**") == "| **total** | 5 | 4 min 10 s (250 s) | 100.0% |");
  const std::string t = "Training throughput (tokens/s) per invocation";
  CHECK(row(md, t, "invocation (UTC)") ==
        "| invocation (UTC) | machine | cores | load | jobs | one run, all cores | "
        "runs at once, summed | main runs | study, summed | of measured |");
  // The first: rope_s1, rope_s2, none_s1, none_s2 at 1000, 1100, 1200, 1300 tokens/s (not
  // rope_b4_s1's 9000), mean 1150 x 2 jobs = 2300, of the faster 2500: 92%.
  CHECK(row(md, t, kFirst) ==
        "| 2026-01-01T00:00Z | Test CPU (avx2 fma) | 2 | 0.15 | 2 | 2,000 | 2,500 | 4 | 2,300 | "
        "92.0% |");
  // The second: rope_s3 at 4000 x 1 job, of the faster 5000: 80%.
  CHECK(row(md, t, kSecond) ==
        "| 2026-01-02T00:00Z | Big CPU (avx2 fma avx512f) | 16 | 1.5 | 1 | 5,000 | 3,000 | 1 | "
        "4,000 | 80.0% |");
  // The raw data links both files of the setup and cost sections.
  CHECK(md.find("- [corpus.csv](corpus.csv)\n") != std::string::npos);
  CHECK(md.find("- [throughput.csv](throughput.csv)\n") != std::string::npos);
  // The second again, as if it had made two runs at once: its one main run's rate times 2
  // would claim 8,000 tokens/s for cores that trained something else or nothing.
  std::vector<ThroughputRow> two_jobs = throughput_rows();
  two_jobs[1].jobs = 2;
  write_rows<ThroughputRow>(d.path + "/throughput.csv", two_jobs);
  CHECK(row(report_of(d), t, kSecond) ==
        "| 2026-01-02T00:00Z | Big CPU (avx2 fma avx512f) | 16 | 1.5 | 2 | 5,000 | 3,000 | 1 | "
        "n/a | n/a |");
  // The third made no main run and read no load average.
  CHECK(
      row(md, t, kThird) ==
      "| 2026-01-03T00:00Z | Test CPU (avx2 fma) | 2 | n/a | 1 | 2,100 | 1,900 | 0 | n/a | n/a |");
}

TEST_CASE("parts of the plan: the parts of the plan and their rows", "[report]") {
  TempDir d;
  write_study(d);
  const std::string md = report_of(d);
  const std::string t = "## Parts of the plan: what is done";
  CHECK(md.find("## What was cut") == std::string::npos);
  CHECK(row(md, t, "main runs <pe>_s<seed>") == "| main runs <pe>_s<seed> | runs.csv | 11 |  |");
  CHECK(row(md, t, "budget curve (branches) <pe>_b4_s<seed>, <pe>_b2_s<seed>") ==
        "| budget curve (branches) <pe>_b4_s<seed>, <pe>_b2_s<seed> | runs.csv | 22 |  |");
  CHECK(row(md, t, "masked LM (break 2)") == "| masked LM (break 2) | mlm.csv | 4 |  |");
  CHECK(row(md, t, "theta ablation rope_theta*") ==
        "| theta ablation rope_theta* | runs.csv | 3 |  |");
  CHECK(row(md, t, "embedding swapped <pe>_<embedding>") ==
        "| embedding swapped <pe>_<embedding> | runs.csv | 2 |  |");
  CHECK(row(md, t, "t5 max_distance = T0 t5_dist*") ==
        "| t5 max_distance = T0 t5_dist* | runs.csv | 1 |  |");
  CHECK(row(md, t, "fine-tune at 4 T0: RoPE linear rope_pi*") ==
        "| fine-tune at 4 T0: RoPE linear rope_pi* | runs.csv | 0 | **not in the results** |");
  CHECK(md.find("not in the results yet: `make experiments` continues them") != std::string::npos);
  CHECK(md.find("Every part of the plan is in the results.") == std::string::npos);
  // kjv, the long-range corpus of v3, is gone: no section, no row, no figure.
  CHECK(md.find("kjv") == std::string::npos);
}
