// Tests for plot/plot.h: every figure is well-formed XML, text is escaped, axes follow the
// layout formulas stated in plot.h, non-finite values leave gaps, output is deterministic.
#include "plot/plot.h"

#include <catch2/catch.hpp>

#include <cctype>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <limits>
#include <string>
#include <vector>

#include "tests/plot/xml_check.h"

using namespace poslab;
using report_test::xml_error;

namespace {

const double kNaN = std::numeric_limits<double>::quiet_NaN();
const double kInf = std::numeric_limits<double>::infinity();

// The number in attribute `name` of the tag that starts at `tag`, e.g. x="12.50"; NaN if the
// tag has no such attribute.
double attr_num(const std::string& svg, size_t tag, const std::string& name) {
  const size_t at = svg.find(" " + name + "=\"", tag);
  if (tag == std::string::npos || at == std::string::npos || at > svg.find('>', tag)) return kNaN;
  return std::stod(svg.substr(at + name.size() + 3));
}

// The plot area rectangle, as written by draw_axes: left, top, width, height.
std::vector<double> plot_area(const std::string& svg) {
  const size_t tag = svg.rfind('<', svg.find("class=\"plot-area\""));
  return {attr_num(svg, tag, "x"), attr_num(svg, tag, "y"), attr_num(svg, tag, "width"),
          attr_num(svg, tag, "height")};
}

// x (or y) coordinate of the <text> whose content is exactly `label`; NaN if there is none.
double text_coord(const std::string& svg, const std::string& label, const char* coord = "x") {
  const size_t at = svg.find(">" + label + "</text>");
  return at == std::string::npos ? kNaN : attr_num(svg, svg.rfind("<text", at), coord);
}

// The value of the first `name="..."` attribute in svg.
std::string first_attr(const std::string& svg, const std::string& name) {
  const size_t at = svg.find(" " + name + "=\"");
  REQUIRE(at != std::string::npos);
  const size_t v = at + name.size() + 3;
  return svg.substr(v, svg.find('"', v) - v);
}

size_t count(const std::string& s, const std::string& what) {
  size_t n = 0;
  for (size_t i = s.find(what); i != std::string::npos; i = s.find(what, i + 1)) ++n;
  return n;
}

LinePlot context_plot() {  // eval loss against context length, as in the study report
  LinePlot p;
  p.title = "Loss vs context <train> & \"eval\" — 训练损失";
  p.xlabel = "context length T";
  p.ylabel = "eval loss (nats)";
  p.log_x = true;
  const std::vector<double> t = {256, 512, 1024, 2048, 4096};
  p.series.push_back({"RoPE <θ=10k>", t, {3.10, 3.05, 3.02, 3.01, 3.00}});
  p.series.push_back({"ALiBi & co", t, {3.20, 3.12, 3.08, 3.05, 3.04}, "", true});
  p.series.push_back({"learned", t, {3.15, 3.09, 4.9, 7.5, 9.8}});
  p.series.push_back({"NoPE", t, {3.30, 3.25, kNaN, 3.22, 3.21}});
  return p;
}

Heatmap causal_attention(int n, const std::string& title) {
  Heatmap h;
  h.title = title;
  h.xlabel = "key position j";
  h.ylabel = "query position i";
  h.values.assign(n, std::vector<double>(n, kNaN));  // masked (j > i) cells stay NaN
  for (int i = 0; i < n; ++i) {
    double z = 0;
    for (int j = 0; j <= i; ++j) z += std::exp(-0.3 * (i - j));
    for (int j = 0; j <= i; ++j) h.values[i][j] = std::exp(-0.3 * (i - j)) / z;
  }
  return h;
}

ScatterPlot rope_rotations() {  // (cos, sin) of position p for three RoPE frequency pairs
  ScatterPlot s;
  s.title = "RoPE: rotation of pair i across positions 0..15";
  s.xlabel = "cos(p θᵢ)";
  s.ylabel = "sin(p θᵢ)";
  for (const int i : {0, 2, 4}) {
    const double theta = std::pow(10000.0, -2.0 * i / 16);
    Series r{"pair i = " + std::to_string(i), {}, {}};
    for (int p = 0; p < 16; ++p) {
      r.x.push_back(std::cos(p * theta));
      r.y.push_back(std::sin(p * theta));
    }
    s.series.push_back(r);
  }
  return s;
}

}  // namespace

TEST_CASE("xml checker catches what it should", "[plot]") {
  CHECK(xml_error("<?xml version=\"1.0\"?>\n<svg a=\"1\"><g><text>x &amp; y</text></g></svg>\n") ==
        "");
  CHECK(xml_error("<svg><g></svg>") != "");
  CHECK(xml_error("<svg><text>a & b</text></svg>") != "");
  CHECK(xml_error("<svg a=\"<\"/>") != "");
  CHECK(xml_error("<svg/><svg/>") != "");
  CHECK(xml_error("<svg>") != "");
}

TEST_CASE("line plot is well-formed and escapes title and legend labels", "[plot]") {
  const std::string svg = render_line_plot(context_plot());
  INFO(svg.substr(0, 400));
  REQUIRE(xml_error(svg) == "");
  CHECK(svg.find("Loss vs context &lt;train&gt; &amp; &quot;eval&quot; — 训练损失") !=
        std::string::npos);
  CHECK(svg.find(">RoPE &lt;θ=10k&gt;</text>") != std::string::npos);
  CHECK(svg.find(">ALiBi &amp; co</text>") != std::string::npos);
  CHECK(svg.find("<train>") == std::string::npos);
  CHECK(svg.find("class=\"series dashed\"") != std::string::npos);  // the dashed series
  CHECK(svg.find("#0072B2") != std::string::npos);                  // Okabe–Ito blue first
}

TEST_CASE("log x axis puts 256 and 4096 where the layout formula says", "[plot]") {
  const std::string svg = render_line_plot(context_plot());
  const auto area = plot_area(svg);
  // plot.h: the data range [256, 4096] widened by 4% of its log-span on each side, then
  // px = left + (ln v - ln lo) / (ln hi - ln lo) * width.
  const double span = std::log(4096.0 / 256.0);
  const double ln_lo = std::log(256.0) - 0.04 * span, ln_hi = std::log(4096.0) + 0.04 * span;
  const auto expected = [&](double v) {
    return area[0] + (std::log(v) - ln_lo) / (ln_hi - ln_lo) * area[2];
  };
  // Coordinates are printed with two decimals, so allow 0.01 for each of x and width.
  CHECK(text_coord(svg, "256") == Approx(expected(256)).margin(0.02));
  CHECK(text_coord(svg, "4k") == Approx(expected(4096)).margin(0.02));
  CHECK(text_coord(svg, "1k") == Approx(expected(1024)).margin(0.02));
  // 256 sits 4/108 of the width in from the left edge, 4096 as far in from the right.
  CHECK(expected(256) - area[0] == Approx(area[2] * 0.04 / 1.08));
  for (const char* label : {"512", "2k"}) CHECK(!std::isnan(text_coord(svg, label)));
}

TEST_CASE("log axis over decades labels 10, 100, 1k, ... and 10^k past a million", "[plot]") {
  LinePlot p;
  p.log_x = p.log_y = true;
  p.series.push_back({"power law", {10, 100, 1000, 1e4, 1e5}, {1e2, 1e4, 1e6, 1e8, 1e10}});
  const std::string svg = render_line_plot(p);
  REQUIRE(xml_error(svg) == "");
  for (const char* label : {"10", "100", "1k", "10k", "100k"}) {
    INFO(label);
    CHECK(!std::isnan(text_coord(svg, label)));
  }
  CHECK(svg.find(">10<tspan") != std::string::npos);  // 10^k with a raised exponent
  // Minor ticks (2..9 per decade) are 3 px marks, major ones 5 px.
  const auto area = plot_area(svg);
  int minor = 0;
  for (size_t at = svg.find("<line "); at != std::string::npos; at = svg.find("<line ", at + 1)) {
    const double y1 = attr_num(svg, at, "y1"), y2 = attr_num(svg, at, "y2");
    minor += attr_num(svg, at, "x1") == attr_num(svg, at, "x2") &&
             y1 == Approx(area[1] + area[3]) && y2 - y1 == Approx(3);
  }
  CHECK(minor == 3 + 8 * 4);  // the padded range starts at 6.9: 7, 8, 9, then 20..90k
}

TEST_CASE("a log axis labels an end that lies far from every other label", "[plot]") {
  LinePlot p;
  p.log_y = true;  // perplexities as in the study's ppl_vs_length: 2.6 to 45
  p.series.push_back({"ppl", {1, 2, 3, 4}, {2.6, 3.0, 12, 45}});
  const std::string svg = render_line_plot(p);
  REQUIRE(xml_error(svg) == "");
  // 1, 2, 5 per decade gives 5, 10, 20, 50; the axis starts at 2.3 (4% padding), so its
  // lowest tick, 3, is a factor 5/3 below the lowest label and gets one.
  for (const char* label : {"3", "5", "10", "20", "50"}) {
    INFO(label);
    CHECK(!std::isnan(text_coord(svg, label, "y")));
  }
  for (const char* label : {"4", "30", "40"}) {  // minor ticks near a label stay unlabelled
    INFO(label);
    CHECK(std::isnan(text_coord(svg, label, "y")));
  }
}

TEST_CASE("linear ticks step by 1, 2 or 5 times a power of ten", "[plot]") {
  LinePlot p;
  p.series.push_back({"loss", {0, 2500, 5000, 7500, 9900}, {0.93, 0.61, 0.42, 0.35, 0.31}});
  const std::string svg = render_line_plot(p);
  for (const char* label : {"0", "2k", "4k", "6k", "8k", "10k"}) {
    INFO(label);
    CHECK(!std::isnan(text_coord(svg, label)));
  }
  for (const char* label : {"0.2", "0.4", "0.6", "0.8", "1.0"}) {  // 0.31..0.93 in steps of 0.2
    INFO(label);
    CHECK(!std::isnan(text_coord(svg, label, "y")));
  }
  CHECK(std::isnan(text_coord(svg, "0.0", "y")));  // the range ends at the first tick past the data
  // Evenly spaced: ticks 2k apart are the same number of pixels apart.
  CHECK(text_coord(svg, "4k") - text_coord(svg, "2k") ==
        Approx(text_coord(svg, "10k") - text_coord(svg, "8k")).margin(0.02));
}

TEST_CASE("NaN and inf points are skipped, leaving a gap in the line", "[plot]") {
  LinePlot p;
  p.series.push_back({"run", {1, 2, 3, 4, 5, 6}, {1.0, 2.0, kNaN, 2.5, kInf, 3.0}});
  const std::string svg = render_line_plot(p);
  REQUIRE(xml_error(svg) == "");
  CHECK(svg.find("nan") == std::string::npos);
  CHECK(svg.find("inf") == std::string::npos);
  const std::string d = first_attr(svg, "d");
  CHECK(count(d, "M") == 3);  // runs {1, 2}, {4} and {6}
  CHECK(count(d, "L") == 1);
  CHECK(count(svg, "<circle") == 4 + 1);  // a marker at each finite point, one in the legend
}

TEST_CASE("non-positive values on a log axis are skipped too", "[plot]") {
  LinePlot p;
  p.log_y = true;
  p.series.push_back({"", {1, 2, 3}, {0.5, 0.0, -1.0}});
  const std::string svg = render_line_plot(p);
  REQUIRE(xml_error(svg) == "");
  CHECK(count(svg, "<circle") == 1);
  CHECK(svg.find("class=\"legend\"") == std::string::npos);  // no labels, no legend
}

TEST_CASE("values above y_max are clipped and marked", "[plot]") {
  LinePlot p = context_plot();
  p.y_max = 5.0;
  const std::string svg = render_line_plot(p);
  REQUIRE(xml_error(svg) == "");
  CHECK(count(svg, "<polygon") == 2 + 1);  // 7.5 and 9.8, plus the legend's sample
  CHECK(svg.find(">above 5 (clipped)</text>") != std::string::npos);
  // The clipped points sit on the line y = 5, which is inside the plot area.
  const auto area = plot_area(svg);
  const std::string points = first_attr(svg, "points");  // "x,y x,y x,y", base first
  CHECK(std::stod(points.substr(points.find(',') + 1)) - 3.8 >= area[1] - 0.01);
  CHECK(std::isnan(text_coord(svg, "9.8", "y")));
  p.lang = Lang::zh;  // the renderer's own words in the figure's language
  CHECK(render_line_plot(p).find(">高于 5（截断）</text>") != std::string::npos);
}

TEST_CASE("the same input gives the same bytes", "[plot]") {
  CHECK(render_line_plot(context_plot()) == render_line_plot(context_plot()));
  CHECK(render_scatter(rope_rotations()) == render_scatter(rope_rotations()));
  CHECK(render_heatmap(causal_attention(12, "a")) == render_heatmap(causal_attention(12, "a")));
}

TEST_CASE("text names the CJK fonts first, so Chinese labels do not render as boxes", "[plot]") {
  Heatmap m;
  m.values = {{0.5}}, m.row_labels = {"君"}, m.col_labels = {"我"};
  const std::string svg = render_heatmap(m);
  REQUIRE(svg.find("font-family: 'Noto Sans CJK SC', 'Source Han Sans SC', 'PingFang SC', "
                   "'Microsoft YaHei', 'WenQuanYi Micro Hei', 'DejaVu Sans', Helvetica, Arial, "
                   "sans-serif;") != std::string::npos);
  REQUIRE(svg.find(">君<") != std::string::npos);
}

TEST_CASE("mismatched series lengths are reported", "[plot]") {
  LinePlot p;
  p.series.push_back({"bad", {1, 2, 3}, {1, 2}});
  CHECK_THROWS_WITH(render_line_plot(p),
                    Catch::Contains("expected series 'bad'") && Catch::Contains("3 x and 2 y"));
}

TEST_CASE("scatter plot keeps equal aspect and draws the unit circle", "[plot]") {
  const std::string svg = render_scatter(rope_rotations());
  REQUIRE(xml_error(svg) == "");
  const size_t ellipse = svg.find("<ellipse");
  CHECK(attr_num(svg, ellipse, "rx") ==
        Approx(attr_num(svg, ellipse, "ry")).margin(0.01));  // a circle, not an ellipse
  CHECK(count(svg, "<circle") == 3 * 16 + 3);                // points + legend samples
  CHECK(svg.find("cos(p θᵢ)") != std::string::npos);
}

TEST_CASE("heatmap draws one cell per finite value on the viridis scale", "[plot]") {
  Heatmap h = causal_attention(8, "attention <layer 0>");
  h.values[0][0] = 0.0;  // the ends of the scale
  h.values[1][0] = 1.0;
  const std::string svg = render_heatmap(h);
  REQUIRE(xml_error(svg) == "");
  CHECK(count(svg, "<rect x=") == 8 * 9 / 2 + 1);            // lower triangle + the colour bar
  CHECK(svg.find("fill=\"#440154\"") != std::string::npos);  // viridis(0)
  CHECK(svg.find("fill=\"#fde725\"") != std::string::npos);  // viridis(1)
  CHECK(svg.find("attention &lt;layer 0&gt;") != std::string::npos);
  h.values[3].pop_back();
  CHECK_THROWS_WITH(render_heatmap(h), Catch::Contains("row 3 has 7"));
}

TEST_CASE("heatmap grid shares one colour scale", "[plot]") {
  std::vector<Heatmap> panels;
  for (const char* name : {"NoPE", "learned", "RoPE", "ALiBi"}) {
    panels.push_back(causal_attention(10, name));
    panels.back().width = panels.back().height = 260;
  }
  const std::string svg = render_heatmap_grid("attention, layer 0 & head 0", panels, 2);
  REQUIRE(xml_error(svg) == "");
  CHECK(count(svg, "class=\"plot-area\"") == 4);
  CHECK(count(svg, "<linearGradient") == 1);
  panels[2].vmax = 0.5;
  CHECK_THROWS_WITH(render_heatmap_grid("", panels, 2), Catch::Contains("'RoPE'"));
}

TEST_CASE("the legend stands right of the plot area, outside the data", "[plot]") {
  const std::string svg = render_line_plot(context_plot());
  REQUIRE(xml_error(svg) == "");
  const auto area = plot_area(svg);
  const size_t legend = svg.rfind('<', svg.find("class=\"legend\""));
  CHECK(attr_num(svg, legend, "x") >= area[0] + area[2] + 10);
  // The figure is widened to hold it.
  CHECK(attr_num(svg, svg.find("<svg"), "width") >=
        attr_num(svg, legend, "x") + attr_num(svg, legend, "width"));
}

TEST_CASE("an interval per point draws a band, or bars", "[plot]") {
  LinePlot p;
  Series s{"rope", {256, 512, 1024}, {7, 8, 9}};
  s.lo = {6, 7, kNaN}, s.hi = {8, 9, 10};
  p.series.push_back(s);
  const std::string band = render_line_plot(p);
  REQUIRE(xml_error(band) == "");
  CHECK(count(band, "class=\"band\"") == 1);  // one polygon over the points with both ends
  const size_t poly = band.find("class=\"band\"");
  const std::string points = band.substr(band.find("points=\"", poly) + 8);
  CHECK(count(points.substr(0, points.find('"')), ",") == 4);  // 2 points up, 2 back down
  p.series[0].bars = true;
  const std::string bars = render_line_plot(p);
  REQUIRE(xml_error(bars) == "");
  CHECK(count(bars, "class=\"band\"") == 0);
  CHECK(count(bars, "class=\"series bar\"") == 2);
  p.series[0].hi.pop_back();
  CHECK_THROWS_WITH(render_line_plot(p), Catch::Contains("one lo and hi per x"));
}

TEST_CASE("point labels and extra reference circles", "[plot]") {
  ScatterPlot sc = rope_rotations();
  sc.connect = false;
  sc.circles = {0.5};
  sc.series[0].point_labels = {"0", "1"};
  const std::string svg = render_scatter(sc);
  REQUIRE(xml_error(svg) == "");
  CHECK(count(svg, "<ellipse") == 2);
  CHECK(svg.find("class=\"note\">1</text>") != std::string::npos);
  CHECK(count(svg, "class=\"series faint\"") == 0);  // points only, no chords
}

TEST_CASE("a square-root colour scale spreads small values", "[plot]") {
  Heatmap h;
  h.values = {{0.0, 0.25}, {1.0, kNaN}};
  h.sqrt_scale = true;
  const std::string svg = render_heatmap(h);
  REQUIRE(xml_error(svg) == "");
  CHECK(svg.find("fill=\"#21918c\"") != std::string::npos);  // sqrt(0.25) = 0.5: viridis(0.5)
  CHECK(!std::isnan(text_coord(svg, "0.01")));               // the bar's ticks follow the root
  std::vector<Heatmap> panels = {h, h};
  panels[1].sqrt_scale = false;
  CHECK_THROWS_WITH(render_heatmap_grid("", panels, 2), Catch::Contains("sqrt_scale"));
}

// Writes one example of each figure for a person to look at:
//   ./test_plot "[.examples]"   (then e.g. rsvg-convert -o loss.png /tmp/plots/loss.svg)
TEST_CASE("example figures", "[.examples]") {
  const std::string dir = "/tmp/plots";
  std::filesystem::create_directories(dir);
  LinePlot clipped = context_plot();
  clipped.y_max = 6.0;
  write_text_file(dir + "/context.svg", render_line_plot(clipped));

  LinePlot loss;
  loss.title = "Training loss";
  loss.xlabel = "step";
  loss.ylabel = "loss";
  for (const auto& [name, floor] : {std::pair{"RoPE", 2.9}, {"ALiBi", 3.0}, {"NoPE", 3.2}}) {
    Series s{name, {}, {}};
    s.markers = false;
    for (int step = 0; step <= 12000; step += 100) {
      s.x.push_back(step);
      s.y.push_back(floor + 7.5 * std::exp(-step / 1500.0) + 0.04 * std::sin(step * 0.01));
    }
    loss.series.push_back(s);
  }
  loss.series[2].y[40] = kNaN;  // a gap
  write_text_file(dir + "/loss.svg", render_line_plot(loss));

  LinePlot scaling;
  scaling.title = "Compute scaling";
  scaling.xlabel = "parameters";
  scaling.ylabel = "FLOPs to reach loss 3.5";
  scaling.log_x = scaling.log_y = true;
  scaling.series.push_back({"RoPE", {1e5, 1e6, 1e7, 1e8}, {2e12, 9e13, 4e15, 1e17}});
  scaling.series.push_back({"ALiBi", {1e5, 1e6, 1e7, 1e8}, {3e12, 1e14, 6e15, 3e17}});
  write_text_file(dir + "/scaling.svg", render_line_plot(scaling));
  write_text_file(dir + "/rope.svg", render_scatter(rope_rotations()));
  write_text_file(dir + "/attention.svg", render_heatmap(causal_attention(32, "attention (RoPE)")));
  std::vector<Heatmap> panels;
  for (const char* name : {"NoPE", "learned", "RoPE", "ALiBi"}) {
    panels.push_back(causal_attention(24, name));
    panels.back().width = panels.back().height = 300;
    panels.back().xlabel = panels.back().ylabel = "";
  }
  write_text_file(dir + "/attention_grid.svg",
                  render_heatmap_grid("Attention per scheme (layer 0, head 0)", panels, 2));
}
