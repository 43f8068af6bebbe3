// `poslab figure`: the formulas behind the guide's figures, and the command.
#include <algorithm>
#include <catch2/catch.hpp>
#include <cctype>
#include <cmath>
#include <complex>
#include <cstring>
#include <filesystem>
#include <set>
#include <sstream>
#include <tuple>

#include "cli/guide_figures.h"
#include "cli/guide_figures_v5.h"
#include "data/atomic_file.h"
#include "posenc/alibi.h"
#include "posenc/rope_scaling.h"
#include "tests/support/svg_text.h"
#include "tests/support/temp_dir.h"
#include "train/attend.h"

using namespace poslab;
using Catch::Contains;
using poslab::test::svg_texts;

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
  // a corpus of two symbols: train "abababab", val "abab" (study/ngram.h's test has the
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

// ---------------------------------------------------------------- the Chinese figures, legibility

// Whether s holds a Chinese character (CJK Unified Ideographs, U+4E00..U+9FFF: three UTF-8
// bytes, the first E4..E9).
static bool has_han(const std::string& s) {
  for (const char c : s)
    if (static_cast<unsigned char>(c) >= 0xE4 && static_cast<unsigned char>(c) <= 0xE9) return true;
  return false;
}

// The English words of the figures' titles, axes, legends and notes that a Chinese figure must
// not keep (names such as RoPE, linear or query stay: the guide writes them in Chinese too).
static std::string english_word_in(const std::string& text) {
  static const char* const kWords[] = {"pair",  "distance", "wavelength", "head",      "layer",
                                       "share", "bias",     "bound",      "angle",     "kept",
                                       "turns", "weight",   "relative",   "positions", "attention",
                                       "rows",  "columns",  "chosen",     "loss",      "every"};
  std::string lower = text;
  for (char& c : lower) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  for (const char* w : kWords) {
    for (size_t at = lower.find(w); at != std::string::npos; at = lower.find(w, at + 1)) {
      const size_t end = at + std::strlen(w);
      const bool starts = at == 0 || !std::isalpha(static_cast<unsigned char>(lower[at - 1]));
      const bool ends = end == lower.size() ||
                        !std::isalpha(static_cast<unsigned char>(lower[end])) || lower[end] == 's';
      if (starts && ends) return w;
    }
  }
  return "";
}

// The smallest font size (px) any <text> of the SVG is drawn at: its classes' sizes in the
// stylesheet (the last that sets one wins, as in CSS), the size of `text` without one, and the
// exponents' size where a <tspan class="exp"> is used and `exponents` says to count them.
static double smallest_font(const std::string& svg, bool exponents = true) {
  const auto size_of = [&](const std::string& selector) -> double {
    const size_t at = svg.find(selector + " {");
    if (at == std::string::npos || at > svg.find("</style>")) return 0;
    const size_t f = svg.find("font-size: ", at);
    if (f > svg.find('}', at)) return 0;
    return std::stod(svg.substr(f + 11));
  };
  const double base = size_of("text");
  double smallest = INFINITY;
  for (size_t at = svg.find("<text"); at != std::string::npos; at = svg.find("<text", at + 1)) {
    double size = base;
    const size_t cls = svg.find(" class=\"", at), close = svg.find('>', at);
    if (cls < close) {
      std::istringstream names(svg.substr(cls + 8, svg.find('"', cls + 8) - cls - 8));
      for (std::string c; names >> c;)
        if (const double s = size_of("." + c); s > 0) size = s;
    }
    smallest = std::min(smallest, size);
  }
  if (exponents && svg.find("<tspan class=\"exp\"") != std::string::npos)
    smallest = std::min(smallest, size_of(".exp"));
  return smallest;
}

static double root_width(const std::string& svg) {
  const size_t at = svg.find(" width=\"", svg.find("<svg"));
  return std::stod(svg.substr(at + 8));
}

// GitHub shows an image at most kReadableWidth (830) px wide: an SVG of width w > 830 is scaled
// by 830 / w, its text with it. The smallest text must still read as 11 px; a raised exponent
// (b^(-2i/D), 8 px) is smaller by design, like a superscript in print, and is not counted.
static void require_legible(const std::string& svg) {
  const double w = root_width(svg), f = smallest_font(svg, /*exponents=*/false);
  INFO("width " << w << ", smallest font " << f << " px");
  REQUIRE(f * std::min(1.0, kReadableWidth / w) >= 11);
}

// a == b, NaN (a pair that never turns: a gap in the curve) equal to NaN.
static bool same_values(const std::vector<double>& a, const std::vector<double>& b) {
  return std::equal(a.begin(), a.end(), b.begin(), b.end(),
                    [](double x, double y) { return x == y || (std::isnan(x) && std::isnan(y)); });
}

static FigureOptions study_heads(Lang lang) {
  FigureOptions o;
  o.head_dim = 32, o.train_len = 256, o.lang = lang;
  return o;
}

const char* const kFormulaFigures[] = {"rope-decay",    "rope-scaling", "yarn-ramp",  "alibi-bias",
                                       "kerple-kernel", "prope-pairs",  "xpos-decay", "rope-ramps"};

TEST_CASE("figure --lang zh: the same curves, every word in Chinese", "[figure][zh]") {
  for (const char* name : kFormulaFigures) {
    INFO(name);
    const std::string en = render_guide_figure(name, study_heads(Lang::en));
    const std::string zh = render_guide_figure(name, study_heads(Lang::zh));
    require_legible(en);
    require_legible(zh);
    for (const std::string& t : svg_texts(zh)) {
      INFO("text: " << t);
      REQUIRE(english_word_in(t) == "");
    }
    bool any_english = false;  // the check above finds the English figure's words
    for (const std::string& t : svg_texts(en)) any_english |= english_word_in(t) != "";
    REQUIRE(any_english);
  }
  // Same code, same numbers: each line plot's curves in both languages. Its title and both axes
  // are Chinese in the Chinese one.
  const auto plots = [](Lang l) {
    const FigureOptions o = study_heads(l);
    return std::vector<LinePlot>{
        rope_decay_figure(o),  rope_scaling_figure(o), rope_overshoot_figure(o),
        yarn_ramp_figure(o),   alibi_bias_figure(o),   kerple_kernel_figure(l),
        prope_pairs_figure(o), xpos_decay_figure(o),   rope_ramps_figure(o)};
  };
  const std::vector<LinePlot> en = plots(Lang::en), zh = plots(Lang::zh);
  for (size_t k = 0; k < zh.size(); ++k) {
    const LinePlot& p = zh[k];
    INFO(p.title << " | " << p.xlabel << " | " << p.ylabel);
    REQUIRE(p.series.size() == en[k].series.size());
    for (size_t s = 0; s < p.series.size(); ++s) {
      REQUIRE((same_values(p.series[s].x, en[k].series[s].x) &&
               same_values(p.series[s].y, en[k].series[s].y)));
      REQUIRE(p.series[s].color == en[k].series[s].color);
    }
    REQUIRE((has_han(p.title) && has_han(p.xlabel)));
    REQUIRE((has_han(p.ylabel) || p.ylabel == "ζ_i^(Δ/512)"));  // xPos's axis is its formula
  }
  // the guide's symbols: b for the base, U_i for the partial sums, Δ for the distance
  const std::string decay = render_guide_figure("rope-decay", study_heads(Lang::zh));
  for (const char* s : {">相对距离 Δ = m − n<", ">b = 10000<", "相对上界 (1/(D/2)) Σ_i |U_i|"})
    REQUIRE_THAT(decay, Contains(s));
  FigureOptions demo;  // the demo's sizes, as the guide draws alibi-bias
  demo.lang = Lang::zh;
  REQUIRE_THAT(render_guide_figure("alibi-bias", demo),
               Contains(">头 0，m_h = 1/4：半衰距离 2.77<"));
}

TEST_CASE("figure --lang zh writes NAME.zh.svg; a bad --lang is refused", "[figure][zh]") {
  test::TempDir dir;
  const std::filesystem::path cwd = std::filesystem::current_path();
  std::filesystem::current_path(dir.file(""));
  const int rc = figure({"yarn-ramp", "--lang", "zh"});
  std::filesystem::current_path(cwd);
  REQUIRE(rc == 0);
  REQUIRE_THAT(read_file(dir.file("yarn-ramp.zh.svg")), Contains("论文版：随 r_i 线性变化"));
  REQUIRE_FALSE(std::filesystem::exists(dir.file("yarn-ramp.svg")));
  REQUIRE_THROWS_WITH(figure({"yarn-ramp", "--lang", "fr", "--out", dir.file("x.svg")}),
                      Contains("--lang: expected en or zh, but got 'fr'"));
}

// An attention map of T tokens, 2 layers x 4 heads, each row spread evenly over its keys.
static AttentionMaps even_maps(const std::vector<std::string>& tokens, bool causal) {
  AttentionMaps m;
  m.tokens = tokens, m.layers = 2, m.heads = 4, m.causal = causal;
  for (size_t i = 0; i < tokens.size(); ++i) m.ids.push_back(static_cast<int32_t>(i));
  for (const std::string& t : tokens) m.text += t;
  const int64_t T = m.size();
  for (int64_t k = 0; k < m.layers * m.heads; ++k)
    for (int64_t i = 0; i < T; ++i)
      for (int64_t j = 0; j < T; ++j)
        m.p.push_back(causal ? (j <= i ? 1.0 / (i + 1) : 0.0) : 1.0 / T);
  return m;
}

// How many columns of panels: the distinct x offsets of the panels' <g transform>.
static size_t panel_columns(const std::string& svg) {
  std::set<std::string> xs;
  for (size_t at = svg.find("translate("); at != std::string::npos;
       at = svg.find("translate(", at + 1))
    xs.insert(svg.substr(at + 10, svg.find(',', at) - at - 10));
  return xs.size();
}

TEST_CASE("attention figures: 11 px text at GitHub's width, in both languages",
          "[figure][attend]") {
  const std::vector<std::string> heads = {"head 0", "head 1", "head 2", "head 3"};
  const std::vector<std::string> heads_zh = {"头 0", "头 1", "头 2", "头 3"};
  const AttentionMaps a = even_maps({"我", "送", "君"}, false),
                      b = even_maps({"君", "送", "我"}, false);
  const AttentionMaps poem =
      even_maps({"床", "前", "明", "月", "光", "，", "疑", "是", "地", "上", "霜", "。"}, true);
  for (const Lang lang : {Lang::en, Lang::zh}) {
    const auto& h = lang == Lang::zh ? heads_zh : heads;
    const std::string pair = attention_svg({a, b}, "t", h, lang);
    const std::string line = attention_svg({poem}, "t", h, lang);
    require_legible(pair);
    require_legible(line);
    REQUIRE(panel_columns(pair) == 4);  // three characters: a layer's heads in one row
    REQUIRE(panel_columns(line) == 2);  // a line of a poem: two heads a row, cells of 18+ px
    if (lang == Lang::zh)
      for (const std::string& svg : {pair, line})
        for (const std::string& t : svg_texts(svg)) REQUIRE(english_word_in(t) == "");
  }
  const std::string zh = attention_svg({a, b}, "t", heads_zh, Lang::zh);
  for (const char* s : {">A 第 0 层 头 0<", ">|A-B| 第 1 层 头 3<", "行是 query，列是 key",
                        "B 按 A 的字符顺序画出"})
    REQUIRE_THAT(zh, Contains(s));
  // what the rule rests on: the tick labels at 11 px, in a figure no wider than GitHub shows
  REQUIRE(smallest_font(zh) == 11);
  REQUIRE(root_width(zh) <= kReadableWidth);
}

// ---------------------------------------------------------------- the committed figures

static std::string source_file(const std::string& path) {
  return read_file(std::string(POSLAB_SOURCE_DIR) + "/" + path);
}

// The figures a guide shows from docs/guide/: the NAME of every "](guide/NAME)".
static std::vector<std::string> guide_figures(const std::string& guide) {
  std::vector<std::string> names;
  const std::string md = source_file(guide);
  for (size_t at = md.find("](guide/"); at != std::string::npos; at = md.find("](guide/", at + 1))
    names.push_back(md.substr(at + 8, md.find(')', at) - at - 8));
  return names;
}

TEST_CASE("the guides' figures: Chinese in the Chinese guide, 11 px text at GitHub's width",
          "[figure][docs]") {
  const std::vector<std::string> zh = guide_figures("docs/guide.zh.md");
  const std::vector<std::string> en = guide_figures("docs/guide.md");
  REQUIRE(zh.size() >= 13);
  for (const std::string& name : zh) {
    INFO("docs/guide.zh.md shows guide/" << name);
    REQUIRE(name.size() > 7);
    REQUIRE(name.substr(name.size() - 7) == ".zh.svg");
    const std::string svg = source_file("docs/guide/" + name);
    bool chinese = false;
    for (const std::string& t : svg_texts(svg)) {
      INFO("text: " << t);
      REQUIRE(english_word_in(t) == "");
      chinese |= has_han(t);
    }
    REQUIRE(chinese);
    // its English twin, which the English guide shows in the same place
    const std::string twin = name.substr(0, name.size() - 7) + ".svg";
    REQUIRE(std::find(en.begin(), en.end(), twin) != en.end());
    require_legible(svg);
    require_legible(source_file("docs/guide/" + twin));
  }
  REQUIRE(en.size() == zh.size());
}

// Where two drawings of one figure differ, or "" where they do not: the same text, and every
// number within a unit of its last printed digit. The committed figures come from the native
// build; a build without FMA (the sanitizers', plain x86-64) rounds a few coordinates the
// other way, and that is not a stale figure.
static std::string drawing_difference(const std::string& a, const std::string& b) {
  auto number_at = [](const std::string& s, size_t p) {
    auto digit = [&](size_t q) { return q < s.size() && std::isdigit((unsigned char)s[q]); };
    return digit(p) || ((s[p] == '-' || s[p] == '.') && digit(p + 1));
  };
  size_t i = 0, j = 0;
  while (i < a.size() && j < b.size()) {
    if (number_at(a, i) && number_at(b, j)) {
      size_t ni = 0, nj = 0;
      const double x = std::stod(a.substr(i, 32), &ni), y = std::stod(b.substr(j, 32), &nj);
      const size_t dot = a.substr(i, ni).find('.');
      const double unit = dot == std::string::npos ? 1 : std::pow(10.0, -double(ni - dot - 1));
      if (std::abs(x - y) > 1.01 * unit)
        return "byte " + std::to_string(i) + ": " + a.substr(i, 40) + " | " + b.substr(j, 40);
      i += ni, j += nj;
    } else if (a[i++] != b[j++]) {
      return "byte " + std::to_string(i - 1) + ": " + a.substr(i - 1, 40) + " | " +
             b.substr(j - 1, 40);
    }
  }
  return i == a.size() && j == b.size() ? "" : "the lengths differ";
}

TEST_CASE("the committed formula figures are what the code draws now", "[figure][docs]") {
  // scripts/guide_figures.sh's flags for each (docs/guide/NAME.svg and NAME.zh.svg)
  struct Drawn {
    const char *file, *name;
    int64_t head_dim, train_len;
    double factor;
  };
  const Drawn drawn[] = {{"rope-decay", "rope-decay", 32, 64, 4},
                         {"rope-scaling", "rope-scaling", 16, 64, 4},
                         {"rope-scaling-study", "rope-scaling", 32, 256, 16},
                         {"yarn-ramp", "yarn-ramp", 32, 256, 4},
                         {"alibi-bias", "alibi-bias", 16, 64, 4},
                         {"rope-ramps", "rope-ramps", 32, 256, 4},
                         {"kerple-kernel", "kerple-kernel", 16, 64, 4},
                         {"xpos-decay", "xpos-decay", 32, 256, 4},
                         {"prope-pairs", "prope-pairs", 32, 256, 4}};
  for (const Drawn& d : drawn) {
    for (const Lang lang : {Lang::en, Lang::zh}) {
      const std::string file =
          std::string("docs/guide/") + d.file + (lang == Lang::zh ? ".zh.svg" : ".svg");
      INFO(file << " (regenerate: make guide-figures)");
      FigureOptions o;
      o.head_dim = d.head_dim, o.train_len = d.train_len, o.factor = d.factor, o.lang = lang;
      REQUIRE(drawing_difference(source_file(file), render_guide_figure(d.name, o)) == "");
    }
  }
}
