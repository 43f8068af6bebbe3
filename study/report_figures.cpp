// report_figures.cpp — the figures that are not curves of measured losses: RoPE drawn from
// its formula (rotation, offset invariance; in both languages, save_bilingual), attention maps,
// task accuracies.
#include <algorithm>
#include <cmath>
#include <map>
#include <set>
#include <tuple>

#include "plot/plot.h"
#include "study/report.h"

namespace poslab::report_detail {
namespace {

// RoPE's rotation of pair i of a head of dim D (RoFormer, Su et al. 2021, eq. 34):
//   (x, y) at position p  ->  (x cos a - y sin a, x sin a + y cos a),  a = p theta^(-2i/D).
constexpr int kD = 32;
constexpr double kTheta = 10000;
double rope_freq(int i) {
  return std::pow(kTheta, -2.0 * i / kD);
}
std::vector<double> rotate(const std::vector<double>& v, double pos) {
  std::vector<double> out(v.size());
  for (int i = 0; i < kD / 2; ++i) {
    const double a = pos * rope_freq(i), x = v[2 * i], y = v[2 * i + 1];
    out[2 * i] = x * std::cos(a) - y * std::sin(a);
    out[2 * i + 1] = x * std::sin(a) + y * std::cos(a);
  }
  return out;
}
// The sinusoidal vector of position p (Vaswani et al. 2017): (sin p w_i, cos p w_i) per pair.
std::vector<double> add_sinusoid(std::vector<double> v, double pos) {
  for (int i = 0; i < kD / 2; ++i) {
    v[2 * i] += std::sin(pos * rope_freq(i)), v[2 * i + 1] += std::cos(pos * rope_freq(i));
  }
  return v;
}
double dot(const std::vector<double>& a, const std::vector<double>& b) {
  double s = 0;
  for (size_t j = 0; j < a.size(); ++j) s += a[j] * b[j];
  return s;
}

std::string draw_rope_rotation(Lang l) {
  ScatterPlot p;
  p.title = in_lang(l, "RoPE: pair i turns by p·θ at position p, θ = 10000^(−2i/32)",
                    "RoPE：第 i 对在位置 p 转过 p·θ_i，θ_i = 10000^(−2i/32)");
  p.xlabel = in_lang(l, "cos(a) (radius: one circle per pair)", "cos(a)（每一对画在自己的圆上）");
  p.ylabel = "sin(a)";
  p.connect = false;  // points only: joining them by chords draws a star, not a rotation
  p.circles = {0.8, 0.6, 0.4};
  const std::vector<std::pair<int, std::set<int>>> pairs = {
      {0, {0, 1, 2, 3}}, {4, {0, 16, 32, 48}}, {8, {0, 32, 63}}, {12, {63}}};
  double radius = 1.0;
  for (const auto& [i, labelled] : pairs) {
    Series sr;
    sr.label = l == Lang::zh
                   ? "第 " + std::to_string(i) + " 对：" + fmt(rope_freq(i), 2) + " 弧度/字符"
                   : "pair " + std::to_string(i) + ": " + fmt(rope_freq(i), 2) + " rad/token";
    for (int pos = 0; pos < 64; ++pos) {
      const double a = pos * rope_freq(i);
      sr.x.push_back(radius * std::cos(a)), sr.y.push_back(radius * std::sin(a));
      sr.point_labels.push_back(labelled.count(pos) ? std::to_string(pos) : "");
    }
    p.series.push_back(std::move(sr));
    radius -= 0.2;
  }
  return render_scatter(p);
}

std::string draw_rope_offset(Lang l) {
  std::vector<double> q(kD), k(kD);  // two fixed vectors, any would do
  for (int j = 0; j < kD; ++j) q[j] = std::sin(0.7 * j + 0.3), k[j] = std::cos(1.3 * j + 0.1);
  LinePlot p;
  p.title = in_lang(l, "RoPE: q·k depends on the offset m − n alone", "RoPE：q·k 只取决于 m − n");
  p.xlabel =
      in_lang(l, "query position m (key at n = m − offset)", "query 的位置 m（key 在 n = m − Δ）");
  p.ylabel = in_lang(l, "q·k after the positions", "加入位置之后的 q·k");
  p.notes = {in_lang(l, "fixed q, k of dim 32, theta 10000", "固定的 q、k，维度 32，b = 10000"),
             in_lang(l, "flat lines: the same q·k", "水平线：Δ 相同，"),
             in_lang(l, "for every m at one offset", "每个 m 上的 q·k 都一样")};
  p.lang = l;
  for (const int off : {0, 4, 16, 64}) {
    Series sr{in_lang(l, "RoPE, m − n = ", "RoPE，m − n = ") + std::to_string(off), {}, {}};
    sr.markers = false;
    for (int m = off; m <= 256; m += 4) {
      sr.x.push_back(m), sr.y.push_back(dot(rotate(q, m), rotate(k, m - off)));
    }
    p.series.push_back(std::move(sr));
  }
  Series added{in_lang(l, "sinusoidal added, m − n = 16", "加 sinusoidal，m − n = 16"),
               {},
               {},
               "#009E73",
               true,
               false};
  for (int m = 16; m <= 256; m += 4) {
    added.x.push_back(m), added.y.push_back(dot(add_sinusoid(q, m), add_sinusoid(k, m - 16)));
  }
  p.series.push_back(std::move(added));
  return render_line_plot(p);
}

}  // namespace

std::string plot_rope_rotation(const Study& s) {
  return save_bilingual(s, "rope_rotation", draw_rope_rotation);
}

std::string plot_rope_offset(const Study& s) {
  return save_bilingual(s, "rope_offset", draw_rope_offset);
}

namespace {

// The panels show the first kAttentionPositions queries (and keys): a 64 x 64 map per head is
// readable, and a larger one makes the SVG big (one rectangle per cell).
constexpr long kAttentionPositions = 64;

// The panels of one scheme: every head of the first and the last layer of its first run.
// `columns` is set to the number of heads.
std::vector<Heatmap> attention_panels(const Study& s, const std::string& pe, int& columns) {
  std::string run;
  std::set<long> layers, heads;
  long T = 0;
  for (const auto& a : *s.attention) {
    if (a.pe != pe || (!run.empty() && a.run > run)) continue;
    if (a.run != run) run = a.run, layers.clear(), heads.clear(), T = 0;
    layers.insert(a.layer), heads.insert(a.head), T = std::max({T, a.query + 1, a.key + 1});
    T = std::min(T, kAttentionPositions);
  }
  std::vector<Heatmap> panels;
  columns = static_cast<int>(heads.size());
  for (const long layer : {*layers.begin(), *layers.rbegin()}) {
    for (const long head : heads) {
      Heatmap h;
      h.title = "layer " + std::to_string(layer) + ", head " + std::to_string(head);
      h.xlabel = "key", h.ylabel = "query";
      h.values.assign(T, std::vector<double>(T, NAN));
      h.vmin = 0, h.vmax = 1, h.sqrt_scale = true;
      h.width = 230, h.height = 220;
      panels.push_back(std::move(h));
    }
    if (layers.size() == 1) break;
  }
  for (const auto& a : *s.attention) {
    if (a.pe != pe || a.run != run || a.query >= T || a.key >= T) continue;
    const size_t row = a.layer == *layers.begin() ? 0 : 1;
    const auto h = std::distance(heads.begin(), heads.find(a.head));
    panels[row * heads.size() + h].values[a.query][a.key] = a.weight;
  }
  return panels;
}

}  // namespace

std::vector<std::string> plot_attention(const Study& s) {
  std::vector<std::string> out;
  if (!s.attention) return out;
  std::vector<std::string> pes;
  for (const auto& a : *s.attention) pes.push_back(a.pe);
  for (const auto& pe : order_pes(pes)) {
    int columns = 1;
    const auto panels = attention_panels(s, pe, columns);
    out.push_back(save(s, "attention_" + pe,
                       render_heatmap_grid(pe + ": attention per head, first and last layer "
                                                "(colour: square root of the weight)",
                                           panels, columns)));
  }
  return out;
}

// One panel per scheme and seed (a row per scheme): seeds that disagree are never pooled.
std::string plot_passkey(const Study& s) {
  if (!s.tasks) return "";
  std::vector<std::string> pes;
  std::set<double> depths;
  std::set<long> lens, seeds;
  std::map<std::tuple<std::string, long, double, long>, const TaskRow*> cell;
  for (const auto& t : *s.tasks) {
    if (t.task != "passkey") continue;
    pes.push_back(t.pe), depths.insert(t.depth), lens.insert(t.test_len), seeds.insert(t.seed);
    cell[{t.pe, t.seed, t.depth, t.test_len}] = &t;
  }
  if (pes.empty()) return "";
  std::vector<Heatmap> panels;
  for (const auto& pe : order_pes(pes)) {
    for (const long seed : seeds) {
      Heatmap h;
      h.title = pe + ", seed " + std::to_string(seed), h.xlabel = "test length";
      h.ylabel = "depth";
      for (const double d : depths) {
        h.row_labels.push_back(fmt_plain(d));
        h.values.emplace_back();
        for (const long L : lens) {
          const auto it = cell.find({pe, seed, d, L});
          h.values.back().push_back(it == cell.end() ? NAN : it->second->accuracy);
        }
      }
      for (const long L : lens) h.col_labels.push_back(std::to_string(L));
      h.width = 300, h.height = 260;
      panels.push_back(std::move(h));
    }
  }
  return save(s, "passkey",
              render_heatmap_grid("Passkey exact match per seed", panels,
                                  seeds.size() >= 2 ? static_cast<int>(seeds.size()) : 3));
}

std::string plot_task_accuracy(const Study& s, const std::string& task) {
  if (!s.tasks) return "";
  LinePlot p;
  p.title = "Task " + task + ": exact match against " +
            (task == "unscramble" ? "word count" : "test length") + " (bars: Wilson 95%)";
  p.xlabel = task == "unscramble" ? "word count k" : "test length", p.ylabel = "exact match";
  std::vector<std::string> pes;
  long train = 0, lmax = 0;
  for (const auto& t : *s.tasks) {
    if (t.task == task) pes.push_back(t.pe), train = t.train_len, lmax = std::max(lmax, t.test_len);
  }
  pes = order_pes(pes);
  for (size_t rank = 0; rank < pes.size(); ++rank) {
    std::set<long> seeds;
    for (const auto& t : *s.tasks) {
      if (t.task == task && t.pe == pes[rank]) seeds.insert(t.seed);
    }
    for (const long seed : seeds) {  // nudged sideways per scheme so the bars do not cover
      Series sr{seed == *seeds.begin() ? pes[rank] : "",
                {},
                {},
                pe_color(pes[rank]),
                seed != *seeds.begin()};
      sr.bars = true;
      const double nudge = 0.006 * lmax * (rank - 0.5 * (pes.size() - 1));
      std::vector<const TaskRow*> rows;
      for (const auto& t : *s.tasks) {
        if (t.task == task && t.pe == pes[rank] && t.seed == seed) rows.push_back(&t);
      }
      std::sort(rows.begin(), rows.end(),
                [](const TaskRow* a, const TaskRow* b) { return a->test_len < b->test_len; });
      for (const TaskRow* t : rows) {
        sr.x.push_back(t->test_len + nudge), sr.y.push_back(t->accuracy);
        sr.lo.push_back(t->ci_low), sr.hi.push_back(t->ci_high);
      }
      p.series.push_back(std::move(sr));
    }
  }
  if (p.series.empty()) return "";
  p.series.push_back({"later seeds: dashed", {}, {}, "#666666", true, false});
  p.series.push_back({"training length " + std::to_string(train),
                      {double(train), double(train)},
                      {0, 1},
                      "#999999",
                      true,
                      false});
  return save(s, "task_" + task, render_line_plot(p));
}

}  // namespace poslab::report_detail
