// `poslab figure`: the formulas behind the guide's figures, and the command.
#include <catch2/catch.hpp>
#include <cmath>
#include <complex>
#include <filesystem>
#include <tuple>

#include "cli/guide_figures.h"
#include "data/atomic_file.h"
#include "posenc/alibi.h"
#include "posenc/rope_scaling.h"
#include "tests/support/temp_dir.h"

using namespace poslab;
using Catch::Contains;

static int figure(std::vector<std::string> args) {
  std::vector<char*> argv;
  for (std::string& a : args) argv.push_back(a.data());
  return cmd_figure(static_cast<int>(argv.size()), argv.data());
}

TEST_CASE("figure: RoPE's decay bound is (D/2 + 1)/2 at distance 0 and never above it",
          "[figure]") {
  for (const int64_t D : {2, 16, 32, 128}) {
    INFO("D = " << D);
    // every S_j = j at r = 0: (1/(D/2)) (1 + 2 + ... + D/2)
    REQUIRE(rope_decay_bound(D, 10000, 0) == Approx((D / 2 + 1) / 2.0).epsilon(1e-12));
    for (const double r : {1.0, 7.0, 100.0, 4096.0})
      REQUIRE(rope_decay_bound(D, 10000, r) <= (D / 2 + 1) / 2.0 + 1e-12);
  }
  // Written out for D = 4, r = 1: w = (1, 1/100); S_1 = e^{i}, S_2 = e^{i} + e^{i/100}.
  const std::complex<double> s1 = std::polar(1.0, 1.0), s2 = s1 + std::polar(1.0, 0.01);
  REQUIRE(rope_decay_bound(4, 10000, 1) == Approx((std::abs(s1) + std::abs(s2)) / 2));
  // It decays: far from the query the bound is well below its value at 1 (theta = 10000).
  double far = 0;
  for (int r = 1000; r < 1100; ++r) far += rope_decay_bound(32, 10000, r) / 100;
  REQUIRE(far < 0.5 * rope_decay_bound(32, 10000, 1));
}

TEST_CASE("figure: wavelengths per pair under each RoPE scaling", "[figure]") {
  const int64_t D = 16, T0 = 64;
  const double s = 4, theta = 10000;
  const auto plain = rope_wavelengths(D, theta, ScalingKind::none, s, T0);
  const auto linear = rope_wavelengths(D, theta, ScalingKind::linear, s, T0);
  const auto ntk = rope_wavelengths(D, theta, ScalingKind::ntk, s, T0);
  const auto yarn = rope_wavelengths(D, theta, ScalingKind::yarn, s, T0);
  REQUIRE(plain.size() == D / 2);
  const auto keep = yarn_keep(D, theta, T0);
  for (int64_t i = 0; i < D / 2; ++i) {
    INFO("pair " << i);
    REQUIRE(plain[i] == Approx(2 * M_PI * std::pow(theta, 2.0 * i / D)));
    REQUIRE(linear[i] == Approx(s * plain[i]));  // p / s: every wavelength times s
    // yarn lies between plain and linear: keep_i of the frequency as trained, the rest / s
    REQUIRE(yarn[i] >= plain[i] * (1 - 1e-12));
    REQUIRE(yarn[i] <= linear[i] * (1 + 1e-12));
    REQUIRE(2 * M_PI / yarn[i] ==
            Approx(keep[i] * 2 * M_PI / plain[i] + (1 - keep[i]) * 2 * M_PI / linear[i]));
  }
  // At D = 16, T0 = 64 the deployed ramp runs from floor(d(32)) = 0 to ceil(d(1)) = 3: pair 0
  // is kept as trained, pairs 1 and 2 partly, pairs 3.. are divided by s as linear does.
  REQUIRE(yarn[0] == Approx(plain[0]));
  REQUIRE(yarn[1] > plain[1] * (1 + 1e-9));
  REQUIRE(yarn[3] == Approx(linear[3]));
  // NTK changes the base: the first pair keeps its wavelength, the last is stretched by s
  REQUIRE(ntk.front() == Approx(plain.front()));
  REQUIRE(ntk.back() == Approx(s * plain.back()).epsilon(1e-12));
  REQUIRE_THROWS_WITH(rope_wavelengths(D, theta, ScalingKind::dynamic, s, T0), Contains("dynamic"));
}

TEST_CASE("figure: the angle overshoot of each scaling, s^(1 - 2i/(D-2)) for ntk", "[figure]") {
  for (const auto& [D, T0, s] : {std::tuple<int64_t, int64_t, double>{16, 64, 4}, {32, 256, 16}}) {
    INFO("D = " << D << ", T0 = " << T0 << ", s = " << s);
    const auto linear = rope_angle_overshoot(D, 10000, ScalingKind::linear, s, T0);
    const auto ntk = rope_angle_overshoot(D, 10000, ScalingKind::ntk, s, T0);
    const auto yarn = rope_angle_overshoot(D, 10000, ScalingKind::yarn, s, T0);
    const auto keep = yarn_keep(D, 10000, T0);
    for (int64_t i = 0; i < D / 2; ++i) {
      INFO("pair " << i);
      REQUIRE(linear[i] == Approx(1));  // p / s over s T0: the angles of p over T0
      REQUIRE(ntk[i] == Approx(std::pow(s, 1 - 2.0 * i / (D - 2))));
      REQUIRE(yarn[i] == Approx(s * keep[i] + 1 - keep[i]));
    }
    REQUIRE(ntk.back() == Approx(1));   // NTK divides the last pair by exactly s
    REQUIRE(yarn.back() == Approx(1));  // YaRN's slow pairs: as linear
  }
  // the guide's two examples: demo pair 3 (D 16, s 4) and study pair 7 (D 32, s 16)
  REQUIRE(rope_angle_overshoot(16, 10000, ScalingKind::ntk, 4, 64)[3] ==
          Approx(2.21).epsilon(1e-3));
  REQUIRE(rope_angle_overshoot(32, 10000, ScalingKind::ntk, 16, 256)[7] ==
          Approx(4.39).epsilon(1e-3));
  REQUIRE_THROWS_WITH(rope_angle_overshoot(16, 10000, ScalingKind::dynamic, 4, 64),
                      Contains("dynamic"));
}

TEST_CASE("figure: YaRN's two ramps at the study's heads (D 32, T0 256), by hand", "[figure]") {
  // deployed: floor(d(32)) = 0, ceil(d(1)) = 7, keep_i = 1 - i/7 up to pair 7; paper:
  // gamma_i = (r_i - 1)/31 with r_i = 256 * 10000^(-i/16) / (2 pi)
  const auto deployed = yarn_keep(32, 10000, 256), paper = yarn_keep_paper(32, 10000, 256);
  const double paper_by_hand[] = {1, 0.707, 0.383, 0.201, 0.099, 0.042, 0.009, 0};
  for (int i = 0; i < 8; ++i) {
    INFO("pair " << i);
    REQUIRE(deployed[i] == Approx(1 - i / 7.0));
    REQUIRE(paper[i] == Approx(paper_by_hand[i]).margin(5e-4));
  }
  for (int i = 8; i < 16; ++i) REQUIRE((deployed[i] == 0 && paper[i] == 0));
  FigureOptions o;
  o.head_dim = 32, o.train_len = 256;
  const GuideFigure fig = make_guide_figure("yarn-ramp", o);
  REQUIRE_THAT(fig.table, Contains("    1    22.912     0.857    0.707"));
  REQUIRE(fig.svg.find("linear in r_i") != std::string::npos);
}

TEST_CASE("figure: ngram prints the references of a prepared corpus", "[figure]") {
  test::TempDir dir;
  // a corpus of two symbols: train "abababab", val "abab" (train/study/ngram.h's test has the
  // numbers by hand; here the command's table and figure)
  std::filesystem::create_directories(dir.file("d"));
  write_file_atomic(dir.file("d/vocab.json"), "[\"a\", \"b\"]");
  auto write_ids = [](const std::string& path, std::vector<uint16_t> ids) {
    write_file_atomic(path, std::string(reinterpret_cast<const char*>(ids.data()), 2 * ids.size()));
  };
  write_ids(dir.file("d/train.bin"), {0, 1, 0, 1, 0, 1, 0, 1, 0, 1, 0, 1});
  write_ids(dir.file("d/val.bin"), {0, 1, 0, 1, 0, 1});
  FigureOptions o;
  o.data_dir = dir.file("d");
  const GuideFigure fig = make_guide_figure("ngram", o);
  REQUIRE_THAT(fig.table, Contains("  n = 1  k = ") && Contains("  n = 5  k = "));
  REQUIRE_THAT(fig.table, Contains("val loss 0.6931 nats"));  // n = 1: a fair coin, ln 2
  REQUIRE(fig.svg.find("</svg>") != std::string::npos);
  REQUIRE_THROWS_WITH(make_guide_figure("ngram", FigureOptions{}), Contains("--data"));
}

TEST_CASE("figure: ALiBi's lines and the SVGs", "[figure]") {
  FigureOptions o;
  LinePlot p = alibi_bias_figure(o);
  REQUIRE(p.series.size() == 4);
  REQUIRE(p.series[0].label.rfind("head 0, m = 1/4: weight halves every 2.77", 0) == 0);
  REQUIRE(p.series[3].label.rfind("head 3, m = 1/256", 0) == 0);
  REQUIRE(p.series[1].y.at(64) == Approx(-64.0 / 16));
  REQUIRE(alibi_slope_text(0.3) == "0.3");
  for (const char* name : {"rope-decay", "rope-scaling", "yarn-ramp", "alibi-bias"}) {
    const std::string svg = render_guide_figure(name, o);
    REQUIRE(svg.rfind("<?xml", 0) == 0);
    REQUIRE(svg.find("</svg>") != std::string::npos);
  }
  REQUIRE_THROWS_WITH(render_guide_figure("rope", o),
                      Contains("unknown figure 'rope'") && Contains("rope-decay"));
}

TEST_CASE("figure: the command writes the SVG where --out says, and refuses bad input",
          "[figure][errors]") {
  test::TempDir dir;
  const std::string out = dir.file("docs/fig/decay.svg");
  REQUIRE(figure({"rope-decay", "--head-dim", "32", "--out", out}) == 0);
  const std::string svg = read_file(out);
  REQUIRE(svg.find("D = 32") != std::string::npos);
  REQUIRE(svg.find("at distance 0: (D/2 + 1)/2 = 8.5") != std::string::npos);
  REQUIRE_THROWS_WITH(figure({"--out", out}), Contains("expected a NAME"));
  REQUIRE_THROWS_WITH(figure({"rope-scaling", "--head-dim", "15"}), Contains("even D"));
  REQUIRE_THROWS_WITH(figure({"nope", "--out", dir.file("x.svg")}), Contains("unknown figure"));
  REQUIRE_FALSE(std::filesystem::exists(dir.file("x.svg")));
}
