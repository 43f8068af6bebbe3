// plot.h — a small, dependency-free SVG plot writer: the study report's figures, attend's maps, the
// guide's.
//
// Each renderer returns a complete SVG document (a std::string):
//   render_line_plot     loss / metric curves; linear or log axes, legend, clipping at y_max
//   render_scatter       points in the plane with equal aspect, e.g. RoPE rotations (cos, sin)
//   render_heatmap       a matrix, row i top to bottom, column j left to right (attention maps)
//   render_heatmap_grid  small multiples: several heatmaps on one shared colour scale
//
// Conventions shared by every figure
//   - Output is deterministic: the same input gives the same bytes. Coordinates are printed
//     with two decimals, independent of the C++ locale.
//   - Non-finite values (NaN, ±inf) are skipped: a line plot shows a gap, a heatmap an empty
//     cell. On a log axis, values <= 0 are skipped the same way.
//   - All text (titles, labels, legend entries, colours) is XML-escaped; UTF-8 passes through.
//     The stylesheet names CJK fonts first, so Chinese text renders wherever the reader has one.
//   - Legible where people read it: GitHub shows an image at most kReadableWidth px wide and
//     shrinks a wider one, its 11 px text with it. A figure of many panels keeps within it.
//   - Series without a colour take the next colour of the Okabe–Ito palette, which stays
//     distinguishable under the common forms of colour blindness; `dashed` adds a second cue.
//   - A series may carry an interval per point (lo, hi): drawn as a shaded band around its
//     line, or as a vertical bar at each point.
//   - The legend stands outside the data: right of the plot area, the figure widened by its
//     width (the plot area keeps the size the formulas below give for `width`).
//   - Heatmaps use the viridis scale (perceptually uniform, colour-blind safe, prints in grey),
//     linear in the value or, with sqrt_scale, in its square root (small weights stay visible).
//   - Invalid input (x and y of different lengths, ragged heatmap rows, vmin >= vmax) throws
//     std::invalid_argument: "render_heatmap: expected every row to have 8 values, but ...".
//
// Axis layout (what the tests recompute). The plot area is the <rect class="plot-area">
// in the output, spanning pixels [left, right] x [top, bottom]. A value v lands at
//   linear axis:  px = left + (v - lo) / (hi - lo) * (right - left)
//   log axis:     px = left + (ln v - ln lo) / (ln hi - ln lo) * (right - left)
// (y axes run from bottom to top). A linear axis's [lo, hi] is the data range widened to
// whole multiples of its tick step (steps 1, 2 or 5 times a power of ten). A log axis's
// [lo, hi] is the data range widened by 4% of its log-span on each side (a factor of 2 each
// side when all values are equal). If every value on a log axis is a power of two (context
// lengths), ticks sit on powers of two, labelled 256, 512, 1k, 2k, 4k; otherwise ticks sit on
// decades, labelled 0.01, 1, 100, 10k (or 10^6, 10^-5 on an axis that reaches outside
// [0.001, 1M)), with minor ticks at 2..9 per decade. A short log axis labels 2 and 5 too, and
// an end whose outermost minor tick lies more than a factor 1.5 (and 8% of the log-span) beyond
// the nearest label labels that tick (a y axis from 2.6 to 45 is labelled 3, 5, 10, 20, 50).
#pragma once
#include <optional>
#include <string>
#include <vector>

namespace poslab {

// The widest an image is shown in GitHub's content column (px): a wider SVG is scaled down, so
// text of size f in an SVG of width w reads as f * min(1, kReadableWidth / w) px.
constexpr double kReadableWidth = 830;

// The language of a figure's words. The guide's figures come in both (docs/guide/NAME.svg and
// NAME.zh.svg) from the same code and numbers; each text is written once per language, side by
// side: in_lang(lang, "pair i", "第 i 对").
enum class Lang { en, zh };
inline const char* in_lang(Lang lang, const char* en, const char* zh) {
  return lang == Lang::zh ? zh : en;
}
// "en" or "zh" (a --lang flag's value); throws std::invalid_argument naming `flag` otherwise.
Lang parse_lang(const std::string& name, const std::string& flag);

// One curve or point set. x and y must have the same length.
struct Series {
  std::string label;  // legend entry; an empty label is left out of the legend
  std::vector<double> x, y;
  std::string color = "";  // any SVG colour ("#0072B2", "black"); "" = next palette colour
  bool dashed = false;
  bool markers = true;  // a marker at every finite point (turn off for long curves)
  // A 95% interval per point, lo[i] <= y[i] <= hi[i] (both empty = none; else as long as x):
  // a shaded band in the series' colour, or with `bars` a vertical bar at each point.
  // Non-finite ends leave a gap in the band; on a clipped axis the band is clipped too.
  std::vector<double> lo = {}, hi = {};
  bool bars = false;
  // Optional text beside each point ("" = none), e.g. the position a point stands for: above
  // and right of it, or left of it for the last point of a series with several.
  std::vector<std::string> point_labels = {};
};

struct LinePlot {
  std::string title, xlabel, ylabel;
  bool log_x = false, log_y = false;
  std::vector<Series> series;
  double width = 640, height = 400;  // SVG size in pixels
  // Values above y_max are drawn at y_max with an upward triangle (and a legend entry), so
  // one diverged run does not squash every other curve into the bottom of the plot.
  std::optional<double> y_max;
  // Lines of text under the legend, outside the data: how to read the figure ("band: 95% over
  // seeds", "log y axis").
  std::vector<std::string> notes = {};
  // The language of the words the renderer writes itself: the legend entry of clipped values.
  Lang lang = Lang::en;
};
std::string render_line_plot(const LinePlot& plot);

// Equal aspect: one unit on x is as many pixels as one unit on y, so circles stay round.
struct ScatterPlot {
  std::string title, xlabel, ylabel;
  std::vector<Series> series;
  bool equal_aspect = true;
  bool connect = true;          // join each series' points in order with a thin line
  bool unit_circle = true;      // draw x^2 + y^2 = 1 as a grey reference
  std::vector<double> circles;  // more grey reference circles around 0, of these radii
  double width = 480, height = 480;
};
std::string render_scatter(const ScatterPlot& plot);

// values[i][j] is drawn as the cell in row i (from the top) and column j (from the left).
// All rows must have the same length. Values outside [vmin, vmax] take the end colour.
struct Heatmap {
  std::string title, xlabel, ylabel;
  std::vector<std::vector<double>> values;
  double vmin = 0, vmax = 1;
  double width = 520, height = 460;  // SVG size, colour bar included; cells stay square
  // Optional names of the rows and columns (e.g. the characters of a text): one tick per cell
  // instead of the index ticks. Empty: index ticks 0, step, 2 step, ...
  std::vector<std::string> row_labels, col_labels;
  // Colour by sqrt((v - vmin) / (vmax - vmin)) instead of the linear fraction: small values
  // (most attention weights) get distinct colours; the colour bar's ticks follow.
  bool sqrt_scale = false;
};
std::string render_heatmap(const Heatmap& map);

// Small multiples, e.g. attention maps per scheme: `panels` left to right, top to bottom in
// `columns` columns, each in a cell as large as the largest panel's width x height (set them
// to ~300), under `title` and its `notes` (lines of how to read it, centred under the title)
// and beside one shared colour bar, kColorBarRoom px wide with its labels. Comparing colours
// across panels only makes sense on one scale, so every panel must have the same vmin, vmax and
// sqrt_scale. The figure widens to fit a title or note longer than the panels are wide.
constexpr double kColorBarRoom = 78;
std::string render_heatmap_grid(const std::string& title, const std::vector<Heatmap>& panels,
                                int columns, const std::vector<std::string>& notes = {});

// Writes text to a file; throws std::runtime_error naming the path if it cannot.
void write_text_file(const std::string& path, const std::string& text);

}  // namespace poslab
