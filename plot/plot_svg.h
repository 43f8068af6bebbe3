// plot_svg.h — the pieces every figure of plot.h is built from: SVG text and elements,
// colours, axes with their ticks, and the frame around the plot area. Internal to
// plot*.cpp (the tests use plot.h only); plot.h states the axis formulas implemented here.
#pragma once
#include <string>
#include <string_view>
#include <vector>

namespace poslab::svg {

void require(bool ok, const std::string& message);  // throws std::invalid_argument

// Fixed-point text that ignores the C++ locale; -0.00 prints as 0.00.
std::string fixed(double v, int decimals);
// The five XML specials escaped, control characters dropped; UTF-8 passes through.
std::string escape(std::string_view s);
// ` name="value"`: numbers with two decimals, strings escaped.
std::string attr(const char* name, double v);
std::string attr(const char* name, std::string_view v);
// <name attrs/>, or <name attrs>body</name> (body is markup, already escaped), then '\n'.
std::string tag(const char* name, const std::string& attrs, const std::string& body = "");

// The font size of tick and legend labels (px) and the length of a major tick mark.
constexpr double kTickSize = 11, kTickLen = 5;
// Approximate rendered width in pixels (0.6 em per Latin glyph, 1 em per CJK glyph).
double text_width(std::string_view s, double font_size);
// <text> with its baseline at y; class "middle" centres it on x, "end" ends it there. A label
// like "10^6" gets a raised, smaller exponent.
void text(std::string& out, double x, double y, const std::string& label, const char* cls,
          const std::string& extra = "");
void line(std::string& out, double x1, double y1, double x2, double y2, const char* cls);
// The document's start: XML declaration, <svg> of the given size, stylesheet, white ground.
std::string svg_open(double width, double height);

// Okabe & Ito's eight colours, the default colour of series k (k mod 8).
const char* palette(size_t k);
// A dot at a point, or an upward triangle where a value was clipped.
void marker(std::string& out, bool clipped, double x, double y, const std::string& color);
// Viridis at t in [0, 1] (clamped), as "#rrggbb".
std::string viridis(double t);

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
  double to_px(double v) const;
  bool usable(double v) const;  // finite, and > 0 on a log axis
};
// The smallest step {1, 2, 5} x 10^k that cuts `span` into at most `parts` parts.
double nice_step(double span, int parts);
// [lo, hi] widened to whole steps, a labelled tick at every step.
Axis linear_axis(double lo, double hi, int parts);
// Over finite positive `values`: the range padded by 4% of its log-span each side; ticks on
// powers of two when every value is one, else on decades (plot.h).
Axis log_axis(const std::vector<double>& values);

// The plot area, in pixels.
struct Frame {
  double left, top, right, bottom;
};
// Margins for tick labels, title and axis labels around a width x height figure.
Frame frame_for(double width, double height, const Axis& x, const Axis& y, bool title, bool xlabel,
                bool ylabel);
// Grid lines (if `grid`), tick marks and labels, and <rect class="plot-area">.
void draw_axes(std::string& out, const Frame& f, const Axis& x, const Axis& y, bool grid);
// The title centred over the plot area (moved right where a wide one would start left of the
// figure); axis labels centred along their axes.
void draw_titles(std::string& out, const Frame& f, const std::string& title,
                 const char* title_class, const std::string& xlabel, const std::string& ylabel);

}  // namespace poslab::svg
