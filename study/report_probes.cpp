// report_probes.cpp — the three probes of every main run (SPEC 7.4-7.6), a table and a figure
// each: attribution (which intervention removes the loss on unseen positions), copy at a
// distance (is the longer context usable) and RoPE frequency by frequency. The Chinese guide
// shows the three figures: each is drawn in both languages (save_bilingual).
#include <algorithm>
#include <cmath>
#include <map>
#include <set>

#include "plot/plot.h"
#include "study/report_sections.h"

namespace poslab::report_detail {
namespace {

// A grey dashed vertical line at x from lo to hi, with a legend entry.
Series vertical(const std::string& label, double x, double lo, double hi) {
  return {label, {x, x}, {lo, hi}, "#999999", true, false};
}

// The finite y range of every series (NaN, NaN if none).
std::pair<double, double> y_range(const std::vector<Series>& series) {
  double lo = INFINITY, hi = -INFINITY;
  for (const auto& sr : series) {
    for (const double y : sr.y) {
      if (std::isfinite(y)) lo = std::min(lo, y), hi = std::max(hi, y);
    }
  }
  return lo <= hi ? std::pair{lo, hi} : std::pair{double(NAN), double(NAN)};
}

// ---------------------------------------------------------------- attribution

// The attribution measurements of one scheme, each a mean over its seeds (NaN if absent).
// ref: windows of T0 at offset 0; plain, window, log: loss_unseen of the long windows;
// offsets: windows of T0 at offset P > 0, by P.
struct Attribution {
  double ref = NAN, plain = NAN, window = NAN, log = NAN;
  std::map<long, double> offsets;
  int seeds = 0;
  double excess() const { return plain - ref; }
};

Attribution attribution_of(const Study& s, const std::string& pe) {
  const long T0 = s.train_len();
  std::map<std::string, std::vector<double>> v;
  std::set<long> seeds;
  for (const auto& a : *s.attribution) {
    if (a.pe != pe || a.run != kMain.name(pe, a.seed)) continue;
    seeds.insert(a.seed);
    if (a.len == T0 && a.position_offset == 0) v["ref"].push_back(a.loss);
    if (a.len == T0 && a.position_offset > 0) {
      v["offset " + std::to_string(a.position_offset)].push_back(a.loss);
    }
    if (a.len <= T0 || a.position_offset != 0) continue;
    if (a.attention_window > 0)
      v["window"].push_back(a.loss_unseen);
    else if (a.logit_scale == "log")
      v["log"].push_back(a.loss_unseen);
    else
      v["plain"].push_back(a.loss_unseen);
  }
  Attribution out;
  out.seeds = seeds.size();
  const auto mean = [&](const std::string& k) { return mean_interval(v[k]).mean; };
  out.ref = mean("ref"), out.plain = mean("plain"), out.window = mean("window");
  out.log = mean("log");
  for (const auto& [k, x] : v) {
    if (k.rfind("offset ", 0) == 0) out.offsets[std::stol(k.substr(7))] = mean_interval(x).mean;
  }
  return out;
}

constexpr double kMinExcess = 0.01;  // nats: below it a share of the excess is not printed

// What share of the excess an intervention removes: (plain - with it) / excess.
std::string share(const Attribution& a, double with) {
  if (!(a.excess() >= kMinExcess) || std::isnan(with)) return "n/a";
  return fmt_percent((a.plain - with) / a.excess());
}

using ByScheme = std::vector<std::pair<std::string, Attribution>>;  // in the study's order

std::string draw_attribution(const ByScheme& by_pe, const std::vector<long>& offsets, Lang l) {
  Heatmap h;
  h.title = in_lang(l, "Attribution: loss − loss at T0 (nats), mean over seeds",
                    "归因：损失减去 T0 上的损失（nats），各种子平均");
  h.xlabel = in_lang(l, "evaluation", "评测方式");
  h.ylabel = in_lang(l, "scheme", "方案");
  h.col_labels = {in_lang(l, "plain", "原样"), in_lang(l, "win", "窗口"),
                  in_lang(l, "log", "对数")};
  for (const long P : offsets) h.col_labels.push_back("P=" + std::to_string(P));
  double lo = 0, hi = 0;
  for (const auto& [pe, a] : by_pe) {
    h.row_labels.push_back(pe);
    h.values.push_back({a.plain - a.ref, a.window - a.ref, a.log - a.ref});
    for (const long P : offsets) {
      h.values.back().push_back(a.offsets.count(P) ? a.offsets.at(P) - a.ref : NAN);
    }
    for (const double x : h.values.back()) {
      if (std::isfinite(x)) lo = std::min(lo, x), hi = std::max(hi, x);
    }
  }
  if (h.values.empty() || !(hi > lo)) return "";
  h.vmin = lo, h.vmax = hi;
  h.width = 620, h.height = 120 + 40 * h.values.size();
  return render_heatmap(h);
}

std::string plot_attribution(const Study& s, const ByScheme& by_pe,
                             const std::vector<long>& offsets) {
  return save_bilingual(s, "attribution",
                        [&](Lang l) { return draw_attribution(by_pe, offsets, l); });
}

}  // namespace

void attribution_section(Markdown& md, const Study& s) {
  md.heading("Attribution: unseen positions, unseen distances, attention dilution");
  if (!s.attribution) return md.not_run("attribution.csv");
  std::set<long> offsets;
  for (const auto& a : *s.attribution) {
    if (a.position_offset > 0) offsets.insert(a.position_offset);
  }
  ByScheme by_pe;
  Rows rows;
  for (const auto& pe : s.pes) {
    const Attribution a = attribution_of(s, pe);
    if (a.seeds == 0) continue;
    by_pe.push_back({pe, a});
    rows.push_back(
        {pe, std::to_string(a.seeds), fmt(a.ref), fmt(a.plain), fmt(a.window), fmt(a.log)});
    for (const long P : offsets) {
      rows.back().push_back(a.offsets.count(P) ? fmt(a.offsets.at(P)) : "n/a");
    }
    rows.back().push_back(fmt_signed(a.excess()));
    rows.back().push_back(share(a, a.window));
    rows.back().push_back(share(a, a.log));
    const double last = offsets.empty() || !a.offsets.count(*offsets.rbegin())
                            ? NAN
                            : a.offsets.at(*offsets.rbegin());
    rows.back().push_back(a.excess() >= kMinExcess && std::isfinite(last)
                              ? fmt_percent((last - a.ref) / a.excess())
                              : "n/a");
  }
  std::vector<std::string> h = {
      "pe", "seeds", "loss T0", "unseen plain", "unseen window T0", "unseen log scale"};
  for (const long P : offsets) h.push_back("offset " + std::to_string(P));
  h.insert(h.end(), {"excess", "removed by window", "removed by log scale", "offset share"});
  const std::string P_last = offsets.empty() ? "P" : std::to_string(*offsets.rbegin());
  md.table(
      "attribution.csv, every main run, mean over seeds (nats). loss T0 = loss of windows of "
      "length T0 at position 0; unseen plain / window T0 / log scale = loss on the unseen "
      "positions [T0, L) of the long windows, plain, with --attention-window T0, with "
      "--logit-scale log; offset P = loss of windows of length T0 placed at positions "
      "P..P+T0−1 (--position-offset P). excess = unseen plain − loss T0. removed by X = "
      "(unseen plain − unseen with X) / excess; offset share = (offset " +
          P_last + " − loss T0) / excess. Shares are printed only where the excess is at least " +
          fmt(kMinExcess) + " nats.",
      h, rows);
  md.figure(plot_attribution(s, by_pe, {offsets.begin(), offsets.end()}), "attribution",
            "the same measurements minus loss T0 (nats), one row per scheme; columns: unseen "
            "plain, with window T0 (win), with log scale (log), windows at offset P; colour "
            "scale from the lowest to the highest value.");
}

// ---------------------------------------------------------------- copy at a distance

long nearest_distance(const Study& s, long d) {
  long best = 0;
  for (const auto& c : s.copy ? *s.copy : std::vector<CopyCsvRow>{}) {
    if (c.distance <= 0) continue;
    if (best == 0 ||
        std::abs(std::log(double(c.distance) / d)) < std::abs(std::log(double(best) / d))) {
      best = c.distance;
    }
  }
  return best;
}

PerSeed copy_gain_per_seed(const Study& s, const std::string& pe, long d) {
  PerSeed out;
  for (const auto& c : s.copy ? *s.copy : std::vector<CopyCsvRow>{}) {
    if (c.pe == pe && c.distance == d && c.run == kMain.name(pe, c.seed)) {
      out[c.seed] = c.loss_control - c.loss_planted;
    }
  }
  return out;
}

namespace {

// The distance is d in the report, Δ in the Chinese guide.
std::string draw_copy(const Study& s, const std::vector<long>& distances, Lang l) {
  LinePlot p;
  p.title = in_lang(l, "Copy gain against distance (every main run)",
                    "copy gain 随距离的变化（所有主实验）");
  p.xlabel =
      in_lang(l, "distance d between the two copies (characters)", "两份副本之间的距离 Δ（字符）");
  p.ylabel = in_lang(l, "loss_control − loss_planted (nats/char)",
                     "loss_control − loss_planted（nats/字符）");
  p.log_x = true;
  p.lang = l;
  for (const auto& pe : s.pes) {
    const auto seeds = group_seeds(s, kMain, pe);
    for (const long seed : seeds) {
      Series sr{seed == seeds.front() ? pe : "", {}, {}, pe_color(pe), seed != seeds.front()};
      for (const long d : distances) {
        const PerSeed g = copy_gain_per_seed(s, pe, d);
        if (g.count(seed)) sr.x.push_back(d), sr.y.push_back(g.at(seed));
      }
      if (!sr.x.empty()) p.series.push_back(std::move(sr));
    }
  }
  const auto [lo, hi] = y_range(p.series);
  if (std::isnan(lo)) return "";
  p.series.push_back(
      {in_lang(l, "later seeds: dashed", "其余种子：虚线"), {}, {}, "#666666", true, false});
  p.series.push_back(vertical("T0 = " + std::to_string(s.train_len()), s.train_len(), lo, hi));
  p.notes = {in_lang(l, "one line per run", "每个实验一条线"),
             in_lang(l, "log x axis", "x 轴对数坐标")};
  return render_line_plot(p);
}

std::string plot_copy(const Study& s, const std::vector<long>& distances) {
  return save_bilingual(s, "copy_gain", [&](Lang l) { return draw_copy(s, distances, l); });
}

}  // namespace

namespace {

// Which runs' models were made again for a measurement added since (retrained.csv), and whether
// each one's training log equals the one it was first made with.
std::string retrained_text(const Study& s) {
  if (!s.retrained) return "every model was the one its run made (retrained.csv: none).";
  std::vector<std::string> same, other;
  for (const auto& r : *s.retrained) (r.same_log ? same : other).push_back(r.run);
  return "the models of " + std::to_string(s.retrained->size()) +
         " runs made earlier were made again here, their first models not being kept "
         "(retrained.csv); the new training log equals the old row by row for " +
         (same.empty() ? std::string("none") : join(same)) + "; it differs for " +
         (other.empty() ? std::string("none") : join(other)) + ".";
}

}  // namespace

void copy_section(Markdown& md, const Study& s) {
  md.heading("Copy at a distance");
  if (!s.copy) return md.not_run("copy.csv");
  std::set<long> ds;
  long n = 0;
  for (const auto& c : *s.copy) ds.insert(c.distance), n = std::max(n, c.n);
  const std::vector<long> distances(ds.begin(), ds.end());
  Rows rows, shares;
  for (const auto& pe : s.pes) {
    rows.push_back({pe}), shares.push_back({pe});
    for (const long d : distances) {
      rows.back().push_back(fmt_nats(copy_gain_per_seed(s, pe, d)));
      PerSeed share, control;
      for (const auto& c : *s.copy)
        if (c.pe == pe && c.distance == d && c.run == kMain.name(pe, c.seed))
          share[c.seed] = c.share, control[c.seed] = c.loss_control;
      shares.back().push_back(share.empty() ? "n/a"
                                            : fmt_percent(interval_of(share).mean) + " of " +
                                                  fmt(interval_of(control).mean));
    }
  }
  std::vector<std::string> h = {"pe"};
  for (const long d : distances) h.push_back("d=" + std::to_string(d));
  md.table(
      "copy.csv (copy v2): m consecutive characters of the train split (in-distribution text) "
      "planted twice in val text, after a lead of val text, the second copy d characters after "
      "the first; copy gain = loss_control − loss_planted on the second copy's last m − 1 "
      "characters (nats per character; control: the first copy's characters shuffled, the same "
      "bag, so a gain is order-aware copying, not a cache of characters), " +
          std::to_string(n) +
          " examples per distance, the same for every model; mean over seeds ± the 95% "
          "half-width (3+ seeds) or both values (2 seeds). Every main model of the plan is "
          "probed; " +
          retrained_text(s),
      h, rows);
  md.table(
      "The share of the control's loss the copy removes (copy.csv share = gain / "
      "loss_control), mean over seeds, \"of\" the control's loss (nats per character).",
      h, shares);
  md.figure(plot_copy(s, distances), "copy gain",
            "copy gain against d, one line per main run (seed 1 solid, later seeds dashed), "
            "log x axis; grey dashed: the training length T0.");
}

// ---------------------------------------------------------------- RoPE pairs

namespace {

// rope_pairs.csv: seed -> pair -> (wavelength, loss_unseen minus the plain model's).
std::map<long, std::map<long, std::pair<double, double>>> pair_changes(const Study& s) {
  std::map<long, double> plain;
  for (const auto& r : *s.rope_pairs) {
    if (r.pair < 0) plain[r.seed] = r.loss_unseen;
  }
  std::map<long, std::map<long, std::pair<double, double>>> out;
  for (const auto& r : *s.rope_pairs) {
    if (r.pair >= 0 && plain.count(r.seed)) {
      out[r.seed][r.pair] = {r.wavelength, r.loss_unseen - plain.at(r.seed)};
    }
  }
  return out;
}

std::string draw_rope_pairs(const Study& s, double T0, Lang l) {
  LinePlot p;
  p.title = in_lang(l, "RoPE: one pair interpolated at a time", "RoPE：每次只插值一对");
  p.xlabel = in_lang(l, "wavelength / T0 of the interpolated pair", "被插值那一对的波长 / T0");
  p.ylabel = in_lang(l, "Δ loss on unseen positions (nats)", "没见过的位置上损失的变化（nats）");
  p.log_x = true;
  p.lang = l;
  for (const auto& [seed, pairs] : pair_changes(s)) {
    Series sr{
        in_lang(l, "seed ", "种子 ") + std::to_string(seed), {}, {}, pe_color("rope"), seed != 1};
    for (const auto& [pair, wd] : pairs) sr.x.push_back(wd.first / T0), sr.y.push_back(wd.second);
    p.series.push_back(std::move(sr));
  }
  const auto [lo, hi] = y_range(p.series);
  if (std::isnan(lo)) return "";
  p.series.push_back(vertical(
      in_lang(l, "YaRN: 1/alpha = 1, 1/beta = 1/32", "YaRN：1/α = 1，1/β = 1/32"), 1, lo, hi));
  p.series.push_back(vertical("", 1.0 / 32, lo, hi));
  p.notes = {in_lang(l, "log x axis", "x 轴对数坐标"),
             in_lang(l, "YaRN interpolates pairs right of 1,", "YaRN 插值 1 右边的各对，"),
             in_lang(l, "leaves those left of 1/32", "1/32 左边的保持不变")};
  return render_line_plot(p);
}

std::string plot_rope_pairs(const Study& s, double T0) {
  return save_bilingual(s, "rope_pairs", [&](Lang l) { return draw_rope_pairs(s, T0, l); });
}

}  // namespace

void rope_pairs_section(Markdown& md, const Study& s) {
  md.heading("RoPE, frequency by frequency");
  if (!s.rope_pairs) return md.not_run("rope_pairs.csv");
  const double T0 = s.train_len();
  const auto changes = pair_changes(s);
  std::map<long, std::pair<double, PerSeed>> by_pair;  // pair -> (wavelength, Δ per seed)
  for (const auto& [seed, pairs] : changes) {
    for (const auto& [pair, wd] : pairs) {
      by_pair[pair].first = wd.first, by_pair[pair].second[seed] = wd.second;
    }
  }
  Rows rows;
  for (const auto& [pair, v] : by_pair) {
    rows.push_back({std::to_string(pair), fmt(v.first), fmt(v.first / T0), fmt_nats(v.second)});
  }
  md.table(
      "rope_pairs.csv, the RoPE main runs at the longest length L: pair i's angle divided by "
      "s = L/T0, the other pairs unchanged; wavelength = 2π / frequency (tokens); Δ = loss on "
      "the unseen positions [T0, L) minus the plain model's, mean over seeds ± the 95% "
      "half-width (3+ seeds) or both values (2 seeds). YaRN's alpha = 1 and beta = 32 in the "
      "same units (r = T0 / wavelength): wavelength / T0 = 1 and 1/32.",
      {"pair", "wavelength", "wavelength / T0", "Δ unseen loss"}, rows);
  md.figure(plot_rope_pairs(s, T0), "RoPE pairs",
            "Δ loss on unseen positions against the pair's wavelength / T0 (log x axis), one "
            "line per RoPE seed; grey dashed: YaRN's 1/alpha = 1 and 1/beta = 1/32.");
}

}  // namespace poslab::report_detail
