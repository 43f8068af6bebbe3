// plot_heatmap.cpp — heatmaps and small multiples of heatmaps on one colour scale, with the
// colour bar. See plot.h; plot_svg.h holds the elements, axes and frame.
#include <algorithm>
#include <cmath>

#include "plot/plot.h"
#include "plot/plot_svg.h"

namespace poslab {
namespace {

using namespace svg;

// Where v falls on the colour scale of m, in [0, 1] (clamped): linear, or its square root.
double color_fraction(const Heatmap& m, double v) {
  const double t = std::clamp((v - m.vmin) / (m.vmax - m.vmin), 0.0, 1.0);
  return m.sqrt_scale ? std::sqrt(t) : t;
}

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
  // With labels (e.g. the characters of a text), one tick per cell, named by its label.
  const auto label_axis = [&](size_t n, const std::vector<std::string>& labels, const char* what) {
    if (labels.empty()) return index_axis(n);
    require(labels.size() == n, "render_heatmap: expected " + std::to_string(n) + " " + what +
                                    " labels, but got " + std::to_string(labels.size()));
    Axis a;
    a.hi = std::max<double>(n, 1);
    for (size_t v = 0; v < n; ++v) a.ticks.push_back({v + 0.5, labels[v]});
    return a;
  };
  Axis x = label_axis(cols, m.col_labels, "column"), y = label_axis(rows, m.row_labels, "row");
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
                             attr("fill", viridis(color_fraction(m, v))));
    }
  }
  out += "</g>\n";
  draw_axes(out, f, x, y, /*grid=*/false);  // grid lines would cover cells
  draw_titles(out, f, m.title, title_class, m.xlabel, m.ylabel);
  return f;
}

// A vertical bar, kBarWidth wide, kBarGap right of the matrix: the viridis gradient from vmin
// (bottom) to vmax (top), labelled on its right with the nice ticks inside [vmin, vmax].
// kBarRoom is the width it needs, labels included (plot.h's kColorBarRoom).
constexpr double kBarGap = 14, kBarWidth = 14, kBarRoom = kBarGap + kBarWidth + 50;
static_assert(kBarRoom == kColorBarRoom);

void draw_colorbar(std::string& out, double x, double top, double bottom, const Heatmap& m) {
  const double vmin = m.vmin, vmax = m.vmax;
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
  if (m.sqrt_scale) {  // ticks where the square root spreads them: 0, 0.01, 0.05, 0.2, 0.5, 1
    a.ticks.clear();
    for (const double f : {0.0, 0.01, 0.05, 0.2, 0.5, 1.0}) {
      const double v = vmin + f * (vmax - vmin);
      a.ticks.push_back({v, fixed(v, 2)});
    }
  }
  for (const auto& t : a.ticks) {
    if (t.value < vmin - 1e-9 * (vmax - vmin) || t.value > vmax + 1e-9 * (vmax - vmin)) continue;
    const double py = bottom + color_fraction(m, t.value) * (top - bottom);
    line(out, x + kBarWidth, py, x + kBarWidth + kTickLen, py, "tick");
    text(out, x + kBarWidth + kTickLen + 3, py + 0.35 * kTickSize, t.label, "");
  }
}

}  // namespace

std::string render_heatmap(const Heatmap& m) {
  std::string out = svg_open(m.width, m.height);
  const Frame f = draw_heatmap(out, m, m.width - kBarRoom, "title middle");
  draw_colorbar(out, f.right + kBarGap, f.top, f.bottom, m);
  return out + "</svg>\n";
}

std::string render_heatmap_grid(const std::string& title, const std::vector<Heatmap>& panels,
                                int columns, const std::vector<std::string>& notes) {
  require(!panels.empty() && columns >= 1,
          "render_heatmap_grid: expected at least one panel and one column, but got " +
              std::to_string(panels.size()) + " panels and " + std::to_string(columns) +
              " columns");
  for (const auto& p : panels) {
    require(p.vmin == panels[0].vmin && p.vmax == panels[0].vmax &&
                p.sqrt_scale == panels[0].sqrt_scale,
            "render_heatmap_grid: expected every panel on the colour scale of '" + panels[0].title +
                "', but '" + p.title + "' has its own vmin, vmax or sqrt_scale");
  }
  // Every panel gets a cell as large as the largest panel, below a 36 px title row and an 18 px
  // row per note. The shared colour bar stands kBarGap right of the rightmost matrix and spans
  // the matrices from the first row to the last, so the panels are drawn first to find where
  // those lie.
  double cw = 0, ch = 0;
  for (const auto& p : panels) cw = std::max(cw, p.width), ch = std::max(ch, p.height);
  const size_t ncol = std::min<size_t>(columns, panels.size());
  const size_t nrow = (panels.size() + ncol - 1) / ncol;
  const double head = (title.empty() ? 0 : 36) + 18.0 * notes.size();
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
  // Wide enough for the panels and the bar, and for the title (15 px) and notes (12.5 px) with
  // 10 px to spare each side; the panels stay on the left.
  double width = bar_x - kBarGap + kBarRoom;
  width = std::max(width, text_width(title, 15) + 20);
  for (const std::string& n : notes) width = std::max(width, text_width(n, 12.5) + 20);
  std::string out = svg_open(width, head + nrow * ch);
  if (!title.empty()) text(out, width / 2, 26, title, "title middle");
  for (size_t i = 0; i < notes.size(); ++i)
    text(out, width / 2, (title.empty() ? 14 : 50) + 18.0 * i, notes[i], "label middle note");
  out += body;
  draw_colorbar(out, bar_x, bar_top, bar_bottom, panels[0]);
  return out + "</svg>\n";
}

}  // namespace poslab
