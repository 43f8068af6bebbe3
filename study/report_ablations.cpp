// report_ablations.cpp — the seed text's four break experiments (no PE; no mask and no PE, a
// masked LM; RoPE theta 10 and 1e6; 4096 unscaled), the ablations (the swapped embedding, T5's
// max distance), each trained at B/4 and read against the main runs' B/4 branches, and the
// figures drawn from formulas and attention weights.
#include <algorithm>
#include <cmath>
#include <map>
#include <set>
#include <tuple>

#include "study/report_sections.h"

namespace poslab::report_detail {
namespace {

// v restricted to `seeds`: the baseline of an ablation is compared on the ablation's seeds.
PerSeed only(const PerSeed& v, const std::vector<long>& seeds) {
  PerSeed out;
  for (const long seed : seeds) {
    if (v.count(seed)) out[seed] = v.at(seed);
  }
  return out;
}

std::string seed_text(const std::vector<long>& seeds) {
  std::vector<std::string> t;
  for (const long s : seeds) t.push_back(std::to_string(s));
  return join(t);
}

// The header of ablation_row's tables: `first`, the seeds, then one column per length.
std::vector<std::string> ablation_header(const Study& s, const std::string& first) {
  auto h = len_header(s.lengths, first);
  h.insert(h.begin() + 1, "seeds");
  return h;
}

// One row: `label`, the seeds, then ppl per length of group g / scheme pe on `seeds`.
std::vector<std::string> ablation_row(const Study& s, const std::string& label, const Group& g,
                                      const std::string& pe, const std::vector<long>& seeds) {
  std::vector<std::string> row = {label, seed_text(seeds)};
  for (const long L : s.lengths) {
    row.push_back(fmt_ppl(only(eval_per_seed(s, g, pe, L), seeds)));
  }
  return row;
}

// Breaks 1 and 4: the main runs without a PE and RoPE unscaled, at every length.
void no_pe_break(Markdown& md, const Study& s) {
  md.heading("1. No PE, and 4. 4096 unscaled", 3);
  const auto none = group_seeds(s, kMain, "none"), rope = group_seeds(s, kMain, "rope");
  if (!s.eval || none.empty() || rope.empty())
    return md.not_run("extrapolation.csv", "rows of none_s<seed> and rope_s<seed>");
  const auto h = ablation_header(s, "main runs (B)");
  md.table(
      "Break 1 takes the PE away (the main `none` runs: the causal mask is the only source of "
      "order); break 4 evaluates RoPE at lengths up to 16 T0 without any scaling (the main "
      "`rope` runs). Val perplexity per length, exp of the mean loss over the seeds listed "
      "(3+ seeds: with the 95% interval, lower end clamped at 1*).",
      h,
      {ablation_row(s, "none", kMain, "none", none), ablation_row(s, "rope", kMain, "rope", rope)});
}

void theta_ablation(Markdown& md, const Study& s) {
  md.heading("3. RoPE base theta", 3);
  const auto seeds10 = group_seeds(s, kTheta10, "rope"),
             seeds1e6 = group_seeds(s, kTheta1e6, "rope");
  if (!s.eval || (seeds10.empty() && seeds1e6.empty())) {
    return md.not_run("extrapolation.csv", "rows of rope_theta10 / rope_theta1e6 runs");
  }
  std::set<long> all(seeds10.begin(), seeds10.end());
  all.insert(seeds1e6.begin(), seeds1e6.end());
  Rows rows = {
      ablation_row(s, "10", kTheta10, "rope", seeds10),
      ablation_row(s, "10000 (B/4 branches, same seeds)", kB4, "rope", {all.begin(), all.end()}),
      ablation_row(s, "1e6", kTheta1e6, "rope", seeds1e6)};
  const auto h = ablation_header(s, "theta");
  md.table(
      "RoPE models that differ only in theta (pair i turns by p·theta^(-2i/D) at position p): "
      "val perplexity per length, exp of the mean loss over the seeds listed (3+ seeds: with "
      "the 95% interval, lower end clamped at 1*; 2 seeds: both values); all trained at B/4 "
      "with the same schedule; theta 10000 is the main RoPE runs' B/4 branches of the same "
      "seeds.",
      h, rows);
  md.figure(plot_rope_theta(s), "RoPE theta",
            "RoPE val perplexity against length per theta, exp of the mean loss over seeds; "
            "band: exp of the 95% t interval (3+ seeds) or the two seeds' values (2 seeds).");
}

void embedding_ablation(Markdown& md, const Study& s) {
  md.heading("The embedding convention swapped", 3);
  Rows rows;
  for (const auto& pe : s.pes) {
    const Group g = swapped_group(pe);
    const auto seeds = group_seeds(s, g, pe);
    if (seeds.empty() || !s.eval) continue;
    rows.push_back(
        ablation_row(s, pe + ", " + canonical_embedding(pe) + " (B/4 branch)", kB4, pe, seeds));
    rows.push_back(ablation_row(s, pe + ", " + swapped_embedding(pe), g, pe, seeds));
  }
  if (rows.empty()) return md.not_run("extrapolation.csv", "rows of <pe>_<embedding> runs");
  const auto h = ablation_header(s, "pe, embedding");
  md.table(
      "embedding = scaled multiplies the token vectors by sqrt(d) before the position is added "
      "(the Transformer paper's convention); gpt2 adds the position table to the unscaled "
      "token vectors (GPT-2's). The main runs use gpt2 for learned, scaled for the others; "
      "each swapped run (trained at B/4) against the main runs' B/4 branches of the same seeds. "
      "Val perplexity per length, exp of the mean loss (3+ seeds: with the 95% interval; 2 "
      "seeds: both values).",
      h, rows);
}

void t5_distance_ablation(Markdown& md, const Study& s) {
  md.heading("T5 with max_distance = T0", 3);
  const Group g{"", "_dist" + std::to_string(s.train_len())};
  const auto seeds = group_seeds(s, g, "t5");
  if (seeds.empty() || !s.eval) return md.not_run("extrapolation.csv", "rows of t5_dist runs");
  const auto h = ablation_header(s, "t5");
  md.table("T5's relative-position buckets with max_distance = T0 (" +
               std::to_string(s.train_len()) +
               "), trained at B/4, against the main T5 runs' B/4 branches of the same seeds: val "
               "perplexity per length, exp of the mean loss (3+ seeds: with the 95% interval; 2 "
               "seeds: both values).",
           h,
           {ablation_row(s, "B/4 branch", kB4, "t5", seeds),
            ablation_row(s, "max_distance = T0", g, "t5", seeds)});
}

void mlm_ablation(Markdown& md, const Study& s) {
  md.heading("2. No causal mask and no PE: a masked LM, NoPE against RoPE", 3);
  if (!s.mlm) return md.not_run("mlm.csv");
  md.para(
      "Without the causal mask next-token loss is ill-posed (every position sees its own "
      "target), so this ablation trains a masked LM: bidirectional attention, a share of the "
      "input replaced by a mask token, loss on those. Without a mask *and* a PE, attention "
      "sees a bag of tokens: shuffling the input only shuffles the outputs.");
  std::vector<std::string> pes;
  for (const auto& m : *s.mlm) pes.push_back(m.pe);
  Rows rows;
  for (const auto& pe : order_pes(pes)) {
    PerSeed loss;
    double worst = 0;
    std::string seeds;
    for (const auto& m : *s.mlm) {
      if (m.pe != pe) continue;
      loss[m.seed] = m.val_loss, worst = std::max(worst, m.shuffle_max_diff);
      seeds +=
          (seeds.empty() ? "" : ", ") + std::to_string(m.seed) + ": " + fmt(m.shuffle_max_diff);
    }
    rows.push_back({pe, std::to_string(loss.size()), fmt_loss(loss), fmt(worst), seeds});
  }
  md.table(
      "Masked-LM loss on the masked val tokens (nats), mean over seeds ± the 95% half-width "
      "(3+ seeds) or both values (2 seeds); "
      "shuffle check: the input shuffled, the outputs un-shuffled, the largest absolute change "
      "of any output.",
      {"pe", "seeds", "masked-token loss", "max shuffle |Δ|", "per seed"}, rows);
}

}  // namespace

void ablation_section(Markdown& md, const Study& s) {
  md.heading("The seed text's break experiments");
  no_pe_break(md, s);
  mlm_ablation(md, s);
  theta_ablation(md, s);
  md.heading("Ablations");
  embedding_ablation(md, s);
  t5_distance_ablation(md, s);
}

namespace {

// Mean attention distance per (pe, layer, head): sum over keys of weight x (query - key),
// averaged over the queries; and what uniform causal attention would give, mean of query / 2.
void attention_distance_table(Markdown& md, const Study& s) {
  if (!s.attention_distance) return;  // a results folder from before the table
  // (pe, layer, head) -> distance per length; the lengths and their uniform distances
  std::map<std::tuple<std::string, long, long>, std::map<long, double>> dist;
  std::map<long, double> uniform;
  std::set<long> heads, windows;
  std::vector<std::string> pes;
  for (const auto& a : *s.attention_distance) {
    dist[{a.pe, a.layer, a.head}][a.len] = a.distance;
    uniform[a.len] = a.uniform, heads.insert(a.head), windows.insert(a.windows);
    if (std::find(pes.begin(), pes.end(), a.pe) == pes.end()) pes.push_back(a.pe);
  }
  // "d(T0) → d(4 T0)": one cell per head, the lengths in increasing order
  auto cell = [&](const std::map<long, double>& by_len) {
    std::string out;
    for (const auto& [len, d] : by_len) out += (out.empty() ? "" : " → ") + fmt(d, 3);
    return out;
  };
  Rows rows;
  for (const auto& pe : order_pes(pes)) {
    std::set<long> layers;
    for (const auto& [key, v] : dist)
      if (std::get<0>(key) == pe) layers.insert(std::get<1>(key));
    for (const long layer : layers) {
      rows.push_back({pe, std::to_string(layer)});
      for (const long h : heads) {
        const auto it = dist.find({pe, layer, h});
        rows.back().push_back(it == dist.end() ? "n/a" : cell(it->second));
      }
      rows.back().push_back(cell(uniform));
    }
  }
  std::string lens;
  for (const auto& [len, u] : uniform) lens += (lens.empty() ? "" : " → ") + std::to_string(len);
  std::vector<std::string> h = {"pe", "layer"};
  for (const long head : heads) h.push_back("head " + std::to_string(head));
  h.push_back("uniform");
  md.table("How far back each head attends (tokens), at L = " + lens +
               " (attention_distance.csv): for each query i, the sum over keys j of weight × (i − "
               "j), averaged over the queries of the first " +
               std::to_string(*windows.rbegin()) +
               " val windows of that length (fewer where the val split holds fewer; the seed-1 "
               "model of each scheme); `uniform` is what equal weights on every earlier key give, "
               "(L − 1)/4. A head whose distance grows with L reads further when it can; one that "
               "stays put attends within a fixed reach.",
           h, rows);
}

}  // namespace

void figures_section(Markdown& md, const Study& s) {
  md.heading("How RoPE rotates, where the models attend");
  md.figure(plot_rope_rotation(s), "RoPE rotation",
            "RoPE from its formula (theta 10000, head dim 32): pair i of a query or key turns by "
            "the angle p·theta^(-2i/32) at position p. Each pair is drawn on its own circle as "
            "the points of positions 0..63 (a few labelled): the fast pair wraps around many "
            "times, the slow pairs barely move, so they carry coarse, long-range position.");
  md.figure(plot_rope_offset(s), "RoPE offset invariance",
            "q·k after RoPE for a fixed pair of vectors q, k placed at positions m and m − k, "
            "against m: for each offset k the line is flat, since rotating both by m·theta "
            "leaves their dot product depending on k alone (RoPE is relative). Dashed: the same "
            "vectors with sinusoidal positions added instead, whose product changes with m.");
  if (!s.attention) return md.not_run("attention.csv");
  attention_distance_table(md, s);
  for (const auto& path : plot_attention(s)) {
    const std::string pe =
        path.substr(path.find("attention_") + 10, path.size() - path.find("attention_") - 14);
    long positions = 0;
    for (const auto& a : *s.attention)
      if (a.pe == pe) positions = std::max(positions, a.query + 1);
    md.figure(path, "attention, " + pe,
              "attention weights of the " + pe + " model on one val window (its first " +
                  std::to_string(positions) +
                  " positions), every head (columns) "
                  "of the first and the last layer (rows); row = query position, column = key. "
                  "Colour on a square-root scale (weight 0.01 is already a tenth of the way), so "
                  "spread-out attention stays visible; one scale for every panel.");
  }
}

}  // namespace poslab::report_detail
