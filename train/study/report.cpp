// report.cpp — write_report: REPORT.md, section by section, from the study's CSVs.
// Loading the results folder lives in report_data.cpp, the figures in report_plots.cpp and the
// generated conclusions in report_findings.cpp; this file only lays out the markdown.
#include "train/study/report.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <filesystem>
#include <set>

#include "data/atomic_file.h"

namespace poslab {
namespace {

using namespace report_detail;

// A markdown document under construction; tables are numbered as they are added.
struct Markdown {
  std::string out;
  int tables = 0;
  bool quick = false;
  std::string dir;  // the results folder

  void para(const std::string& text) { out += text + "\n\n"; }
  void heading(const std::string& text, int level = 2) {
    out += std::string(level, '#') + " " + text + "\n\n";
  }
  // The caption goes above the table: what was measured and how.
  void table(const std::string& caption, const std::vector<std::string>& header,
             const std::vector<std::vector<std::string>>& rows) {
    out += "**Table " + std::to_string(++tables) + ".** " + caption + "\n\n";
    const auto line = [&](const std::vector<std::string>& cells) {
      out += "|";
      for (const auto& c : cells) out += " " + escape(c) + " |";
      out += "\n";
    };
    line(header);
    out += "|";
    for (size_t i = 0; i < header.size(); ++i) out += numeric(rows, i) ? "---:|" : "---|";
    out += "\n";
    for (const auto& r : rows) line(r);
    out += "\n";
  }
  // A figure: `alt` is its short name, the caption says what it shows and how to read it.
  void figure(const std::string& path, const std::string& alt, const std::string& caption) {
    if (path.empty()) return para("*(Figure " + alt + " not drawn: no data for it.)*");
    out += "![" + alt + "](" + path + ")\n\n*Figure: " + caption + "*\n\n";
  }
  // A section without data: either its file is missing, or the file holds none of `what`.
  void not_run(const std::string& file, const std::string& what = "rows") {
    const bool there = std::filesystem::exists(dir + "/" + file);
    para("**Not run**: `" + file + "` " +
         (there ? "holds no " + what : std::string("is not in the results folder")) +
         (quick ? " (the quick study skips some parts)." : "."));
  }
  // Right-align a column whose cells are all numbers (or n/a), so digits line up.
  static bool numeric(const std::vector<std::vector<std::string>>& rows, size_t col) {
    bool any = false;
    for (const auto& r : rows) {
      if (col >= r.size() || r[col] == "n/a" || r[col] == "inf") continue;
      if (r[col].empty() || !(std::isdigit(static_cast<unsigned char>(r[col][0])) ||
                              r[col][0] == '-' || r[col][0] == '+')) {
        return false;
      }
      any = true;
    }
    return any;
  }
  static std::string escape(const std::string& s) {
    std::string t;
    for (const char c : s) t += c == '|' ? std::string("\\|") : std::string(1, c);
    return t;
  }
};

std::string join(const std::vector<std::string>& v, const std::string& sep = ", ") {
  std::string out;
  for (const auto& x : v) out += (out.empty() ? "" : sep) + x;
  return out;
}

std::string duration(double seconds) {
  if (!(seconds >= 60)) return fmt(seconds, 3) + " s";
  const long s = std::lround(seconds), h = s / 3600, m = (s % 3600) / 60;
  return (h ? std::to_string(h) + " h " : "") + std::to_string(m) + " min " +
         std::to_string(s % 60) + " s (" + fmt_count(s) + " s)";
}

std::vector<std::string> len_header(const Study& s, const std::string& first) {
  std::vector<std::string> h = {first};
  for (const long L : s.lengths) h.push_back("L=" + std::to_string(L));
  return h;
}

void header_section(Markdown& md, const Study& s, const ReportInfo& info) {
  md.heading(info.title, 1);
  md.para(
      "Same corpus, same network, same training steps and seeds; only the positional "
      "encoding (PE) changes. Every number below is read from the CSV files in this folder "
      "(listed at the end); nothing is typed in by hand.");
  std::set<long> steps, seeds;
  for (const auto& pe : s.pes) {
    for (const Run* r : s.main_runs(pe)) steps.insert(r->steps), seeds.insert(r->seed);
  }
  const auto list = [](const std::set<long>& v) {
    std::vector<std::string> t;
    for (const long x : v) t.push_back(std::to_string(x));
    return t.empty() ? std::string("n/a") : join(t);
  };
  std::vector<std::string> lens;
  for (const long L : s.lengths) lens.push_back(std::to_string(L));
  md.table("How this study was run.", {"setting", "value"},
           {{"date", info.date},
            {"machine", info.machine},
            {"command", "`" + info.command + "`"},
            {"wall time of the invocation that wrote this report",
             duration(info.total_seconds) + " (finished runs and evaluations are reused)"},
            {"training time, all runs (sum of train_seconds in runs.csv)", duration([&] {
               double t = 0;
               for (const auto& r : s.runs)
                 if (std::isfinite(r.train_seconds)) t += r.train_seconds;
               return t;
             }())},
            {"mode",
             info.quick ? "quick (a reduced study; skipped parts say \"not run\")" : "full study"},
            {"schemes (main runs)", join(s.pes)},
            {"training steps per main run", list(steps)},
            {"seeds", list(seeds)},
            {"training length T0 (= shortest eval length)",
             s.train_len() ? std::to_string(s.train_len()) : "n/a"},
            {"evaluation lengths", lens.empty() ? "not run" : join(lens)},
            {"runs in runs.csv", std::to_string(s.runs.size())}});
  md.para(
      "The schemes: **none** (NoPE) adds nothing; **learned** adds a trained vector per "
      "position to the token embedding; **sinusoidal** adds fixed sin/cos vectors; **rope** "
      "rotates each pair of query/key dimensions by an angle proportional to the position; "
      "**alibi** subtracts a fixed per-head slope times the distance from each attention "
      "score. Perplexity (ppl) = exp(mean cross-entropy per token in nats): the effective "
      "number of characters the model is choosing between; lower is better.");
}

void training_section(Markdown& md, const Study& s) {
  md.heading("1. Training");
  std::vector<std::vector<std::string>> rows;
  for (const auto& pe : s.pes) {
    std::vector<double> train, val, tps, secs;
    const auto runs = s.main_runs(pe);
    for (const Run* r : runs) {
      train.push_back(std::exp(r->train_loss)), val.push_back(std::exp(r->val_loss));
      tps.push_back(r->tokens_per_s), secs.push_back(r->train_seconds);
    }
    rows.push_back({pe, fmt_count(runs.front()->params), std::to_string(runs.size()),
                    fmt_stat(stat_of(train)), fmt_stat(stat_of(val)), fmt(stat_of(tps).mean),
                    fmt(stat_of(secs).mean)});
  }
  md.table(
      "Final training and validation perplexity of the main runs (objective lm, theta 10000, "
      "trained at T0). train ppl = exp(training loss at the last step, as logged); val ppl = "
      "exp(loss on the held-out val split at length T0). With several seeds a cell is the "
      "**mean over seeds, with the min–max range in brackets**; `seeds` is how many. "
      "tokens/s is the training throughput and time the training wall time, both means.",
      {"pe", "params", "seeds", "train ppl", "val ppl", "tokens/s", "train time (s)"}, rows);
  md.figure(plot_training_curves(s), "training curves",
            "validation loss (nats) against training step, one line per main run, one colour "
            "per scheme; seed 1 solid, later seeds dashed.");
}

void extrapolation_section(Markdown& md, const Study& s) {
  md.heading("2. Extrapolation: evaluating past the training length");
  if (!s.eval) return md.not_run("extrapolation.csv");
  md.para("Each main model was trained on windows of T0 = " + std::to_string(s.train_len()) +
          " tokens, then evaluated on the val split with longer windows, each read from "
          "position 0. Everything past T0 is a position the model never saw in training. A "
          "scheme that extrapolates keeps perplexity flat (or lower: more context helps); one "
          "that does not blows up.");
  for (const bool quarter : {false, true}) {
    std::vector<std::vector<std::string>> rows;
    int n = 0;
    for (const auto& pe : s.pes) {
      rows.push_back({pe});
      for (const long L : s.lengths) {
        const Stat st = eval_ppl(s, pe, "none", L, quarter);
        rows.back().push_back(fmt(st.mean));
        n = std::max(n, st.n);
      }
    }
    const std::string what =
        quarter ? "Last-quarter perplexity: only the predictions at positions 3L/4 to L of "
                  "each window, i.e. the positions furthest from the start (all unseen in "
                  "training once 3L/4 >= T0). The whole-window mean of the table above mixes "
                  "in the early positions, which every model handles; this one does not. "
                : "Validation perplexity per evaluation length L (no RoPE scaling). ";
    md.table(what + "Mean over the seeds of each scheme (up to " + std::to_string(n) +
                 "); n/a = not evaluated (a learned table has no rows past its max_len).",
             len_header(s, "pe"), rows);
  }
  md.figure(plot_ppl_vs_length(s), "perplexity against length",
            "validation perplexity against evaluation length (both axes logarithmic), mean "
            "over seeds; values above the clip line are drawn as triangles at the clip.");
  if (!s.positions) return md.not_run("position_loss.csv");
  md.figure(plot_loss_vs_position(s), "loss against position",
            "loss per position bucket in the longest windows, seed 1 of each scheme. Left of "
            "the grey line are positions seen in training; right of it, unseen ones.");
}

void scaling_section(Markdown& md, const Study& s) {
  md.heading("3. RoPE scaling at evaluation time");
  const auto scalings = rope_scalings(s);
  if (!s.eval || scalings.size() <= 1)
    return md.not_run("extrapolation.csv", "rows of RoPE scaling methods");
  md.para(
      "These change nothing in training: the trained RoPE model is evaluated with its "
      "rotation angles adjusted for a window longer than T0, with factor s = L/T0. "
      "**linear** divides positions by s (position interpolation); **ntk** raises the base "
      "theta so the slow pairs are interpolated and the fast ones barely change; **dynamic** "
      "does ntk with s growing with the position (what token-by-token decoding sees); "
      "**yarn** interpolates per frequency pair with a ramp and sharpens attention slightly. "
      "At L = T0 every method has s = 1, so its column equals plain RoPE's (a sanity check).");
  std::vector<std::vector<std::string>> rows;
  for (const auto& sc : scalings) {
    rows.push_back({sc});
    for (const long L : s.lengths) rows.back().push_back(fmt(scaled_rope_ppl(s, sc, L).mean));
  }
  md.table(
      "Validation perplexity of the RoPE model evaluated with every scaling (seed 1) per "
      "scaling method and length L (none = plain RoPE, the same model and windows).",
      len_header(s, "scaling"), rows);
  md.figure(plot_rope_scaling(s), "RoPE scaling",
            "RoPE validation perplexity against length, per scaling.");
  if (s.positions) {
    md.figure(plot_rope_scaling_position(s), "RoPE scaling: loss against position",
              "loss per position bucket of RoPE seed 1 in the longest windows, per scaling.");
  }
}

void theta_ablation(Markdown& md, const Study& s) {
  md.heading("4.1 RoPE base theta", 3);
  const auto thetas = theta_runs(s);
  if (thetas.empty()) {
    md.not_run("runs.csv", "RoPE runs with a theta other than 10000");
  } else if (!s.eval) {
    md.not_run("extrapolation.csv");
  } else {
    md.para(
        "theta sets RoPE's slowest rotation: pair i turns by p·theta^(-2i/D) radians at "
        "position p. A small theta makes every pair turn fast (angles wrap around within the "
        "window); a large one leaves the slow pairs almost still.");
    std::vector<std::vector<std::string>> rows;
    for (const Run* r : thetas) {
      rows.push_back({fmt_plain(r->theta), r->run});
      for (const long L : s.lengths) {
        rows.back().push_back(fmt(eval_ppl_run(s, r->run, "none", L).mean));
      }
    }
    auto h = len_header(s, "theta");
    h.insert(h.begin() + 1, "run");
    md.table(
        "Validation perplexity per length of RoPE models that differ only in theta (one "
        "seed each, no scaling).",
        h, rows);
    md.figure(plot_rope_theta(s), "RoPE theta",
              "RoPE validation perplexity against length, per theta.");
  }
}

void rope_longest_ablation(Markdown& md, const Study& s) {
  md.heading("4.2 RoPE at the longest length: no scaling against the best scaling", 3);
  const auto scalings = rope_scalings(s);
  if (!s.eval || s.lengths.empty() || scalings.size() <= 1) {
    md.not_run("extrapolation.csv", "rows of RoPE scaling methods");
  } else {
    const long L = s.lengths.back();
    std::string best;
    double best_ppl = INFINITY;
    for (const auto& sc : scalings) {
      const double p = scaled_rope_ppl(s, sc, L).mean;
      if (sc != "none" && p < best_ppl) best = sc, best_ppl = p;
    }
    std::vector<std::vector<std::string>> rows;
    for (const auto& sc : {std::string("none"), best}) {
      if (sc.empty()) continue;
      rows.push_back({sc == "none" ? "none (plain RoPE)" : sc + " (best)",
                      fmt(scaled_rope_ppl(s, sc, L).mean),
                      fmt(scaled_rope_ppl(s, sc, L, true).mean)});
    }
    md.table("RoPE at L = " + std::to_string(L) +
                 ": perplexity over the whole window and over "
                 "its last quarter, without scaling and with the scaling that gives the lowest "
                 "whole-window perplexity at this length, on the RoPE model of Table 5.",
             {"scaling", "ppl", "last-quarter ppl"}, rows);
  }
}

void mlm_ablation(Markdown& md, const Study& s) {
  md.heading("4.3 No causal mask: masked-LM, NoPE against a PE", 3);
  if (!s.mlm) return md.not_run("mlm.csv");
  md.para(
      "Without the causal mask, next-token prediction is ill-posed (each position can see its "
      "own target), so this ablation trains a masked LM: attention is bidirectional, a share "
      "of input tokens is replaced by a mask token and the loss is taken on those. Without a "
      "mask *and* without a PE, attention sees the input as a bag of tokens: the model cannot "
      "tell any order apart.");
  std::vector<std::vector<std::string>> rows;
  for (const auto& m : *s.mlm) {
    rows.push_back({m.pe, fmt(m.val_loss), fmt(std::exp(m.val_loss)), fmt(m.shuffle_max_diff)});
  }
  md.table(
      "Masked-LM validation loss on the masked tokens (nats) and exp(loss). The shuffle "
      "check feeds a randomly shuffled copy of the input, un-shuffles the outputs and "
      "reports the largest absolute change of any output; about 1e-6 is float rounding, "
      "i.e. the model is permutation-equivariant.",
      {"pe", "masked-token loss", "exp(loss)", "shuffle max |Δ|"}, rows);
  // The shuffle check, in words: NoPE first, then what a PE does under the same shuffle.
  std::string check;
  for (const auto& m : *s.mlm) {
    if (m.pe != "none") continue;
    check =
        "**Shuffle check:** shuffling the input of the NoPE masked-LM changed its "
        "(un-shuffled) outputs by at most " +
        fmt(m.shuffle_max_diff) +
        (std::abs(m.shuffle_max_diff) < 1e-4
             ? ": float rounding. Without mask and PE the model is blind to order."
             : ": more than float rounding, so something in this model still sees order. "
               "That contradicts the theory and deserves a look.");
  }
  for (const auto& m : *s.mlm) {
    if (m.pe == "none" || !std::isfinite(m.shuffle_max_diff) || check.empty()) continue;
    check += " With " + m.pe + " the same shuffle changes the outputs by up to " +
             fmt(m.shuffle_max_diff) + ": its PE lets the model see the order.";
  }
  if (!check.empty()) md.para(check);
}

void ablation_section(Markdown& md, const Study& s) {
  md.heading("4. Ablations");
  theta_ablation(md, s);
  rope_longest_ablation(md, s);
  mlm_ablation(md, s);
}

void tasks_section(Markdown& md, const Study& s) {
  md.heading("5. Order and retrieval tasks");
  if (!s.tasks) return md.not_run("tasks.csv");
  md.para(
      "`reverse` asks the model to write its input backwards: impossible without knowing the "
      "order. `passkey` hides a number in filler text and asks for it back: retrieval over a "
      "long window. Lengths marked † are longer than the task's training length.");
  std::vector<std::string> tasks;
  for (const auto& t : *s.tasks) {
    if (std::find(tasks.begin(), tasks.end(), t.task) == tasks.end()) tasks.push_back(t.task);
  }
  for (const auto& task : tasks) {
    std::set<long> lens, train_lens;
    std::vector<std::string> pes;
    for (const auto& t : *s.tasks) {
      if (t.task != task) continue;
      lens.insert(t.test_len), train_lens.insert(t.train_len), pes.push_back(t.pe);
    }
    std::vector<std::string> h = {"pe"};
    for (const long L : lens) h.push_back(std::to_string(L) + (L > *train_lens.begin() ? "†" : ""));
    std::vector<std::vector<std::string>> rows;
    for (const auto& pe : order_pes(pes)) {
      rows.push_back({pe});
      for (const long L : lens) {
        std::vector<double> acc;
        for (const auto& t : *s.tasks) {
          if (t.task == task && t.pe == pe && t.test_len == L) acc.push_back(t.accuracy);
        }
        rows.back().push_back(acc.empty() ? "n/a" : fmt_percent(stat_of(acc).mean));
      }
    }
    std::vector<std::string> tl;
    for (const long L : train_lens) tl.push_back(std::to_string(L));
    md.table("Task `" + task +
                 "`: accuracy (share of test examples answered exactly right) "
                 "per scheme and test length; trained at length " +
                 join(tl) + ".",
             h, rows);
  }
}

void loc_section(Markdown& md, const Study& s) {
  md.heading("6. Cost of each scheme: lines of code and parameters");
  if (!s.loc) return md.not_run("loc.csv");
  std::vector<std::string> pes;
  for (const auto& l : *s.loc) pes.push_back(l.pe);
  long none_params = -1;
  for (const auto& l : *s.loc)
    if (l.pe == "none") none_params = l.params;
  std::vector<std::vector<std::string>> rows;
  for (const auto& pe : order_pes(pes)) {
    std::vector<std::string> files;
    long lines = 0, params = 0;
    for (const auto& l : *s.loc) {
      if (l.pe != pe) continue;
      for (size_t a = 0, b = 0; b != std::string::npos; a = b + 1) {  // "x.h+x.cpp"
        b = l.file.find('+', a);
        files.push_back("`" + l.file.substr(a, b == std::string::npos ? b : b - a) + "`");
      }
      lines += l.lines, params = l.params;
    }
    rows.push_back({pe, join(files), fmt_count(lines), fmt_count(params),
                    none_params < 0 ? "n/a" : fmt_count(params - none_params)});
  }
  md.table(
      "Lines of the scheme's source file(s) under posenc/ (as counted by the experiment "
      "runner) and the parameter count of the whole model with that scheme; the last "
      "column is what the scheme adds over NoPE.",
      {"pe", "files", "lines", "params", "params over none"}, rows);
}

void figures_section(Markdown& md, const Study& s) {
  md.heading("7. Figures: how RoPE rotates, where the models attend");
  md.figure(plot_rope_rotation(s), "RoPE rotation",
            "RoPE rotation of positions 0..63 as points (cos a, sin a), a = p·theta^(-2i/D), "
            "theta = 10000, head dim D = 32, for a fast, a middle and a slow pair, computed "
            "from the formula. Fast pairs tell nearby positions apart; slow pairs barely "
            "move over the window, so they carry coarse, long-range position.");
  if (s.attention.empty()) return md.not_run("attention_<pe>.csv");
  md.figure(plot_attention(s), "attention maps",
            "attention weights of layer 0, averaged over heads, for the first 64 positions "
            "(row = query position, column = key position), one panel per scheme on one colour "
            "scale. A causal model has zeros above the diagonal.");
}

void runs_section(Markdown& md, const Study& s) {
  md.heading("9. Every trained model");
  std::vector<std::vector<std::string>> rows;
  for (const auto& r : s.runs) {
    rows.push_back({r.run, r.pe, std::to_string(r.seed), std::to_string(r.steps),
                    fmt_plain(r.theta), r.causal, r.objective, fmt_count(r.params),
                    fmt(r.train_loss), fmt(r.val_loss)});
  }
  md.table(
      "All rows of runs.csv: losses in nats (train = last logged training loss, val = "
      "held-out loss at T0; for masked-LM runs the loss on masked tokens).",
      {"run", "pe", "seed", "steps", "theta", "causal", "objective", "params", "train loss",
       "val loss"},
      rows);
}

void raw_section(Markdown& md, const Study& s) {
  md.heading("10. Raw data");
  namespace fs = std::filesystem;
  std::string list;
  for (const char* f :
       {"runs.csv", "extrapolation.csv", "position_loss.csv", "mlm.csv", "tasks.csv", "loc.csv"}) {
    list += fs::exists(s.dir + "/" + f) ? std::string("- [") + f + "](" + f + ")\n"
                                        : std::string("- ") + f + ": not produced\n";
  }
  for (const auto& [run, points] : s.curves) {
    list += "- [curves/" + run + ".csv](curves/" + run + ".csv)\n";
  }
  for (const auto& [pe, m] : s.attention) {
    list += "- [attention_" + pe + ".csv](attention_" + pe + ".csv)\n";
  }
  md.para(
      "The numbers behind every table and figure, as written by the experiment runner "
      "(columns in train/study/tables.h):\n\n" +
      list);
}

}  // namespace

void write_report(const std::string& dir, const ReportInfo& info) {
  const Study s = load_study(dir);
  std::filesystem::create_directories(dir + "/plots");
  Markdown md;
  md.quick = info.quick, md.dir = dir;
  header_section(md, s, info);
  training_section(md, s);
  extrapolation_section(md, s);
  scaling_section(md, s);
  ablation_section(md, s);
  tasks_section(md, s);
  loc_section(md, s);
  figures_section(md, s);
  md.heading("8. What the numbers say");
  md.para("Generated from the tables above; each point quotes the numbers it rests on.");
  for (const auto& f : findings(s)) md.out += "- " + f + "\n";
  md.out += "\n";
  runs_section(md, s);
  raw_section(md, s);
  write_file_atomic(dir + "/REPORT.md", md.out);
}

}  // namespace poslab
