// plot.cpp — line plots and scatter plots: series with their intervals, the legend beside the
// plot area. plot.h states the layout; plot_svg.h holds the elements, axes and frame.
#include "plot/plot.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <fstream>
#include <stdexcept>

#include "plot/plot_svg.h"

namespace poslab {
namespace {

using namespace svg;

struct LegendEntry {
  std::string label, color;
  bool line, dashed, dot, triangle;  // what the sample shows
};

// The legend's width: a 24 px sample, a 6 px gap, the widest label, 10 px padding each side.
double legend_width(const std::vector<LegendEntry>& entries) {
  double label_w = 0;
  for (const auto& e : entries) label_w = std::max(label_w, text_width(e.label, kTickSize));
  return entries.empty() ? 0 : 10 + 24 + 6 + label_w + 10;
}
constexpr double kLegendGap = 14;  // between the plot area and the legend

// A box with an 18 px row per entry, its top-left corner kLegendGap right of the plot area's
// top-right corner: outside the data, whatever the data.
void draw_legend(std::string& out, const Frame& f, const std::vector<LegendEntry>& entries) {
  if (entries.empty()) return;
  const double w = legend_width(entries), h = 18.0 * entries.size() + 8;
  const double bx = f.right + kLegendGap, by = f.top;
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

// y as drawn: clipped at y_max when there is one.
double clip_y(double y, std::optional<double> clip) {
  return clip && y > *clip ? *clip : y;
}

// The interval of series s: a band (one polygon per run of drawable points: the upper edge
// left to right, the lower edge back) or, with s.bars, a capped vertical bar per point.
void draw_interval(std::string& out, const Series& s, const std::string& color, const Axis& x,
                   const Axis& y, std::optional<double> clip) {
  if (s.lo.empty() && s.hi.empty()) return;
  require(s.lo.size() == s.x.size() && s.hi.size() == s.x.size(),
          "plot: expected series '" + s.label + "' to have one lo and hi per x, but got " +
              std::to_string(s.lo.size()) + " lo and " + std::to_string(s.hi.size()) + " hi for " +
              std::to_string(s.x.size()) + " x");
  std::string upper, lower;
  const auto flush = [&] {
    if (!upper.empty()) {
      out += tag("polygon", attr("class", "band") + attr("fill", color) +
                                attr("points", upper + lower.substr(0, lower.size() - 1)));
    }
    upper.clear(), lower.clear();
  };
  for (size_t i = 0; i < s.x.size(); ++i) {
    const double lo = clip_y(s.lo[i], clip), hi = clip_y(s.hi[i], clip);
    if (!x.usable(s.x[i]) || !y.usable(lo) || !y.usable(hi)) {
      flush();
      continue;
    }
    const double px = x.to_px(s.x[i]), plo = y.to_px(lo), phi = y.to_px(hi);
    if (s.bars) {
      out +=
          tag("path",
              attr("d", "M" + fixed(px, 2) + "," + fixed(plo, 2) + " L" + fixed(px, 2) + "," +
                            fixed(phi, 2) + " M" + fixed(px - 3, 2) + "," + fixed(plo, 2) + " L" +
                            fixed(px + 3, 2) + "," + fixed(plo, 2) + " M" + fixed(px - 3, 2) + "," +
                            fixed(phi, 2) + " L" + fixed(px + 3, 2) + "," + fixed(phi, 2)) +
                  attr("class", "series bar") + attr("stroke", color));
      continue;
    }
    upper += fixed(px, 2) + "," + fixed(phi, 2) + " ";
    lower = fixed(px, 2) + "," + fixed(plo, 2) + " " + lower;
  }
  flush();
}

// Draws series k as one <path> plus its markers and labels, and adds its legend entry. "M"
// starts a run of points, "L" extends it; a point that cannot be drawn (non-finite, or <= 0 on
// a log axis) lifts the pen, which leaves the gap. y values above `clip` are drawn at clip,
// marked with an upward triangle; returns whether any were.
bool draw_series(std::string& out, const Series& s, size_t k, const Axis& x, const Axis& y,
                 std::optional<double> clip, const char* line_class,
                 std::vector<LegendEntry>& legend) {
  require(s.x.size() == s.y.size(),
          "plot: expected series '" + s.label + "' to have as many x as y values, but got " +
              std::to_string(s.x.size()) + " x and " + std::to_string(s.y.size()) + " y");
  const std::string color = s.color.empty() ? palette(k) : s.color;
  draw_interval(out, s, color, x, y, clip);
  std::string d, marks;
  bool pen_down = false, clipped = false;
  for (size_t i = 0; i < s.x.size(); ++i) {
    if (!x.usable(s.x[i]) || !y.usable(s.y[i])) {
      pen_down = false;
      continue;
    }
    const bool over = clip && s.y[i] > *clip;
    const double px = x.to_px(s.x[i]), py = y.to_px(clip_y(s.y[i], clip));
    d += (pen_down ? "L" : "M") + fixed(px, 2) + "," + fixed(py, 2) + " ";
    pen_down = true;
    clipped |= over;
    if (over || s.markers) marker(marks, over, px, py, color);
    if (i < s.point_labels.size() && !s.point_labels[i].empty()) {  // the last one ends at it
      const bool last = i + 1 == s.x.size() && i > 0;
      text(marks, last ? px - 5 : px + 5, py - 5, s.point_labels[i], last ? "note end" : "note");
    }
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

// The axes over every point that can be drawn (y above y_max counted as y_max), intervals and
// reference circles included.
std::pair<Axis, Axis> axes_for(const LinePlot& p, double circle) {
  std::vector<double> xs, ys;
  if (circle > 0) xs = ys = {-circle, circle};
  const auto add = [&](double xv, double yv) {
    yv = clip_y(yv, p.y_max);
    if (std::isfinite(xv) && std::isfinite(yv) && (!p.log_x || xv > 0) && (!p.log_y || yv > 0)) {
      xs.push_back(xv), ys.push_back(yv);
    }
  };
  for (const auto& s : p.series) {
    for (size_t i = 0; i < std::min(s.x.size(), s.y.size()); ++i) {
      add(s.x[i], s.y[i]);
      if (i < s.lo.size() && i < s.hi.size()) add(s.x[i], s.lo[i]), add(s.x[i], s.hi[i]);
    }
  }
  const auto make_axis = [](const std::vector<double>& v, bool log) {
    if (log) return log_axis(v);
    if (v.empty()) return linear_axis(0, 1, 6);
    const auto [mn, mx] = std::minmax_element(v.begin(), v.end());
    return linear_axis(*mn, *mx, 6);
  };
  return {make_axis(xs, p.log_x), make_axis(ys, p.log_y)};
}

// Pixels per unit must match on both axes: take the smaller of the two scales and shrink the
// other side of the plot area to fit, keeping it centred.
Frame equal_aspect_frame(const Frame& f, const Axis& x, const Axis& y) {
  const double w = f.right - f.left, h = f.bottom - f.top;
  const double scale = std::min(w / (x.hi - x.lo), h / (y.hi - y.lo));
  const double dw = w - scale * (x.hi - x.lo), dh = h - scale * (y.hi - y.lo);
  return {f.left + dw / 2, f.top + dh / 2, f.right - dw / 2, f.bottom - dh / 2};
}

void reference_circle(std::string& out, const Axis& x, const Axis& y, double r) {
  out +=
      tag("ellipse", attr("class", "reference") + attr("cx", x.to_px(0)) + attr("cy", y.to_px(0)) +
                         attr("rx", x.to_px(r) - x.to_px(0)) + attr("ry", y.to_px(0) - y.to_px(r)));
}

// What line plots and scatter plots share: series on x-y axes, with a legend. The scatter plot
// adds equal aspect and reference circles; its lines (if any) are `line_class` "series faint".
std::string render_xy(const LinePlot& p, bool equal_aspect, const std::vector<double>& circles,
                      const char* line_class) {
  double rmax = 0;
  for (const double r : circles) rmax = std::max(rmax, r);
  auto [x, y] = axes_for(p, rmax);
  Frame f =
      frame_for(p.width, p.height, x, y, !p.title.empty(), !p.xlabel.empty(), !p.ylabel.empty());
  if (equal_aspect) f = equal_aspect_frame(f, x, y);
  x.px_lo = f.left, x.px_hi = f.right;
  y.px_lo = f.bottom, y.px_hi = f.top;

  std::string body;
  draw_axes(body, f, x, y, /*grid=*/true);
  draw_titles(body, f, p.title, "title middle", p.xlabel, p.ylabel);
  for (const double r : circles) reference_circle(body, x, y, r);
  std::vector<LegendEntry> legend;
  bool clipped = false;
  for (size_t k = 0; k < p.series.size(); ++k) {
    clipped |= draw_series(body, p.series[k], k, x, y, p.y_max, line_class, legend);
  }
  if (clipped) {
    char buf[32];
    const auto res = std::to_chars(buf, buf + sizeof buf, *p.y_max, std::chars_format::general, 4);
    const std::string at(buf, res.ptr);
    legend.push_back({p.lang == Lang::zh ? "高于 " + at + "（截断）" : "above " + at + " (clipped)",
                      "#666", false, false, false, true});
  }
  draw_legend(body, f, legend);
  // The notes, one line each, under the legend in the same column.
  double column = legend_width(legend);
  const double notes_top = f.top + (legend.empty() ? 0 : 18.0 * legend.size() + 8) + 18;
  for (size_t i = 0; i < p.notes.size(); ++i) {
    text(body, f.right + kLegendGap, notes_top + 15.0 * i, p.notes[i], "note");
    column = std::max(column, text_width(p.notes[i], kTickSize));
  }
  const double width = column == 0 ? p.width : f.right + kLegendGap + column + 8;
  const double height = std::max(p.height, notes_top + 15.0 * p.notes.size());
  return svg_open(std::max(width, p.width), height) + body + "</svg>\n";
}

}  // namespace

std::string render_line_plot(const LinePlot& p) {
  return render_xy(p, false, {}, "series");
}

std::string render_scatter(const ScatterPlot& p) {
  const LinePlot xy{p.title, p.xlabel, p.ylabel, false, false, p.series, p.width, p.height, {}};
  std::vector<double> circles = p.circles;
  if (p.unit_circle) circles.insert(circles.begin(), 1.0);
  return render_xy(xy, p.equal_aspect, circles, p.connect ? "series faint" : nullptr);
}

Lang parse_lang(const std::string& name, const std::string& flag) {
  if (name == "en") return Lang::en;
  if (name == "zh") return Lang::zh;
  throw std::invalid_argument(flag + ": expected en or zh, but got '" + name + "'");
}

void write_text_file(const std::string& path, const std::string& text) {
  std::ofstream file(path, std::ios::binary);
  if (!file || !file.write(text.data(), static_cast<std::streamsize>(text.size()))) {
    throw std::runtime_error("write_text_file: cannot write '" + path + "'");
  }
}

}  // namespace poslab
