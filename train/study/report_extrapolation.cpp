// report_extrapolation.cpp — the sections on lengths past T0: perplexity per scheme and
// length, the sliding-window comparison, RoPE scaling on every seed, and the same on kjv.
#include <algorithm>
#include <cmath>
#include <set>

#include "train/study/report_sections.h"

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
      rows.back().push_back(
          fmt_nats(interval_of(eval_per_seed(s, g, pe, L, "none", Measure::gap))));
    }
  }
  return rows;
}

const char* kGapMeaning =
    "loss − sliding-window loss (nats) on the same targets: the model reading the whole window "
    "of length L from position 0, against a window of T0 moved by T0/4 in which every target "
    "sees between 3T0/4 and T0 tokens of context. Negative: the scheme uses the longer context "
    "(it predicts better with it); positive: it is hurt by the longer context (positions or "
    "distances it never saw in training); mean over seeds ± the 95% half-width.";

}  // namespace

Rows ppl_rows(const Study& s, const Group& g, const std::vector<std::string>& pes,
              const std::vector<long>& lengths, const std::string& corpus) {
  Rows rows;
  for (const auto& pe : pes) {
    rows.push_back({pe + (near_converged(s, pe, corpus, g) ? "" : " ‡")});
    for (const long L : lengths) {
      rows.back().push_back(fmt_ppl(interval_of(eval_per_seed(s, g, pe, L))));
    }
  }
  return rows;
}

void extrapolation_section(Markdown& md, const Study& s) {
  md.heading("3. Extrapolation: evaluating past the training length");
  if (!s.eval) return md.not_run("extrapolation.csv");
  md.para("Each main model was trained on windows of T0 = " + std::to_string(s.train_len()) +
          " tokens, then evaluated on every window of the val split at each length L, each "
          "window read from position 0: everything past T0 is a position the model never saw "
          "in training. ‡ marks a scheme that is not near convergence (section 2): its numbers "
          "are shown but not interpretable.");
  Rows rows;
  for (const auto& pe : s.pes) {
    const bool ok = near_converged(s, pe);
    for (const long L : s.lengths) {
      const PerSeed loss = eval_per_seed(s, kMain, pe, L);
      if (loss.empty()) continue;
      std::string seeds;
      for (const auto& [seed, v] : loss) {
        seeds += (seeds.empty() ? "" : ", ") + std::to_string(seed) + ": " + fmt(std::exp(v));
      }
      rows.push_back({pe + (ok ? "" : " ‡"), std::to_string(L),
                      std::to_string(windows_at(s, kMain, pe, L)), fmt_loss(interval_of(loss)),
                      fmt_ppl(interval_of(loss)), seeds});
    }
  }
  md.table(
      "Per scheme and length L: windows = val windows of length L scored (fewest over seeds); "
      "loss = mean over seeds of the mean loss (nats) ± the 95% half-width; ppl = exp(mean "
      "loss) with the 95% interval; then each seed's perplexity.",
      {"pe", "L", "windows", "loss (nats)", "ppl", "ppl per seed"}, rows);
  md.figure(plot_loss_vs_position(s), "loss against position",
            "loss per position bucket in the longest windows, mean over seeds with the 95% "
            "interval shaded. Left of the grey line: positions seen in training; right of it, "
            "unseen ones.");
}

void sliding_section(Markdown& md, const Study& s) {
  md.heading("4. Sliding window: does a scheme use the longer context?");
  if (!s.eval) return md.not_run("extrapolation.csv");
  md.table("Per scheme and length: " + std::string(kGapMeaning), len_header(s.lengths, "pe"),
           gap_rows(s, kMain, s.pes, s.lengths));
  md.figure(plot_sliding_gap(s), "sliding-window difference",
            "loss − sliding-window loss against length, mean over seeds with the 95% interval "
            "shaded; below 0 the scheme profits from the longer context, above 0 it is hurt.");
  md.figure(plot_sliding_gap_position(s), "sliding-window difference per position",
            "the same difference per position bucket in the longest windows: where in the "
            "window the longer context helps or hurts (before T0 both see the same context).");
}

void scaling_section(Markdown& md, const Study& s) {
  md.heading("5. RoPE scaling at evaluation time");
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
  for (const auto& sc : scalings) {
    mean_rows.push_back({sc});
    for (const long L : s.lengths) {
      mean_rows.back().push_back(fmt_ppl(interval_of(eval_per_seed(s, kMain, "rope", L, sc))));
    }
    for (const long seed : group_seeds(s, kMain, "rope")) {
      seed_rows.push_back({sc, std::to_string(seed)});
      for (const long L : s.lengths) {
        const PerSeed v = eval_per_seed(s, kMain, "rope", L, sc);
        seed_rows.back().push_back(v.count(seed) ? fmt(std::exp(v.at(seed))) : "n/a");
      }
    }
  }
  md.table(
      "RoPE val perplexity per scaling and length: mean over the RoPE seeds (of the loss, "
      "exponentiated) with the 95% interval.",
      len_header(s.lengths, "scaling"), mean_rows);
  auto h = len_header(s.lengths, "scaling");
  h.insert(h.begin() + 1, "seed");
  md.table("The same, every seed on its own.", h, seed_rows);
  md.figure(plot_rope_scaling(s), "RoPE scaling",
            "RoPE val perplexity against length per scaling, mean over seeds with the 95% "
            "interval shaded.");
  md.figure(plot_rope_scaling_position(s), "RoPE scaling: loss against position",
            "RoPE loss per position bucket in the longest windows per scaling, mean over seeds "
            "with the 95% interval shaded.");
}

void kjv_section(Markdown& md, const Study& s) {
  md.heading("8. Long-range corpus: kjv");
  const std::vector<std::string> pes = group_pes(s, kKjv);
  const std::vector<long> lens = group_lengths(s, kKjv);
  if (pes.empty() || lens.empty()) {
    return md.not_run("extrapolation.csv", "rows of kjv runs (kjv_<pe>_s<seed>)");
  }
  md.para(
      "The main schemes trained on the King James Bible (long, continuous text) and evaluated "
      "the same way; the n-gram lines are kjv's.");
  const auto verdicts = convergence_verdicts(s, kKjv, "kjv", pes);
  if (!verdicts.empty()) md.bullets(verdicts);
  md.table(
      "kjv: val perplexity per scheme and length, mean over seeds (of the loss, "
      "exponentiated) with the 95% interval. ‡ = not near convergence: not interpretable.",
      len_header(lens, "pe"), ppl_rows(s, kKjv, pes, lens, "kjv"));
  md.table("kjv: " + std::string(kGapMeaning), len_header(lens, "pe"),
           gap_rows(s, kKjv, pes, lens));
  md.figure(plot_ppl_vs_length(s, kKjv, "kjv_ppl_vs_length"), "kjv: perplexity against length",
            "kjv val perplexity against length, mean over seeds with the 95% interval shaded.");
  md.figure(plot_training_curves(s, kKjv, "kjv", "training_curves_kjv"), "kjv training curves",
            "kjv val loss against step, with kjv's add-k n-gram lines (grey dashed).");
}

}  // namespace poslab::report_detail
