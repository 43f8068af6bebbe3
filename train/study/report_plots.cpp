// report_plots.cpp — the report's SVG figures, drawn with plot.h.
// Every figure that compares schemes gives each scheme the same colour (pe_color), and every
// perplexity axis is logarithmic and clipped at kPplClip, so one model that blows up at long
// lengths is drawn as triangles at the clip instead of squashing the others flat.
#include <algorithm>
#include <cmath>

#include "train/study/plot.h"
#include "train/study/report.h"

namespace poslab::report_detail {
namespace {

constexpr double kPplClip = 1e3;  // perplexity axes stop here
const double kLossClip = std::log(kPplClip);

std::string save(const Study& s, const std::string& name, const std::string& svg) {
  write_text_file(s.dir + "/plots/" + name + ".svg", svg);
  return "plots/" + name + ".svg";
}

std::vector<double> lengths_x(const Study& s) {
  return std::vector<double>(s.lengths.begin(), s.lengths.end());
}

// True if any y in the series is a number (a plot of only gaps is not worth drawing).
bool any_finite(const std::vector<Series>& series) {
  for (const auto& sr : series) {
    for (const double y : sr.y) {
      if (std::isfinite(y)) return true;
    }
  }
  return false;
}

LinePlot ppl_plot(const std::string& title) {
  LinePlot p;
  p.title = title, p.xlabel = "evaluation length L (tokens)", p.ylabel = "val perplexity";
  p.log_x = p.log_y = true;
  p.y_max = kPplClip;
  return p;
}

// The main run of `pe` with the lowest seed that has position rows for `scaling`, at its
// longest length: loss against the middle of each position bucket.
Series position_series(const Study& s, const std::string& pe, const std::string& scaling,
                       long& len) {
  Series sr;
  if (!s.positions) return sr;
  std::string run;
  long seed = 0;
  len = 0;
  for (const auto& r : *s.positions) {
    if (r.pe != pe || r.scaling != scaling) continue;
    for (const Run* m : s.main_runs(pe)) {
      if (m->run == r.run && (run.empty() || m->seed < seed)) run = r.run, seed = m->seed;
    }
  }
  for (const auto& r : *s.positions) {
    if (r.run == run && r.scaling == scaling) len = std::max(len, r.len);
  }
  for (const auto& r : *s.positions) {
    if (r.run == run && r.scaling == scaling && r.len == len) {
      sr.x.push_back(0.5 * (r.start + r.end)), sr.y.push_back(r.loss);
    }
  }
  sr.label = scaling == "none" ? pe : scaling;
  sr.markers = sr.x.size() <= 32;
  return sr;
}

// Loss-vs-position figure: the series, plus a grey dashed vertical line at T0.
std::string position_plot(const Study& s, const std::string& name, const std::string& title,
                          std::vector<Series> series, long len) {
  if (!any_finite(series)) return "";
  double lo = INFINITY, hi = -INFINITY;
  for (const auto& sr : series) {
    for (const double y : sr.y) {
      if (std::isfinite(y)) lo = std::min(lo, y), hi = std::max(hi, std::min(y, kLossClip));
    }
  }
  if (s.train_len() > 0) {
    series.push_back({"T0 = " + std::to_string(s.train_len()) + " (training length)",
                      {double(s.train_len()), double(s.train_len())},
                      {lo, hi},
                      "#999999",
                      true,
                      false});
  }
  LinePlot p;
  p.title = title + " (L = " + std::to_string(len) + ")";
  p.xlabel = "position in the window", p.ylabel = "loss (nats)";
  p.series = std::move(series);
  p.y_max = kLossClip;
  return save(s, name, render_line_plot(p));
}

}  // namespace

std::string pe_color(const std::string& pe) {
  if (pe == "none") return "#000000";
  if (pe == "learned") return "#E69F00";
  if (pe == "sinusoidal") return "#56B4E9";
  if (pe == "rope") return "#0072B2";
  if (pe == "alibi") return "#D55E00";
  return "#009E73";
}

std::string plot_training_curves(const Study& s) {
  LinePlot p;
  p.title = "Validation loss during training";
  p.xlabel = "step", p.ylabel = "val loss (nats)";
  for (const auto& pe : s.pes) {
    for (const Run* r : s.main_runs(pe)) {
      const auto it = s.curves.find(r->run);
      if (it == s.curves.end()) continue;
      // One legend entry per scheme (its first seed); the dashed-line entry explains the rest.
      Series sr;
      sr.label = r == s.main_runs(pe).front() ? pe : "";
      sr.color = pe_color(pe), sr.dashed = r->seed >= 2;
      for (const auto& c : it->second) {  // steps without an evaluation log val_loss = nan
        if (std::isfinite(c.val_loss)) sr.x.push_back(c.step), sr.y.push_back(c.val_loss);
      }
      sr.markers = sr.x.size() <= 30;
      p.series.push_back(std::move(sr));
    }
  }
  if (!any_finite(p.series)) return "";
  p.series.push_back({"dashed: seed 2 and later", {}, {}, "#666666", true, false});
  return save(s, "training_curves", render_line_plot(p));
}

std::string plot_ppl_vs_length(const Study& s) {
  LinePlot p = ppl_plot("Perplexity against evaluation length (trained at T0 = " +
                        std::to_string(s.train_len()) + ")");
  for (const auto& pe : s.pes) {
    Series sr{pe, lengths_x(s), {}, pe_color(pe)};
    for (const long L : s.lengths) sr.y.push_back(eval_ppl(s, pe, "none", L).mean);
    p.series.push_back(std::move(sr));
  }
  if (!any_finite(p.series)) return "";
  return save(s, "ppl_vs_length", render_line_plot(p));
}

std::string plot_loss_vs_position(const Study& s) {
  std::vector<Series> series;
  long len = 0;
  for (const auto& pe : s.pes) {
    long l = 0;
    series.push_back(position_series(s, pe, "none", l));
    series.back().color = pe_color(pe);
    len = std::max(len, l);
  }
  return position_plot(s, "loss_vs_position", "Loss against position, seed 1", series, len);
}

std::string plot_rope_scaling(const Study& s) {
  LinePlot p = ppl_plot("RoPE: perplexity against length, per scaling method");
  for (const auto& sc : rope_scalings(s)) {
    Series sr{sc, lengths_x(s), {}};
    sr.dashed = sc == "none";
    for (const long L : s.lengths) sr.y.push_back(scaled_rope_ppl(s, sc, L).mean);
    p.series.push_back(std::move(sr));
  }
  if (p.series.size() <= 1 || !any_finite(p.series)) return "";
  return save(s, "rope_scaling", render_line_plot(p));
}

std::string plot_rope_scaling_position(const Study& s) {
  std::vector<Series> series;
  long len = 0;
  for (const auto& sc : rope_scalings(s)) {
    long l = 0;
    series.push_back(position_series(s, "rope", sc, l));
    series.back().label = sc, series.back().dashed = sc == "none";
    len = std::max(len, l);
  }
  if (series.size() <= 1) return "";
  return position_plot(s, "rope_scaling_position", "RoPE: loss against position per scaling",
                       series, len);
}

std::string plot_rope_theta(const Study& s) {
  LinePlot p = ppl_plot("RoPE: perplexity against length, per base theta");
  for (const Run* r : theta_runs(s)) {
    Series sr{"theta = " + fmt_plain(r->theta) + " (" + r->run + ")", lengths_x(s), {}};
    for (const long L : s.lengths) sr.y.push_back(eval_ppl_run(s, r->run, "none", L).mean);
    p.series.push_back(std::move(sr));
  }
  if (!any_finite(p.series)) return "";
  return save(s, "rope_theta", render_line_plot(p));
}

std::string plot_rope_rotation(const Study& s) {
  // From the formula, not from the runs: pair i of a head of dim D turns by
  // a = p * theta^(-2i/D) at position p; its two coordinates move on the circle (cos a, sin a).
  constexpr int kD = 32, kPositions = 64;
  constexpr double kTheta = 10000;
  ScatterPlot p;
  p.title =
      "RoPE rotation of positions 0.." + std::to_string(kPositions - 1) + " (theta 10000, D 32)";
  p.xlabel = "cos(a)", p.ylabel = "sin(a)";
  for (const int i : {0, kD / 8, kD / 2 - 1}) {
    const double freq = std::pow(kTheta, -2.0 * i / kD);
    Series sr;
    sr.label = "pair i=" + std::to_string(i) + ": " + fmt(freq, 3) + " rad/token";
    for (int pos = 0; pos < kPositions; ++pos) {
      sr.x.push_back(std::cos(pos * freq)), sr.y.push_back(std::sin(pos * freq));
    }
    p.series.push_back(std::move(sr));
  }
  return save(s, "rope_rotation", render_scatter(p));
}

std::string plot_attention(const Study& s) {
  // One colour scale for all panels. Causal row 0 always puts weight 1 on key 0, so the scale
  // tops out at the 99th percentile of all weights rather than at the maximum; larger weights
  // take the top colour.
  std::vector<double> all;
  std::vector<std::string> pes;
  for (const auto& [pe, m] : s.attention) {
    pes.push_back(pe);
    for (const auto& row : m) {
      for (const double v : row) {
        if (std::isfinite(v)) all.push_back(v);
      }
    }
  }
  if (all.empty()) return "";
  std::sort(all.begin(), all.end());
  double vmax = all[static_cast<size_t>(0.99 * (all.size() - 1))];
  if (!(vmax > 0)) vmax = all.back() > 0 ? all.back() : 1;
  std::vector<Heatmap> panels;
  for (const auto& pe : order_pes(pes)) {
    Heatmap h;
    h.title = pe, h.xlabel = "key position", h.ylabel = "query position";
    h.values = s.attention.at(pe);
    h.vmin = 0, h.vmax = vmax;
    h.width = 300, h.height = 290;
    panels.push_back(std::move(h));
  }
  const int columns = static_cast<int>(std::min<size_t>(3, panels.size()));
  return save(s, "attention",
              render_heatmap_grid("Attention weights, layer 0, mean over heads (colour scale "
                                  "0 to " +
                                      fmt(vmax, 3) + ")",
                                  panels, columns));
}

}  // namespace poslab::report_detail
