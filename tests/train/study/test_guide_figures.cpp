// `poslab figure`: the formulas behind the guide's figures, and the command.
#include <catch2/catch.hpp>
#include <cmath>
#include <complex>
#include <filesystem>

#include "data/atomic_file.h"
#include "posenc/rope_scaling.h"
#include "tests/support/temp_dir.h"
#include "train/study/guide_figures.h"

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
  for (int64_t i = 0; i < D / 2; ++i) {
    INFO("pair " << i);
    REQUIRE(plain[i] == Approx(2 * M_PI * std::pow(theta, 2.0 * i / D)));
    REQUIRE(linear[i] == Approx(s * plain[i]));  // p / s: every wavelength times s
    // yarn lies between plain and linear; at T0 = 64 every pair turns < 32 times in T0, so no
    // pair is left as trained
    REQUIRE(yarn[i] > plain[i] * (1 + 1e-9));
    REQUIRE(yarn[i] <= linear[i] * (1 + 1e-12));
  }
  // NTK changes the base: the first pair keeps its wavelength, the last is stretched by s
  REQUIRE(ntk.front() == Approx(plain.front()));
  REQUIRE(ntk.back() == Approx(s * plain.back()).epsilon(1e-12));
  REQUIRE_THROWS_WITH(rope_wavelengths(D, theta, ScalingKind::dynamic, s, T0), Contains("dynamic"));
}

TEST_CASE("figure: ALiBi's lines and the SVGs", "[figure]") {
  FigureOptions o;
  LinePlot p = alibi_bias_figure(o);
  REQUIRE(p.series.size() == 4);
  REQUIRE(p.series[0].label.rfind("head 0, m = 1/4: weight halves every 2.77", 0) == 0);
  REQUIRE(p.series[3].label.rfind("head 3, m = 1/256", 0) == 0);
  REQUIRE(p.series[1].y.at(64) == Approx(-64.0 / 16));
  REQUIRE(alibi_slope_text(0.3) == "0.3");
  for (const char* name : {"rope-decay", "rope-scaling", "alibi-bias"}) {
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
