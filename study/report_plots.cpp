// report_plots.cpp — the report's figures of measured numbers: perplexity and sliding-window
// difference against length, loss against position, RoPE scaling, training curves. Every
// figure gives a scheme the same colour (pe_color) and shades the 95% interval over seeds.
// Those the Chinese guide shows are drawn in both languages (save_bilingual): each text is
// written once per language, side by side, in in_lang(lang, en, zh).
#include <algorithm>
#include <cmath>
#include <map>

#include "plot/plot.h"
#include "study/report.h"

namespace poslab::report_detail {
namespace {

bool any_finite(const std::vector<Series>& series) {
  for (const auto& sr : series) {
    for (const double y : sr.y) {
      if (std::isfinite(y)) return true;
    }
  }
  return false;
}

// Adds point x to sr: y = f(mean over seeds); the band f(low)..f(high) of the 95% interval
// with 3+ seeds, from the lower to the higher seed with 2, none with 1. `ppl`: f = exp, the
// lower end clamped at 1.
void add_point(Series& sr, double x, const PerSeed& v, bool ppl = false) {
  const Interval i = interval_of(v);
  double lo = NAN, hi = NAN;
  if (i.n == 2) {
    lo = std::min(v.begin()->second, v.rbegin()->second);
    hi = std::max(v.begin()->second, v.rbegin()->second);
  } else if (i.has_spread()) {
    lo = i.low(), hi = i.high();
  }
  const auto f = [&](double y) { return ppl ? std::exp(y) : y; };
  sr.x.push_back(x);
  sr.y.push_back(i.n ? f(i.mean) : NAN);
  sr.lo.push_back(ppl ? std::max(1.0, f(lo)) : f(lo));
  sr.hi.push_back(f(hi));
}

// "rope", "rope (1 seed)".
std::string scheme_label(const Study& s, const Group& g, const std::string& pe, Lang l = Lang::en) {
  return pe + (group_seeds(s, g, pe).size() == 1 ? in_lang(l, " (1 seed)", "（1 个种子）") : "");
}

// The notes under every legend that shades an interval: what the band is.
std::vector<std::string> band_notes(Lang l) {
  return {in_lang(l, "band: 95% t interval (3+ seeds),", "阴影：95% t 区间（3 个及以上种子），"),
          in_lang(l, "the two seeds' values (2 seeds)", "或两个种子各自的值（2 个种子）")};
}
// The notes of a figure: the band's, then `more`.
std::vector<std::string> with_band(Lang l, std::vector<std::string> more) {
  std::vector<std::string> out = band_notes(l);
  out.insert(out.end(), more.begin(), more.end());
  return out;
}

// Perplexity axes stop at 10x the highest perplexity at the shortest length, so one scheme
// that blows up is drawn as triangles at the clip and the others keep the height.
double ppl_clip(const std::vector<Series>& series) {
  double top = 0;
  for (const auto& sr : series) {
    if (!sr.y.empty() && std::isfinite(sr.y.front())) top = std::max(top, sr.y.front());
  }
  return top > 0 ? 10 * top : INFINITY;
}

// A difference axis stops at twice the second-highest series' maximum (at least 0.05 nats),
// so one scheme that is far off does not flatten the others (its points become triangles).
std::optional<double> gap_clip(const std::vector<Series>& series) {
  std::vector<double> tops;
  for (const auto& sr : series) {
    double top = -INFINITY;
    for (const double y : sr.y) {
      if (std::isfinite(y)) top = std::max(top, y);
    }
    if (std::isfinite(top)) tops.push_back(top);
  }
  if (tops.size() < 2) return std::nullopt;
  std::sort(tops.rbegin(), tops.rend());
  const double clip = std::max(0.05, 2 * tops[1]);
  return tops[0] > clip ? std::optional<double>(clip) : std::nullopt;
}

// A vertical dashed grey line at x = T0 from lo to hi, labelled as the training length.
Series t0_line(long T0, double lo, double hi, Lang l) {
  Series sr{"T0 = " + std::to_string(T0) + in_lang(l, " (training length)", "（训练长度）"),
            {double(T0), double(T0)},
            {lo, hi},
            "#999999",
            true,
            false};
  return sr;
}

}  // namespace

// One colour per scheme. The six of study v4 keep Okabe & Ito's (plot_svg.cpp). Those v5 adds
// take the palette's sky blue (its yellow is too faint on white), then colours of Paul Tol's
// qualitative schemes ("Colour schemes and templates", SRON, 2021: muted and vibrant) that stay
// clear of the six, and a dark brown. Any other name is grey.
std::string pe_color(const std::string& pe) {
  static const std::map<std::string, std::string> kColors = {
      {"none", "#000000"},         {"learned", "#E69F00"},    {"sinusoidal", "#009E73"},
      {"rope", "#0072B2"},         {"alibi", "#D55E00"},      {"t5", "#CC79A7"},
      {"kerple", "#56B4E9"},       {"fire", "#332288"},       {"prope", "#44AA99"},
      {"rope_rand", "#999933"},    {"rope_nope4", "#882255"}, {"xpos", "#AA4499"},
      {"learned_rand", "#7A4A14"}, {"prope25", "#EE3377"}};
  const auto it = kColors.find(pe);
  return it == kColors.end() ? "#777777" : it->second;
}

std::string save(const Study& s, const std::string& name, const std::string& svg) {
  write_text_file(s.dir + "/plots/" + name + ".svg", svg);
  return "plots/" + name + ".svg";
}

std::string save_bilingual(const Study& s, const std::string& name,
                           const std::function<std::string(Lang)>& draw) {
  const std::string en = draw(Lang::en);
  if (en.empty()) return "";
  write_text_file(s.dir + "/plots/" + name + ".zh.svg", draw(Lang::zh));
  return save(s, name, en);
}

namespace {

// The axes every perplexity-against-length figure shares.
void ppl_axes(LinePlot& p, Lang l) {
  p.xlabel = in_lang(l, "evaluation length L (tokens)", "评测长度 L（字符）");
  p.ylabel = in_lang(l, "val perplexity (log scale)", "验证集困惑度（对数坐标）");
  p.log_x = p.log_y = true;
  p.lang = l;
}

std::string draw_ppl_vs_length(const Study& s, const Group& g, Lang l) {
  const auto lens = group_lengths(s, g);
  LinePlot p;
  ppl_axes(p, l);
  for (const auto& pe : group_pes(s, g)) {
    Series sr{scheme_label(s, g, pe, l), {}, {}, pe_color(pe)};
    for (const long L : lens) add_point(sr, L, eval_per_seed(s, g, pe, L), true);
    p.series.push_back(std::move(sr));
  }
  if (!any_finite(p.series)) return "";
  p.y_max = ppl_clip(p.series);
  p.title = in_lang(l, "Perplexity against length (T0 = ", "困惑度随长度的变化（T0 = ") +
            std::to_string(lens.front()) + in_lang(l, ")", "）");
  p.notes = with_band(
      l, {in_lang(l, "ppl band clamped at 1", "困惑度的阴影下限截在 1"),
          in_lang(l, "log axes; y clipped at ", "双对数坐标；y 轴截在 ") + fmt(*p.y_max, 3),
          in_lang(l, "(10x the highest ppl at T0)", "（T0 处最高困惑度的 10 倍）")});
  return render_line_plot(p);
}

std::string draw_loss_vs_position(const Study& s, Lang l) {
  if (s.lengths.empty()) return "";
  const long L = s.lengths.back();
  LinePlot p;
  p.title =
      in_lang(l, "Loss against position at L = ", "损失随位置的变化，L = ") + std::to_string(L);
  p.notes =
      with_band(l, {in_lang(l, "log x axis: bucket midpoints", "x 轴对数坐标，取各段的中点")});
  p.xlabel = in_lang(l, "position in the window (log scale)", "窗口内的位置（对数坐标）");
  p.ylabel = in_lang(l, "loss (nats)", "损失（nats）");
  p.log_x = true;
  p.lang = l;
  double lo = INFINITY, hi = -INFINITY, top = -INFINITY;
  for (const auto& pe : s.pes) {
    std::map<long, long> ends;
    const auto losses = position_losses(s, kMain, pe, L, &ends);
    Series sr{scheme_label(s, kMain, pe, l), {}, {}, pe_color(pe)};
    sr.markers = losses.size() <= 32;
    for (const auto& [start, v] : losses) add_point(sr, 0.5 * (start + ends[start]), v);
    for (const double y : sr.y) {
      if (std::isfinite(y)) lo = std::min(lo, y), hi = std::max(hi, y);
    }
    if (!sr.y.empty() && std::isfinite(sr.y.front())) top = std::max(top, sr.y.front());
    p.series.push_back(std::move(sr));
  }
  if (!any_finite(p.series)) return "";
  p.y_max = top + std::log(10.0);  // as the perplexity plots: 10x the first bucket's
  p.series.push_back(t0_line(s.train_len(), lo, std::min(hi, *p.y_max), l));
  return render_line_plot(p);
}

}  // namespace

std::string plot_ppl_vs_length(const Study& s, const Group& g, const std::string& name) {
  return save_bilingual(s, name, [&](Lang l) { return draw_ppl_vs_length(s, g, l); });
}

std::string plot_loss_vs_position(const Study& s) {
  return save_bilingual(s, "loss_vs_position", [&](Lang l) { return draw_loss_vs_position(s, l); });
}

std::string plot_sliding_gap(const Study& s) {
  LinePlot p;
  p.title = "Loss − sliding-window loss against length";
  p.notes = band_notes(Lang::en);
  p.xlabel = "evaluation length L (tokens)", p.ylabel = "difference (nats)";
  p.log_x = true;
  for (const auto& pe : s.pes) {
    Series sr{scheme_label(s, kMain, pe), {}, {}, pe_color(pe)};
    for (const long L : s.lengths) {
      add_point(sr, L, eval_per_seed(s, kMain, pe, L, "none", Measure::gap));
    }
    p.series.push_back(std::move(sr));
  }
  if (!any_finite(p.series)) return "";
  p.y_max = gap_clip(p.series);
  p.series.push_back({"0: no difference",
                      {double(s.lengths.front()), double(s.lengths.back())},
                      {0, 0},
                      "#999999",
                      true,
                      false});
  return save(s, "sliding_gap", render_line_plot(p));
}

std::string plot_sliding_gap_position(const Study& s) {
  if (s.lengths.empty()) return "";
  const long L = s.lengths.back();
  LinePlot p;
  p.title = "Loss − sliding-window loss per position at L = " + std::to_string(L);
  p.notes = band_notes(Lang::en);
  p.xlabel = "position in the window", p.ylabel = "difference (nats)";
  for (const auto& pe : s.pes) {
    std::map<long, long> ends;
    Series sr{scheme_label(s, kMain, pe), {}, {}, pe_color(pe)};
    for (const auto& [start, v] : position_losses(s, kMain, pe, L, &ends, "none", Measure::gap)) {
      add_point(sr, 0.5 * (start + ends[start]), v);
    }
    sr.markers = sr.x.size() <= 32;
    p.series.push_back(std::move(sr));
  }
  if (!any_finite(p.series)) return "";
  p.y_max = gap_clip(p.series);
  p.series.push_back({"0: no difference", {0, double(L)}, {0, 0}, "#999999", true, false});
  return save(s, "sliding_gap_position", render_line_plot(p));
}

namespace {

// "none (plain RoPE)", "linear", ...: the legend entry of a RoPE scaling.
std::string scaling_label(const std::string& sc, Lang l) {
  return sc == "none" ? in_lang(l, "none (plain RoPE)", "none（原始 RoPE）") : sc;
}

std::string draw_rope_scaling(const Study& s, Lang l) {
  LinePlot p;
  p.title = in_lang(l, "RoPE: perplexity against length per scaling",
                    "RoPE：各种缩放下困惑度随长度的变化");
  p.notes = with_band(l, {in_lang(l, "log axes", "双对数坐标")});
  ppl_axes(p, l);
  for (const auto& sc : rope_scalings(s)) {
    Series sr{scaling_label(sc, l), {}, {}};
    sr.dashed = sc == "none";
    for (const long L : s.lengths) {
      add_point(sr, L, eval_per_seed(s, kMain, "rope", L, sc), true);
    }
    p.series.push_back(std::move(sr));
  }
  if (p.series.size() <= 1 || !any_finite(p.series)) return "";
  return render_line_plot(p);
}

}  // namespace

std::string plot_rope_scaling(const Study& s) {
  return save_bilingual(s, "rope_scaling", [&](Lang l) { return draw_rope_scaling(s, l); });
}

std::string plot_training_curves(const Study& s, const Group& g, const std::string& corpus,
                                 const std::string& name) {
  LinePlot p;
  p.title = std::string("Val loss") + std::string(" during training, with the add-k n-gram lines");
  p.xlabel = "step", p.ylabel = "val loss (nats)";
  double x0 = INFINITY, x1 = -INFINITY;
  for (const auto& pe : group_pes(s, g)) {
    const auto seeds = group_seeds(s, g, pe);
    for (const long seed : seeds) {
      const auto it = s.curves.find(g.name(pe, seed));
      if (it == s.curves.end()) continue;
      Series sr{seed == seeds.front() ? pe : "", {}, {}, pe_color(pe), seed != seeds.front()};
      for (const auto& c : it->second) {  // steps without an evaluation log val_loss = nan
        if (std::isfinite(c.val_loss)) sr.x.push_back(c.step), sr.y.push_back(c.val_loss);
      }
      sr.markers = false;
      if (!sr.x.empty()) x0 = std::min(x0, sr.x.front()), x1 = std::max(x1, sr.x.back());
      p.series.push_back(std::move(sr));
    }
  }
  if (!any_finite(p.series)) return "";
  p.series.push_back({"later seeds: dashed", {}, {}, "#666666", true, false});
  bool first = true;
  for (long n = 1; n <= 5; ++n) {
    const double v = ngram_loss(s, corpus, n);
    if (std::isnan(v)) continue;
    Series sr{first ? "add-k n-gram models" : "", {x0, x1}, {v, v}, "#999999", true, false};
    // labels alternate between the ends, so neighbouring lines do not overwrite each other
    sr.point_labels = {std::to_string(n) + "-gram", ""};
    if (n % 2 == 0) std::swap(sr.point_labels[0], sr.point_labels[1]);
    p.series.push_back(std::move(sr));
    first = false;
  }
  return save(s, name, render_line_plot(p));
}

namespace {

std::string draw_rope_scaling_position(const Study& s, Lang l) {
  const auto scalings = rope_scalings(s);
  if (s.lengths.empty() || scalings.size() <= 1) return "";
  const long L = s.lengths.back();
  LinePlot p;
  p.title = l == Lang::zh
                ? "RoPE：各种缩放下损失随位置的变化，L = " + std::to_string(L)
                : "RoPE: loss against position at L = " + std::to_string(L) + " per scaling";
  p.xlabel = in_lang(l, "position in the window", "窗口内的位置");
  p.ylabel = in_lang(l, "loss (nats)", "损失（nats）");
  p.lang = l;
  for (const auto& sc : scalings) {
    std::map<long, long> ends;
    Series sr{scaling_label(sc, l), {}, {}};
    sr.dashed = sc == "none";
    for (const auto& [start, v] : position_losses(s, kMain, "rope", L, &ends, sc)) {
      add_point(sr, 0.5 * (start + ends[start]), v);
    }
    sr.markers = sr.x.size() <= 32;
    if (!sr.x.empty()) p.series.push_back(std::move(sr));
  }
  if (!any_finite(p.series)) return "";
  p.notes = band_notes(l);
  return render_line_plot(p);
}

// The base is theta in the report, b in the Chinese guide (θ_i = b^(−2i/D)).
std::string draw_rope_theta(const Study& s, Lang l) {
  LinePlot p;
  p.title = in_lang(l, "RoPE: perplexity against length per base theta",
                    "RoPE：不同底数 b 下困惑度随长度的变化");
  p.notes = with_band(l, {in_lang(l, "log axes", "双对数坐标")});
  ppl_axes(p, l);
  const auto seeds10 = group_seeds(s, kTheta10, "rope");
  // theta 10000: the main runs' B/4 branches, trained as long as the theta runs (the table's rule)
  for (const auto& [g, label] :
       {std::pair{kTheta10, in_lang(l, "theta 10", "b = 10")},
        std::pair{kB4, in_lang(l, "theta 10000 (B/4 branches)", "b = 10000（B/4 分支）")},
        std::pair{kTheta1e6, in_lang(l, "theta 1e6", "b = 1e6")}}) {
    Series sr{label, {}, {}};
    for (const long L : s.lengths) {
      PerSeed v = eval_per_seed(s, g, "rope", L);
      if (g.suffix == kB4.suffix && !seeds10.empty()) {  // on the ablation's seeds
        std::erase_if(v, [&](const auto& kv) {
          return std::find(seeds10.begin(), seeds10.end(), kv.first) == seeds10.end();
        });
      }
      add_point(sr, L, v, true);
    }
    p.series.push_back(std::move(sr));
  }
  if (group_seeds(s, kTheta10, "rope").empty() && group_seeds(s, kTheta1e6, "rope").empty()) {
    return "";
  }
  return render_line_plot(p);
}

}  // namespace

std::string plot_rope_scaling_position(const Study& s) {
  return save_bilingual(s, "rope_scaling_position",
                        [&](Lang l) { return draw_rope_scaling_position(s, l); });
}

std::string plot_rope_theta(const Study& s) {
  return save_bilingual(s, "rope_theta", [&](Lang l) { return draw_rope_theta(s, l); });
}

std::string plot_unseen_vs_length(const Study& s) {
  const long T0 = s.train_len();
  LinePlot p;
  p.title = "Loss on unseen positions [T0, 4T0) against length (T0 = " + std::to_string(T0) + ")";
  p.xlabel = "evaluation length L (tokens)", p.ylabel = "loss on [T0, 4T0) (nats)";
  p.log_x = true;
  p.notes = with_band(Lang::en, {"log x axis"});
  size_t points = 0;
  for (const auto& pe : s.pes) {
    Series sr{scheme_label(s, kMain, pe), {}, {}, pe_color(pe)};
    for (const long L : s.lengths) {
      const PerSeed v = unseen_per_seed(s, kMain, pe, L, 1);
      if (!v.empty()) add_point(sr, L, v);
    }
    points = std::max(points, sr.x.size());
    p.series.push_back(std::move(sr));
  }
  if (points < 2) return "";  // one length: the table says it, a figure would not
  p.y_max = gap_clip(p.series);
  return save(s, "unseen_vs_length", render_line_plot(p));
}

std::string plot_budget(const Study& s) {
  LinePlot p;
  p.title = "Val loss at T0 against the training budget (mean over seeds)";
  p.xlabel = "tokens trained on (log scale)", p.ylabel = "val loss (nats)";
  p.log_x = true;
  double x0 = INFINITY, x1 = -INFINITY;
  for (const auto& pe : s.pes) {
    const Budget b = budget_of(s, pe);
    Series sr{pe, {}, {}, pe_color(pe)};
    for (const auto& [g, v] : {std::pair{kB4, b.b4}, {kB2, b.b2}, {kMain, b.b}}) {
      const std::vector<const RunRow*> runs = group_runs(s, g, pe);
      if (runs.empty() || !std::isfinite(v)) continue;
      const double tokens = runs.front()->tokens;
      sr.x.push_back(tokens), sr.y.push_back(v);
      x0 = std::min(x0, tokens), x1 = std::max(x1, tokens);
    }
    if (sr.x.size() >= 2) p.series.push_back(std::move(sr));
  }
  if (p.series.empty()) return "";
  for (const long n : {3L, 5L}) {
    const double v = ngram_loss(s, main_corpus(s), n);
    if (std::isnan(v)) continue;
    Series sr{"", {x0, x1}, {v, v}, "#999999", true, false};
    sr.point_labels = {std::to_string(n) + "-gram", ""};
    p.series.push_back(std::move(sr));
  }
  return save(s, "budget", render_line_plot(p));
}

}  // namespace poslab::report_detail
