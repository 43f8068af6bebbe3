// plot.cpp — SVG line plots, scatter plots and heatmaps. plot.h states the axis formulas;
// this file adds the page layout (margins, legend, colour bar) and writes the SVG itself.
#include "train/study/plot.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <stdexcept>
#include <string_view>

namespace poslab {
namespace {

// ---------------------------------------------------------------- text and SVG elements

void require(bool ok, const std::string& message) {
  if (!ok) throw std::invalid_argument(message);
}

// Fixed-point text that ignores the C++ locale; -0.00 prints as 0.00.
std::string fixed(double v, int decimals) {
  const double scale = std::pow(10.0, decimals);
  v = std::round(v * scale) / scale;
  if (v == 0) v = 0;  // -0 == 0, so this turns -0 into +0
  char buf[64];
  const auto res = std::to_chars(buf, buf + sizeof buf, v, std::chars_format::fixed, decimals);
  return std::string(buf, res.ptr);
}

// Escapes the five XML specials and drops control characters, which XML 1.0 forbids even
// escaped. UTF-8 (Chinese titles, θ) passes through unchanged.
std::string escape(std::string_view s) {
  const std::string_view specials = "<>&\"'";
  const char* const entities[] = {"&lt;", "&gt;", "&amp;", "&quot;", "&apos;"};
  std::string out;
  for (const char c : s) {
    const size_t k = specials.find(c);
    if (k != std::string_view::npos) {
      out += entities[k];
    } else if (static_cast<unsigned char>(c) >= 0x20 || c == '\t') {
      out += c;
    }
  }
  return out;
}

// One attribute, ` name="value"`: numbers print with two decimals (so does every coordinate
// in the output), strings are escaped.
std::string attr(const char* name, double v) {
  return std::string(" ") + name + "=\"" + fixed(v, 2) + "\"";
}
std::string attr(const char* name, std::string_view v) {
  return std::string(" ") + name + "=\"" + escape(v) + "\"";
}

// <name attrs/>, or <name attrs>body</name> where body is markup (already escaped). The
// newline after it keeps the file readable; inside a <text>, SVG drops it.
std::string tag(const char* name, const std::string& attrs, const std::string& body = "") {
  const std::string open = std::string("<") + name + attrs;
  return (body.empty() ? open + "/>" : open + ">" + body + "</" + name + ">") + "\n";
}

// The font size of tick and legend labels (px; kStyle below sets it), which the layout
// estimates text widths with, and the length of a tick mark.
constexpr double kTickSize = 11, kTickLen = 5;

// Approximate rendered width in pixels: a Latin glyph of a sans-serif font is about 0.6 em
// wide on average, a CJK glyph a full em. Only used to reserve margins and size the legend.
double text_width(std::string_view s, double font_size) {
  double em = 0;
  for (const char ch : s) {
    const auto c = static_cast<unsigned char>(ch);
    if ((c & 0xC0) == 0x80) continue;  // UTF-8 continuation byte: not a new character
    em += c >= 0xE2 ? 1.0 : 0.6;       // lead bytes from 0xE2 start U+2000 and up
  }
  return em * font_size;
}

// <text> with its baseline at y, starting at x (or centred on it with class "middle", ending
// at it with "end"). A label like "10^6" is drawn with a raised, smaller exponent.
void text(std::string& out, double x, double y, const std::string& label, const char* cls,
          const std::string& extra = "") {
  const size_t caret = label.find('^');
  std::string body = escape(label.substr(0, caret));
  if (caret != std::string::npos) {
    body += tag("tspan", attr("class", "exp") + attr("dy", -4.5), escape(label.substr(caret + 1)));
  }
  out += tag("text", attr("x", x) + attr("y", y) + (*cls ? attr("class", cls) : "") + extra, body);
}

void line(std::string& out, double x1, double y1, double x2, double y2, const char* cls) {
  out += tag("line", attr("x1", x1) + attr("y1", y1) + attr("x2", x2) + attr("y2", y2) +
                         attr("class", cls));
}

// One stylesheet per figure gives each class of element its look, so elements carry only their
// geometry, colour and class.
constexpr const char* kStyle = R"(<style>
text { font-family: 'DejaVu Sans', Helvetica, Arial, sans-serif; font-size: 11px; fill: #222 }
.title { font-size: 15px; font-weight: bold }  .panel-title { font-size: 13px; font-weight: bold }
.label { font-size: 12.5px }  .exp { font-size: 8px }
.middle { text-anchor: middle }  .end { text-anchor: end }
.grid { stroke: #e6e6e6 }  .tick { stroke: #444 }  .plot-area { fill: none; stroke: #444 }
.legend { fill: white; fill-opacity: 0.9; stroke: #bbb }
.series { fill: none; stroke-width: 1.8; stroke-linejoin: round }  .dashed { stroke-dasharray: 6 4 }
.faint { stroke-width: 1.2; stroke-opacity: 0.6 }  .cells { shape-rendering: crispEdges }
.reference { fill: none; stroke: #999; stroke-dasharray: 3 3 }
</style>
)";

std::string svg_open(double width, double height) {
  return "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<svg" +
         attr("xmlns", "http://www.w3.org/2000/svg") + attr("width", width) +
         attr("height", height) +
         attr("viewBox", "0 0 " + fixed(width, 2) + " " + fixed(height, 2)) + ">\n" + kStyle +
         tag("rect", attr("width", "100%") + attr("height", "100%") + attr("fill", "white"));
}

// ---------------------------------------------------------------- colours and markers

// Okabe & Ito, "Color Universal Design" (2008): eight colours that stay distinct under
// deuteranopia, protanopia and tritanopia. Yellow comes last since it is faint on white.
const char* const kPalette[] = {"#0072B2", "#D55E00", "#009E73", "#CC79A7",
                                "#E69F00", "#56B4E9", "#000000", "#F0E442"};

// A dot at a point; an upward triangle where a value was clipped at y_max.
void marker(std::string& out, bool clipped, double x, double y, const std::string& color) {
  const std::string points = fixed(x - 4.8, 2) + "," + fixed(y + 3.8, 2) + " " + fixed(x + 4.8, 2) +
                             "," + fixed(y + 3.8, 2) + " " + fixed(x, 2) + "," + fixed(y - 5.1, 2);
  out += clipped
             ? tag("polygon", attr("points", points) + attr("fill", color))
             : tag("circle", attr("cx", x) + attr("cy", y) + attr("r", 3.2) + attr("fill", color));
}

// Viridis (matplotlib) sampled at t = 0, 0.1, ..., 1 and linearly interpolated in between:
// perceptually uniform, colour-blind safe, and still ordered when printed in grey.
std::string viridis(double t) {
  const unsigned kAnchors[11] = {0x440154, 0x482475, 0x414487, 0x355f8d, 0x2a788e, 0x21918c,
                                 0x22a884, 0x44bf70, 0x7ad151, 0xbddf26, 0xfde725};
  t = std::clamp(t, 0.0, 1.0) * 10;
  const int i = std::min(static_cast<int>(t), 9);
  unsigned rgb = 0;
  for (int shift = 16; shift >= 0; shift -= 8) {  // red, green, blue
    const double a = (kAnchors[i] >> shift) & 0xFF, b = (kAnchors[i + 1] >> shift) & 0xFF;
    rgb |= static_cast<unsigned>(std::lround(a + (t - i) * (b - a))) << shift;
  }
  char buf[8];
  std::snprintf(buf, sizeof buf, "#%06x", rgb);
  return buf;
}

// ---------------------------------------------------------------- axes and ticks

struct Tick {
  double value;
  std::string label;  // "" = minor tick: a short mark, no label, no grid line
};

// Maps data values to pixels: lo lands on px_lo, hi on px_hi (for a y axis px_lo > px_hi).
struct Axis {
  double lo = 0, hi = 1;
  bool log = false;
  double px_lo = 0, px_hi = 1;
  std::vector<Tick> ticks;

  double to_px(double v) const {
    const double t = log ? std::log(v / lo) / std::log(hi / lo) : (v - lo) / (hi - lo);
    return px_lo + t * (px_hi - px_lo);
  }
  bool usable(double v) const { return std::isfinite(v) && (!log || v > 0); }
};

// The smallest step of the form {1, 2, 5} x 10^k that cuts `span` into at most `parts` parts.
double nice_step(double span, int parts) {
  const double raw = span / parts;
  const double decade = std::pow(10.0, std::floor(std::log10(raw)));
  for (const double m : {1.0, 2.0, 5.0}) {
    if (m * decade >= raw * (1 - 1e-9)) return m * decade;
  }
  return 10 * decade;
}

// As many decimals as the step needs; steps of 1000 and more print as "2k", "40M".
std::string linear_label(double v, double step) {
  const bool zero = std::abs(v) < 1e-9 * step;  // printed plain: "0", not "0k"
  if (step >= 1e6 && !zero) return linear_label(v / 1e6, step / 1e6) + "M";
  if (step >= 1e3 && !zero) return linear_label(v / 1e3, step / 1e3) + "k";
  return fixed(v, std::max(0, static_cast<int>(std::ceil(-std::log10(step) - 1e-9))));
}

// [lo, hi] widened to whole steps, a labelled tick at every step.
Axis linear_axis(double lo, double hi, int parts) {
  if (!(lo < hi)) {  // a single value: open a window around it
    const double d = lo == 0 ? 1 : 0.1 * std::abs(lo);
    lo -= d, hi += d;
  }
  const double step = nice_step(hi - lo, parts);
  const long k0 = std::lround(std::floor(lo / step + 1e-9));
  const long k1 = std::lround(std::ceil(hi / step - 1e-9));
  Axis a;
  a.lo = k0 * step, a.hi = k1 * step;
  for (long k = k0; k <= k1; ++k) a.ticks.push_back({k * step, linear_label(k * step, step)});
  return a;
}

std::string pow2_label(int k) {  // 2^k as 0.25, 256, 4k, 1M
  if (k < -10 || k >= 30) return "2^" + std::to_string(k);
  if (k < 0) return fixed(std::ldexp(1.0, k), -k);  // 2^-k has exactly k decimals
  if (k < 10) return std::to_string(1 << k);
  if (k < 20) return std::to_string(1 << (k - 10)) + "k";
  return std::to_string(1 << (k - 20)) + "M";
}

// m 10^d as 0.02, 5, 100, 2k, 500k; as 10^6 or 2×10^-5 on an axis reaching past [0.001, 1M).
std::string decade_label(int m, int d, bool sci) {
  if (sci) return (m == 1 ? "" : std::to_string(m) + "×") + "10^" + std::to_string(d);
  if (d >= 3) return std::to_string(m * static_cast<int>(std::pow(10, d - 3))) + "k";
  return fixed(m * std::pow(10.0, d), std::max(0, -d));
}

// `values` are finite and positive. plot.h spells out the range and the tick rules.
Axis log_axis(const std::vector<double>& values) {
  Axis a;
  a.log = true, a.lo = 1, a.hi = 10;
  if (!values.empty()) {
    const auto [mn, mx] = std::minmax_element(values.begin(), values.end());
    const double pad = *mn < *mx ? 0.04 * std::log(*mx / *mn) : std::log(2.0);
    a.lo = *mn * std::exp(-pad), a.hi = *mx * std::exp(pad);
  }
  const auto inside = [&](double v) { return v >= a.lo * (1 - 1e-9) && v <= a.hi * (1 + 1e-9); };
  const auto power_of_two = [](double v) {
    int e;
    return std::frexp(v, &e) == 0.5;  // v = m 2^e with m in [0.5, 1)
  };
  if (!values.empty() && std::all_of(values.begin(), values.end(), power_of_two)) {
    // A tick on every 2^k; every s-th one labelled, so at most 8 labels.
    const int k0 = static_cast<int>(std::ceil(std::log2(a.lo)));
    const int k1 = static_cast<int>(std::floor(std::log2(a.hi)));
    const int s = (k1 - k0 + 8) / 8;  // ceil((k1 - k0 + 1) / 8)
    for (int k = k0; k <= k1; ++k) {
      a.ticks.push_back({std::ldexp(1.0, k), (k % s + s) % s == 0 ? pow2_label(k) : ""});
    }
    return a;
  }
  const int d0 = static_cast<int>(std::floor(std::log10(a.lo)));
  const int d1 = static_cast<int>(std::ceil(std::log10(a.hi)));
  const int s = (d1 - d0 + 7) / 8;  // label every s-th decade: at most 8 decade labels
  const bool sci = a.lo < 1e-3 || a.hi >= 1e6;
  // Which m in m 10^d get a label, as a bit mask (bit m): m = 1; if that gives fewer than
  // three labels (a short range), m = 1, 2, 5; failing that, every m. Others are minor ticks.
  int labelled = 0;
  for (const int mask : {0b10, 0b100110, 0b1111111110}) {
    int count = 0;
    for (int d = d0; d <= d1; ++d) {
      for (int m = 1; m <= 9; ++m) count += (mask >> m & 1) && inside(m * std::pow(10.0, d));
    }
    labelled = mask;
    if (count >= 3) break;
  }
  for (int d = d0; d <= d1; ++d) {
    for (int m = 1; m <= (s > 1 ? 1 : 9); ++m) {  // no minor ticks past 8 decades
      const double v = m * std::pow(10.0, d);
      const bool major = (labelled >> m & 1) && (d % s + s) % s == 0;
      if (inside(v)) a.ticks.push_back({v, major ? decade_label(m, d, sci) : ""});
    }
  }
  return a;
}

// ---------------------------------------------------------------- frame, legend, series

struct Frame {
  double left, top, right, bottom;
};

double widest_label(const Axis& a) {
  double w = 0;
  for (const auto& t : a.ticks) w = std::max(w, text_width(t.label, kTickSize));
  return w;
}

// Margins around the plot area, from the edge of the image inwards:
//   top:    the title's baseline at 26 px; the plot area starts at 40 px (14 px untitled)
//   left:   a 26 px column for the rotated y label (its baseline at x = 16), the widest y tick
//           label, then 9 px for the tick mark and a gap
//   bottom: tick labels with baselines 19 px below the area, the x label's baseline at 40 px
//   right:  half the widest x tick label, as the last one is centred on the right edge
Frame frame_for(double width, double height, const Axis& x, const Axis& y, bool title, bool xlabel,
                bool ylabel) {
  return {(ylabel ? 26 : 8) + widest_label(y) + kTickLen + 4, title ? 40.0 : 14.0,
          width - std::max(16.0, widest_label(x) / 2 + 6), height - (xlabel ? 48 : 28)};
}

// Grid lines at labelled ticks (if `grid`), tick marks outside the area, tick labels, and
// the frame, which the tests find as <rect class="plot-area">.
void draw_axes(std::string& out, const Frame& f, const Axis& x, const Axis& y, bool grid) {
  for (const auto& t : x.ticks) {
    const double px = x.to_px(t.value);
    if (grid && !t.label.empty()) line(out, px, f.top, px, f.bottom, "grid");
    line(out, px, f.bottom, px, f.bottom + (t.label.empty() ? 3 : kTickLen), "tick");
    if (!t.label.empty()) text(out, px, f.bottom + 19, t.label, "middle");
  }
  for (const auto& t : y.ticks) {
    const double py = y.to_px(t.value);
    if (grid && !t.label.empty()) line(out, f.left, py, f.right, py, "grid");
    line(out, f.left - (t.label.empty() ? 3 : kTickLen), py, f.left, py, "tick");
    // +0.35 em moves the baseline down so the middle of the digits sits on the tick
    if (!t.label.empty()) text(out, f.left - 9, py + 0.35 * kTickSize, t.label, "end");
  }
  out += tag("rect", attr("class", "plot-area") + attr("x", f.left) + attr("y", f.top) +
                         attr("width", f.right - f.left) + attr("height", f.bottom - f.top));
}

// The title centred over the plot area; axis labels centred along their axes.
void draw_titles(std::string& out, const Frame& f, const std::string& title,
                 const char* title_class, const std::string& xlabel, const std::string& ylabel) {
  const double cx = (f.left + f.right) / 2, cy = (f.top + f.bottom) / 2;
  if (!title.empty()) text(out, cx, 26, title, title_class);
  if (!xlabel.empty()) text(out, cx, f.bottom + 40, xlabel, "label middle");
  if (!ylabel.empty()) {
    text(out, 16, cy, ylabel, "label middle",
         attr("transform", "rotate(-90 16 " + fixed(cy, 2) + ")"));
  }
}

struct LegendEntry {
  std::string label, color;
  bool line, dashed, dot, triangle;  // what the sample shows
};
using Points = std::vector<std::pair<double, double>>;

// A box with an 18 px row per entry: a 24 px sample of the line with the marker in its middle,
// then the label. It goes into the corner of the plot area that covers the fewest of `drawn`
// (pixel positions of what was drawn), trying top-right, top-left, bottom-right, bottom-left.
void draw_legend(std::string& out, const Frame& f, const std::vector<LegendEntry>& entries,
                 const Points& drawn) {
  if (entries.empty()) return;
  double label_w = 0;
  for (const auto& e : entries) label_w = std::max(label_w, text_width(e.label, kTickSize));
  const double w = 10 + 24 + 6 + label_w + 10, h = 18.0 * entries.size() + 8, inset = 8;
  double bx = 0, by = 0;
  size_t best = SIZE_MAX;
  for (const bool top : {true, false}) {
    for (const bool right : {true, false}) {
      const double x = right ? f.right - inset - w : f.left + inset;
      const double y = top ? f.top + inset : f.bottom - inset - h;
      const auto covered = std::count_if(drawn.begin(), drawn.end(), [&](const auto& p) {
        return p.first >= x && p.first <= x + w && p.second >= y && p.second <= y + h;
      });
      if (static_cast<size_t>(covered) < best) best = covered, bx = x, by = y;
    }
  }
  out += tag("rect", attr("class", "legend") + attr("x", bx) + attr("y", by) + attr("width", w) +
                         attr("height", h) + attr("rx", 3));
  for (size_t i = 0; i < entries.size(); ++i) {
    const auto& e = entries[i];
    const double cy = by + 13 + 18.0 * i, x0 = bx + 10;
    if (e.line) {
      out += tag("line", attr("x1", x0) + attr("y1", cy) + attr("x2", x0 + 24) + attr("y2", cy) +
                             attr("class", e.dashed ? "series dashed" : "series") +
                             attr("stroke", e.color));
    }
    if (e.dot || e.triangle) marker(out, e.triangle, x0 + 12, cy, e.color);
    text(out, x0 + 30, cy + 0.35 * kTickSize, e.label, "");
  }
}

// Draws series k as one <path> plus its markers and adds its legend entry. "M" in the path
// starts a run of points and "L" extends it; a point that cannot be drawn (non-finite, or <= 0
// on a log axis) lifts the pen, which leaves the gap. y values above `clip` are drawn at clip,
// marked with an upward triangle; returns whether any were.
bool draw_series(std::string& out, const Series& s, size_t k, const Axis& x, const Axis& y,
                 std::optional<double> clip, const char* line_class, Points& drawn,
                 std::vector<LegendEntry>& legend) {
  require(s.x.size() == s.y.size(),
          "plot: expected series '" + s.label + "' to have as many x as y values, but got " +
              std::to_string(s.x.size()) + " x and " + std::to_string(s.y.size()) + " y");
  const std::string color = s.color.empty() ? kPalette[k % 8] : s.color;
  std::string d, marks;
  bool pen_down = false, clipped = false;
  for (size_t i = 0; i < s.x.size(); ++i) {
    if (!x.usable(s.x[i]) || !y.usable(s.y[i])) {
      pen_down = false;
      continue;
    }
    const bool over = clip && s.y[i] > *clip;
    const double px = x.to_px(s.x[i]), py = y.to_px(over ? *clip : s.y[i]);
    if (pen_down && line_class) {  // sample the segment, so the legend avoids lines too
      const auto [qx, qy] = drawn.back();
      for (int j = 1; j < 8; ++j) drawn.push_back({qx + (px - qx) * j / 8, qy + (py - qy) * j / 8});
    }
    d += (pen_down ? "L" : "M") + fixed(px, 2) + "," + fixed(py, 2) + " ";
    drawn.push_back({px, py});
    pen_down = true;
    clipped |= over;
    if (over || s.markers) marker(marks, over, px, py, color);
  }
  if (line_class && !d.empty()) {
    out += tag("path", attr("d", d.substr(0, d.size() - 1)) +
                           attr("class", std::string(line_class) + (s.dashed ? " dashed" : "")) +
                           attr("stroke", color));
  }
  out += marks;
  if (!s.label.empty()) {
    legend.push_back({s.label, color, line_class != nullptr, s.dashed, s.markers, false});
  }
  return clipped;
}

// What line plots and scatter plots share: series on x-y axes, with a legend. The scatter plot
// adds equal aspect and the unit circle; its lines (if any) are `line_class` "series faint".
std::string render_xy(const LinePlot& p, bool equal_aspect, bool unit_circle,
                      const char* line_class) {
  // Axis ranges cover the points that can be drawn, with y above y_max counted as y_max.
  std::vector<double> xs, ys;
  if (unit_circle) xs = ys = {-1, 1};
  for (const auto& s : p.series) {
    for (size_t i = 0; i < std::min(s.x.size(), s.y.size()); ++i) {
      const double yv = p.y_max ? std::min(s.y[i], *p.y_max) : s.y[i];
      if (std::isfinite(s.x[i]) && std::isfinite(s.y[i]) && (!p.log_x || s.x[i] > 0) &&
          (!p.log_y || yv > 0)) {
        xs.push_back(s.x[i]), ys.push_back(yv);
      }
    }
  }
  const auto make_axis = [](const std::vector<double>& v, bool log) {
    if (log) return log_axis(v);
    if (v.empty()) return linear_axis(0, 1, 6);
    const auto [mn, mx] = std::minmax_element(v.begin(), v.end());
    return linear_axis(*mn, *mx, 6);
  };
  Axis x = make_axis(xs, p.log_x), y = make_axis(ys, p.log_y);
  Frame f =
      frame_for(p.width, p.height, x, y, !p.title.empty(), !p.xlabel.empty(), !p.ylabel.empty());
  if (equal_aspect) {
    // Pixels per unit must match on both axes: take the smaller of the two scales and shrink
    // the other side of the plot area to fit, keeping it centred.
    const double w = f.right - f.left, h = f.bottom - f.top;
    const double scale = std::min(w / (x.hi - x.lo), h / (y.hi - y.lo));
    const double dw = w - scale * (x.hi - x.lo), dh = h - scale * (y.hi - y.lo);
    f = {f.left + dw / 2, f.top + dh / 2, f.right - dw / 2, f.bottom - dh / 2};
  }
  x.px_lo = f.left, x.px_hi = f.right;
  y.px_lo = f.bottom, y.px_hi = f.top;

  std::string out = svg_open(p.width, p.height);
  draw_axes(out, f, x, y, /*grid=*/true);
  draw_titles(out, f, p.title, "title middle", p.xlabel, p.ylabel);
  if (unit_circle) {
    out += tag("ellipse", attr("class", "reference") + attr("cx", x.to_px(0)) +
                              attr("cy", y.to_px(0)) + attr("rx", x.to_px(1) - x.to_px(0)) +
                              attr("ry", y.to_px(0) - y.to_px(1)));
  }
  std::vector<LegendEntry> legend;
  Points drawn;  // pixel positions, for placing the legend
  bool clipped = false;
  for (size_t k = 0; k < p.series.size(); ++k) {
    clipped |= draw_series(out, p.series[k], k, x, y, p.y_max, line_class, drawn, legend);
  }
  if (clipped) {
    char buf[32];
    const auto res = std::to_chars(buf, buf + sizeof buf, *p.y_max, std::chars_format::general, 4);
    legend.push_back(
        {"above " + std::string(buf, res.ptr) + " (clipped)", "#666", false, false, false, true});
  }
  draw_legend(out, f, legend, drawn);
  return out + "</svg>\n";
}

// ---------------------------------------------------------------- heatmaps

// Draws heatmap m into the box (0, 0, width, m.height) and returns where the matrix went.
// Layout: margins as in frame_for, then square cells of side
//   cell = min(room_w / cols, room_h / rows)
// filling the room left by the margins from its top-left corner.
Frame draw_heatmap(std::string& out, const Heatmap& m, double width, const char* title_class) {
  const size_t rows = m.values.size(), cols = rows ? m.values[0].size() : 0;
  for (size_t i = 0; i < rows; ++i) {
    require(m.values[i].size() == cols, "render_heatmap: expected every row to have " +
                                            std::to_string(cols) + " values, but row " +
                                            std::to_string(i) + " has " +
                                            std::to_string(m.values[i].size()));
  }
  require(m.vmin < m.vmax, "render_heatmap: expected vmin < vmax, but got vmin = " +
                               fixed(m.vmin, 6) + ", vmax = " + fixed(m.vmax, 6));
  // Index ticks at 0, step, 2 step, ... (integer steps 1, 2, 5, 10, ...). Index v names the
  // cell [v, v + 1), so its tick sits at the cell's centre, v + 0.5.
  const auto index_axis = [](size_t n) {
    Axis a;
    a.hi = std::max<double>(n, 1);
    const double step = n <= 1 ? 1 : std::max(1.0, nice_step(n - 1.0, 6));
    for (double v = 0; v < a.hi; v += step) a.ticks.push_back({v + 0.5, fixed(v, 0)});
    return a;
  };
  Axis x = index_axis(cols), y = index_axis(rows);
  Frame f =
      frame_for(width, m.height, x, y, !m.title.empty(), !m.xlabel.empty(), !m.ylabel.empty());
  const double cell = std::max(0.0, std::min((f.right - f.left) / x.hi, (f.bottom - f.top) / y.hi));
  f.right = f.left + cell * x.hi, f.bottom = f.top + cell * y.hi;
  x.px_lo = f.left, x.px_hi = f.right;
  y.px_lo = f.top, y.px_hi = f.bottom;  // row 0 at the top
  // class "cells" renders with crispEdges: neighbouring cells meet without hairline seams.
  out += "<g class=\"cells\">\n";
  for (size_t i = 0; i < rows; ++i) {
    for (size_t j = 0; j < cols; ++j) {
      const double v = m.values[i][j];
      if (!std::isfinite(v)) continue;  // e.g. a causal mask: left empty
      out += tag("rect", attr("x", f.left + cell * j) + attr("y", f.top + cell * i) +
                             attr("width", cell) + attr("height", cell) +
                             attr("fill", viridis((v - m.vmin) / (m.vmax - m.vmin))));
    }
  }
  out += "</g>\n";
  draw_axes(out, f, x, y, /*grid=*/false);  // grid lines would cover cells
  draw_titles(out, f, m.title, title_class, m.xlabel, m.ylabel);
  return f;
}

// A vertical bar, kBarWidth wide, kBarGap right of the matrix: the viridis gradient from vmin
// (bottom) to vmax (top), labelled on its right with the nice ticks inside [vmin, vmax].
// kBarRoom is the width it needs, labels included.
constexpr double kBarGap = 14, kBarWidth = 14, kBarRoom = kBarGap + kBarWidth + 50;

void draw_colorbar(std::string& out, double x, double top, double bottom, double vmin,
                   double vmax) {
  std::string stops;
  for (int i = 0; i <= 10; ++i) {
    stops += tag("stop", attr("offset", i / 10.0) + attr("stop-color", viridis(i / 10.0)));
  }
  out += "<defs>\n" +
         tag("linearGradient",
             attr("id", "viridis") + attr("x1", 0) + attr("y1", 1) + attr("x2", 0) + attr("y2", 0),
             stops) +
         "</defs>\n" +
         tag("rect", attr("x", x) + attr("y", top) + attr("width", kBarWidth) +
                         attr("height", bottom - top) + attr("fill", "url(#viridis)") +
                         attr("stroke", "#444"));
  Axis a = linear_axis(vmin, vmax, 5);
  a.lo = vmin, a.hi = vmax, a.px_lo = bottom, a.px_hi = top;
  for (const auto& t : a.ticks) {
    if (t.value < vmin - 1e-9 * (vmax - vmin) || t.value > vmax + 1e-9 * (vmax - vmin)) continue;
    const double py = a.to_px(t.value);
    line(out, x + kBarWidth, py, x + kBarWidth + kTickLen, py, "tick");
    text(out, x + kBarWidth + kTickLen + 3, py + 0.35 * kTickSize, t.label, "");
  }
}

}  // namespace

std::string render_line_plot(const LinePlot& p) {
  return render_xy(p, false, false, "series");
}

std::string render_scatter(const ScatterPlot& p) {
  const LinePlot xy{p.title, p.xlabel, p.ylabel, false, false, p.series, p.width, p.height, {}};
  return render_xy(xy, p.equal_aspect, p.unit_circle, p.connect ? "series faint" : nullptr);
}

std::string render_heatmap(const Heatmap& m) {
  std::string out = svg_open(m.width, m.height);
  const Frame f = draw_heatmap(out, m, m.width - kBarRoom, "title middle");
  draw_colorbar(out, f.right + kBarGap, f.top, f.bottom, m.vmin, m.vmax);
  return out + "</svg>\n";
}

std::string render_heatmap_grid(const std::string& title, const std::vector<Heatmap>& panels,
                                int columns) {
  require(!panels.empty() && columns >= 1,
          "render_heatmap_grid: expected at least one panel and one column, but got " +
              std::to_string(panels.size()) + " panels and " + std::to_string(columns) +
              " columns");
  for (const auto& p : panels) {
    require(p.vmin == panels[0].vmin && p.vmax == panels[0].vmax,
            "render_heatmap_grid: expected every panel on the colour scale of '" + panels[0].title +
                "', but '" + p.title + "' has its own vmin, vmax");
  }
  // Every panel gets a cell as large as the largest panel, below a 36 px title row. The
  // shared colour bar stands kBarGap right of the rightmost matrix and spans the matrices from
  // the first row to the last, so the panels are drawn first to find where those lie.
  double cw = 0, ch = 0;
  for (const auto& p : panels) cw = std::max(cw, p.width), ch = std::max(ch, p.height);
  const size_t ncol = std::min<size_t>(columns, panels.size());
  const size_t nrow = (panels.size() + ncol - 1) / ncol;
  const double head = title.empty() ? 0 : 36;
  std::string body;
  double bar_x = 0, bar_top = INFINITY, bar_bottom = 0;
  for (size_t k = 0; k < panels.size(); ++k) {
    const double ox = (k % ncol) * cw, oy = head + (k / ncol) * ch;
    body += "<g transform=\"translate(" + fixed(ox, 2) + "," + fixed(oy, 2) + ")\">\n";
    const Frame f = draw_heatmap(body, panels[k], panels[k].width, "panel-title middle");
    body += "</g>\n";
    bar_x = std::max(bar_x, ox + f.right + kBarGap);
    bar_top = std::min(bar_top, oy + f.top), bar_bottom = std::max(bar_bottom, oy + f.bottom);
  }
  const double width = bar_x - kBarGap + kBarRoom;
  std::string out = svg_open(width, head + nrow * ch);
  if (!title.empty()) text(out, width / 2, 26, title, "title middle");
  out += body;
  draw_colorbar(out, bar_x, bar_top, bar_bottom, panels[0].vmin, panels[0].vmax);
  return out + "</svg>\n";
}

void write_text_file(const std::string& path, const std::string& text) {
  std::ofstream file(path, std::ios::binary);
  if (!file || !file.write(text.data(), static_cast<std::streamsize>(text.size()))) {
    throw std::runtime_error("write_text_file: cannot write '" + path + "'");
  }
}

}  // namespace poslab
