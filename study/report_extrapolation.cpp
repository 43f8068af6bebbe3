// report_extrapolation.cpp — the sections on lengths past T0: perplexity per scheme and
// length, the sliding-window comparison, RoPE scaling on every seed.
#include <algorithm>
#include <cmath>
#include <set>

#include "study/report_sections.h"

namespace poslab::report_detail {
namespace {

// The fewest windows any seed of group g, scheme pe was evaluated on at length L.
long windows_at(const Study& s, const Group& g, const std::string& pe, long L) {
  long w = -1;
  for (const auto& e : *s.eval) {
    if (e.pe == pe && e.len == L && e.run == g.name(pe, e.seed) &&
        (e.rope_scaling.empty() || e.rope_scaling == "none")) {
      w = w < 0 ? e.windows : std::min(w, e.windows);
    }
  }
  return w;
}

Rows gap_rows(const Study& s, const Group& g, const std::vector<std::string>& pes,
              const std::vector<long>& lengths) {
  Rows rows;
  for (const auto& pe : pes) {
    rows.push_back({pe});
    for (const long L : lengths) {
      rows.back().push_back(fmt_nats(eval_per_seed(s, g, pe, L, "none", Measure::gap)));
    }
  }
  return rows;
}

const char* kGapMeaning =
    "loss − sliding-window loss (nats) on the same targets: the model reading the whole window "
    "of length L from position 0, against a window of T0 moved by T0/4 in which every target "
    "sees between 3T0/4 and T0 tokens of context; mean over seeds, ± the 95% half-width (3+ "
    "seeds) or both values (2 seeds).";

// The fine-tuned RoPE groups in extrapolation.csv: rope_pi<s>_s<seed> -> {"", "_pi<s>"}.
std::vector<Group> finetune_groups(const Study& s, const std::string& kind) {
  std::set<std::string> suffixes;
  for (const auto& e : *s.eval) {
    if (e.pe == "rope" && e.run.rfind("rope_" + kind, 0) == 0) {
      suffixes.insert(e.run.substr(4, e.run.rfind("_s") - 4));
    }
  }
  std::vector<Group> out;
  for (const auto& x : suffixes) out.push_back({"", x});
  return out;
}

// The schemes the scaling table reads: rope and its variants with contiguous positions.
std::vector<std::string> scaled_schemes(const Study& s) {
  std::vector<std::string> out;
  for (const std::string pe : {"rope", "prope", "rope_nope4"})
    if (!group_seeds(s, kMain, pe).empty()) out.push_back(pe);
  return out;
}

}  // namespace

void extrapolation_section(Markdown& md, const Study& s) {
  md.heading("Extrapolation: evaluating past the training length");
  if (!s.eval) return md.not_run("extrapolation.csv");
  const long T0 = s.train_len();
  Rows rows;
  for (const auto& pe : s.pes) {
    for (const long L : s.lengths) {
      const PerSeed loss = eval_per_seed(s, kMain, pe, L);
      if (loss.empty()) continue;
      rows.push_back({pe, std::to_string(L), std::to_string(windows_at(s, kMain, pe, L)),
                      fmt_loss(loss), fmt_ppl(loss), fmt_loss(unseen_per_seed(s, kMain, pe, L, 1)),
                      fmt_loss(unseen_per_seed(s, kMain, pe, L, 2))});
    }
  }
  md.table("Per main scheme and length L (trained at T0 = " + std::to_string(T0) +
               "; every val window of length L read from position 0): windows = windows scored "
               "(fewest over seeds); loss = mean loss (nats) over seeds; ppl = exp(loss); unseen = "
               "the loss on positions [T0, 4T0) and [8T0, 16T0) of the same windows (n/a where the "
               "window does not reach the whole range). 3+ seeds: ± the 95% half-width (ppl: the "
               "interval, lower end clamped at 1*); 2 seeds: both values.",
           {"pe", "L", "windows", "loss (nats)", "ppl", "unseen [T0,4T0)", "unseen [8T0,16T0)"},
           rows);
  md.figure(plot_ppl_vs_length(s, kMain, "ppl_vs_length"), "perplexity against length",
            "val perplexity against evaluation length, exp of the mean loss over seeds, the "
            "band exp of its 95% interval (3+ seeds; lower end clamped at 1) or the two seeds' "
            "values (2 seeds); log axes.");
  md.figure(plot_unseen_vs_length(s), "unseen-position loss against length",
            "loss on the unseen positions [T0, 4T0) of each window against its length L, mean "
            "over seeds with the band as above; log x axis.");
  md.figure(plot_loss_vs_position(s), "loss against position",
            "loss per position bucket (position_loss.csv) in the longest windows, mean over "
            "seeds with the band as above; log x axis (bucket midpoints), so the buckets inside "
            "T0 are resolved; grey dashed: T0.");
}

void sliding_section(Markdown& md, const Study& s) {
  md.heading("Sliding window");
  if (!s.eval) return md.not_run("extrapolation.csv");
  md.table("Per scheme and length: " + std::string(kGapMeaning), len_header(s.lengths, "pe"),
           gap_rows(s, kMain, s.pes, s.lengths));
  md.figure(plot_sliding_gap(s), "sliding-window difference",
            "loss − sliding-window loss against length, mean over seeds; band: the 95% t "
            "interval (3+ seeds) or the two seeds' values (2 seeds).");
  md.figure(plot_sliding_gap_position(s), "sliding-window difference per position",
            "the same difference per position bucket in the longest windows (before T0 both "
            "read the same context).");
}

void scaling_section(Markdown& md, const Study& s) {
  md.heading("RoPE scaling at evaluation time");
  const auto scalings = rope_scalings(s);
  if (!s.eval || scalings.size() <= 1) {
    return md.not_run("extrapolation.csv", "rows of RoPE scaling methods");
  }
  md.para(
      "Nothing changes in training: each trained RoPE model (every seed) is evaluated with its "
      "rotation angles adjusted for a window longer than T0, factor s = L/T0. **linear** "
      "divides positions by s; **ntk** raises the base theta so slow pairs are interpolated and "
      "fast ones barely change; **dynamic** does ntk with s growing with the position; **yarn** "
      "interpolates per frequency pair with a ramp and sharpens attention slightly. At L = T0 "
      "every method has s = 1 and equals plain RoPE (none).");
  Rows mean_rows, seed_rows;
  for (const std::string& pe : scaled_schemes(s))
    for (const auto& sc : scalings) {
      const std::string label = pe == "rope" ? sc : pe + ": " + sc;
      mean_rows.push_back({label});
      for (const long L : s.lengths) {
        mean_rows.back().push_back(fmt_ppl(eval_per_seed(s, kMain, pe, L, sc)));
      }
      for (const long seed : group_seeds(s, kMain, pe)) {
        seed_rows.push_back({label, std::to_string(seed)});
        for (const long L : s.lengths) {
          const PerSeed v = eval_per_seed(s, kMain, pe, L, sc);
          seed_rows.back().push_back(v.count(seed) ? fmt(std::exp(v.at(seed))) : "n/a");
        }
      }
    }
  for (const auto& [kind, scaling] :
       {std::pair<std::string, std::string>{"pi", "linear"}, {"yarn", "yarn"}})
    for (const Group& g : finetune_groups(s, kind)) {
      mean_rows.push_back({scaling + " after a fine-tune (rope" + g.suffix + ")"});
      for (const long L : s.lengths) {
        mean_rows.back().push_back(fmt_ppl(eval_per_seed(s, g, "rope", L, scaling)));
      }
    }
  md.table(
      "RoPE val perplexity per scaling and length: exp of the mean loss over the seeds (3+ "
      "seeds: with the 95% interval, lower end clamped at 1*; 2 seeds: both values); rope's "
      "rows first, then prope's and rope_nope4's, named. **llama3**: Llama 3.1's blend (low "
      "and high frequency factors 1 and 4); **yarn_untruncated**: yarn with the ramp's ends "
      "kept real (truncate = false). rope_rand takes no scaling: a scaling needs contiguous "
      "positions, and it reads drawn ones. `<scaling> after a fine-tune`: the RoPE main run "
      "trained further at s T0 with that scaling in every forward (rope_pi<s>: linear, "
      "rope_yarn<s>: yarn against the original T0), evaluated with the same scaling.",
      len_header(s.lengths, "scaling"), mean_rows);
  auto h = len_header(s.lengths, "scaling");
  h.insert(h.begin() + 1, "seed");
  md.table("The same, every seed on its own.", h, seed_rows);
  md.figure(plot_rope_scaling(s), "RoPE scaling",
            "RoPE val perplexity against length per scaling, exp of the mean loss over seeds; "
            "band: exp of the 95% t interval (3+ seeds) or the two seeds' values (2 seeds).");
  md.figure(plot_rope_scaling_position(s), "RoPE scaling: loss against position",
            "RoPE loss per position bucket in the longest windows per scaling, mean over seeds; "
            "band: the 95% t interval (3+ seeds) or the two seeds' values (2 seeds).");
}

}  // namespace poslab::report_detail
