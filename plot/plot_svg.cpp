// plot_svg.cpp — SVG text and elements, colours, axes and the frame shared by every figure.
// See plot_svg.h; plot.h states the axis formulas.
#include "plot/plot_svg.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <stdexcept>

namespace poslab::svg {

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
std::string tag(const char* name, const std::string& attrs, const std::string& body) {
  const std::string open = std::string("<") + name + attrs;
  return (body.empty() ? open + "/>" : open + ">" + body + "</" + name + ">") + "\n";
}

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
          const std::string& extra) {
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
// geometry, colour and class. The CJK fonts come first: a renderer takes each glyph from the
// first listed font that has it, and not every renderer falls back to a CJK font by itself
// (Chinese tokens then show as boxes). One for each system a reader may have: Noto Sans CJK and
// its twin Source Han Sans (Linux, Android), PingFang (macOS, iOS), Microsoft YaHei (Windows),
// WenQuanYi (older Linux). Each carries Latin glyphs too.
constexpr const char* kStyle = R"(<style>
text { font-family: 'Noto Sans CJK SC', 'Source Han Sans SC', 'PingFang SC', 'Microsoft YaHei', 'WenQuanYi Micro Hei', 'DejaVu Sans', Helvetica, Arial, sans-serif; font-size: 11px; fill: #222 }
.title { font-size: 15px; font-weight: bold }  .panel-title { font-size: 13px; font-weight: bold }
.label { font-size: 12.5px }  .exp { font-size: 8px }
.middle { text-anchor: middle }  .end { text-anchor: end }
.grid { stroke: #e6e6e6 }  .tick { stroke: #444 }  .plot-area { fill: none; stroke: #444 }
.legend { fill: white; fill-opacity: 0.9; stroke: #bbb }
.series { fill: none; stroke-width: 1.8; stroke-linejoin: round }  .dashed { stroke-dasharray: 6 4 }
.faint { stroke-width: 1.2; stroke-opacity: 0.6 }  .cells { shape-rendering: crispEdges }
.reference { fill: none; stroke: #999; stroke-dasharray: 3 3 }
.band { stroke: none; fill-opacity: 0.16 }  .bar { stroke-width: 1.4 }  .note { fill: #555 }
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

const char* palette(size_t k) {
  return kPalette[k % 8];
}

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

double Axis::to_px(double v) const {
  const double t = log ? std::log(v / lo) / std::log(hi / lo) : (v - lo) / (hi - lo);
  return px_lo + t * (px_hi - px_lo);
}
bool Axis::usable(double v) const {
  return std::isfinite(v) && (!log || v > 0);
}

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
  // An end of the axis far from every label (lines of perplexity 2.7 under a lowest label of
  // 5): its outermost minor tick gets a label too, if it is more than a factor 1.5 and 8% of
  // the axis's log-span beyond the nearest label, so that the two labels cannot touch.
  const auto label_end = [&](auto first, auto last) {
    const auto nearest = std::find_if(first, last, [](const Tick& t) { return !t.label.empty(); });
    if (s > 1 || nearest == last || nearest == first) return;
    const double gap = std::abs(std::log(nearest->value / first->value));
    if (gap > std::log(1.5) && gap > 0.08 * std::log(a.hi / a.lo)) {
      const int d = static_cast<int>(std::floor(std::log10(first->value) + 1e-9));
      const int m = static_cast<int>(std::lround(first->value / std::pow(10.0, d)));
      first->label = decade_label(m, d, sci);
    }
  };
  label_end(a.ticks.begin(), a.ticks.end());
  label_end(a.ticks.rbegin(), a.ticks.rend());
  return a;
}

// ---------------------------------------------------------------- frame

namespace {
double widest_label(const Axis& a) {
  double w = 0;
  for (const auto& t : a.ticks) w = std::max(w, text_width(t.label, kTickSize));
  return w;
}

}  // namespace

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

// The title centred over the plot area, or as near as keeps a title wider than the area inside
// the figure (its width reckoned at the stylesheet's size: 13 px for a panel's, else 15 px);
// axis labels centred along their axes.
void draw_titles(std::string& out, const Frame& f, const std::string& title,
                 const char* title_class, const std::string& xlabel, const std::string& ylabel) {
  const double cx = (f.left + f.right) / 2, cy = (f.top + f.bottom) / 2;
  const double size = std::string_view(title_class).starts_with("panel-title") ? 13 : 15;
  if (!title.empty())
    text(out, std::max(cx, text_width(title, size) / 2 + 4), 26, title, title_class);
  if (!xlabel.empty()) text(out, cx, f.bottom + 40, xlabel, "label middle");
  if (!ylabel.empty()) {
    text(out, 16, cy, ylabel, "label middle",
         attr("transform", "rotate(-90 16 " + fixed(cy, 2) + ")"));
  }
}

}  // namespace poslab::svg
