// Tests for study/report.h, continued: the report is tables, figures and captions (no
// generated prose), missing files turn sections into "not run", every plot the report links
// is well-formed SVG, the figures avoid the defects of v2 (pooled seeds, bands below 1, buckets
// that do not resolve T0), and the v4 figures read the runs their tables read (the budget curve
// every seed, the theta figure the B/4 branches).
#include <catch2/catch.hpp>

#include <cctype>
#include <set>
#include <sstream>

#include "tests/plot/xml_check.h"
#include "tests/study/report_fixture.h"
#include "tests/support/svg_text.h"

using namespace poslab;
using namespace poslab::report_detail;
using namespace report_test;

TEST_CASE("no prose is generated: every paragraph is a table, a figure or a caption", "[report]") {
  TempDir d;
  write_study(d);
  const std::string md = report_of(d);
  CHECK(md.find("What the numbers say") == std::string::npos);
  for (const char* word : {"on every seed", "rises", "falls", "not interpretable", "‡"}) {
    INFO(word);
    CHECK(md.find(word) == std::string::npos);
  }
}

TEST_CASE("missing files turn their sections into \"not run\"", "[report]") {
  TempDir d;  // an empty folder: nothing at all
  const std::string md = report_of(d);
  for (const char* f : {"runs.csv", "extrapolation.csv", "tasks.csv", "mlm.csv", "timing.csv",
                        "tuning.csv", "loc.csv", "attention.csv", "attribution.csv", "copy.csv",
                        "rope_pairs.csv", "throughput.csv"}) {
    INFO(f);
    CHECK(md.find(std::string("**Not run**: `") + f + "` ") != std::string::npos);
  }
  CHECK(row(md, "## Parts of the plan: what is done", "main runs <pe>_s<seed>") ==
        "| main runs <pe>_s<seed> | runs.csv | 0 | **not in the results** |");
  CHECK(row(md, "## Setup", "corpus") == "| corpus | not recorded (no corpus.csv) |");
  CHECK(md.find("- corpus.csv: not produced\n") != std::string::npos);
  CHECK(md.find("- throughput.csv: not produced\n") != std::string::npos);
  CHECK(row(md, "## Setup", "machines that made the runs") ==
        "| machines that made the runs | n/a |");
  CHECK(fs::exists(d.path + "/plots/rope_rotation.svg"));  // drawn from the formula alone
  CHECK(fs::exists(d.path + "/plots/rope_offset.svg"));

  d.write("mlm.csv", "run,pe,seed,val_loss,shuffle_max_diff\n");  // a header only: not run too
  const std::string md2 = report_of(d);
  CHECK(md2.find("**Not run**: `mlm.csv` holds no rows (the quick study skips some parts).") !=
        std::string::npos);
}

TEST_CASE("every plot REPORT.md links exists and is well-formed SVG", "[report]") {
  TempDir d;
  write_study(d);
  const std::string md = report_of(d);
  std::set<std::string> linked;  // every "](plots/NAME.svg)"
  for (size_t a = md.find("](plots/"); a != std::string::npos; a = md.find("](plots/", a + 1)) {
    linked.insert(md.substr(a + 2, md.find(')', a) - a - 2));
  }
  for (const char* p :
       {"plots/ppl_vs_length.svg", "plots/training_curves.svg", "plots/loss_vs_position.svg",
        "plots/sliding_gap.svg", "plots/rope_scaling.svg", "plots/rope_rotation.svg",
        "plots/rope_offset.svg", "plots/attention_rope.svg", "plots/attention_none.svg",
        "plots/passkey.svg", "plots/task_reverse.svg", "plots/attribution.svg",
        "plots/copy_gain.svg", "plots/rope_pairs.svg", "plots/budget.svg", "plots/rope_theta.svg",
        "plots/sliding_gap_position.svg", "plots/rope_scaling_position.svg"}) {
    INFO(p);
    CHECK(linked.count(p) == 1);
  }
  for (const auto& p : linked) {
    INFO(p);
    REQUIRE(fs::exists(d.path + "/" + p));
    CHECK(xml_error(read_file(d.path + "/" + p)) == "");
  }
  // Seed bands on the perplexity plot; rope and sinusoidal in different colours.
  const std::string ppl = read_file(d.path + "/plots/ppl_vs_length.svg");
  CHECK(ppl.find("class=\"band\"") != std::string::npos);
  CHECK(pe_color("rope") != pe_color("sinusoidal"));
  // Every head of the first and the last layer: 2 layers x 2 heads.
  CHECK(read_file(d.path + "/plots/attention_rope.svg").find(">layer 3, head 1<") !=
        std::string::npos);
}

TEST_CASE("every scheme of the study has its own colour; an unknown one is grey", "[report]") {
  // the schemes of study v5 (study/schemes.cpp), in its order
  const char* const schemes[] = {"none",    "learned",   "sinusoidal",   "rope",      "alibi",
                                 "t5",      "kerple",    "fire",         "xpos",      "prope",
                                 "prope25", "rope_rand", "learned_rand", "rope_nope4"};
  std::set<std::string> colors;
  for (const char* pe : schemes) {
    INFO(pe);
    CHECK(pe_color(pe) != "#777777");
    colors.insert(pe_color(pe));
  }
  CHECK(colors.size() == std::size(schemes));
  CHECK(pe_color("rope") == "#0072B2");  // v4's colours stay: its figures are committed
  CHECK(pe_color("t5") == "#CC79A7");
  CHECK(pe_color("no_such_scheme") == "#777777");
}

namespace {

// The lines of an SVG that draw (not its <text>, not the root's and the legend box's size: a
// legend's width follows its words).
std::vector<std::string> drawing(const std::string& svg) {
  std::vector<std::string> out;
  std::istringstream lines(svg);
  for (std::string l; std::getline(lines, l);) {
    if (l.find("<text") == std::string::npos && l.rfind("<svg ", 0) != 0 &&
        l.find("<rect class=\"legend\"") == std::string::npos)
      out.push_back(l);
  }
  return out;
}

// An English word of the report's figures in t ("" if none): words of ASCII letters and '_',
// so the CSV columns loss_control and loss_planted are names, not the word loss.
std::string english_word(const std::string& t) {
  static const std::set<std::string> kWords = {
      "against",  "axis",       "axes",       "band",  "clipped", "copies",       "dashed",
      "distance", "evaluation", "every",      "fixed", "flat",    "interpolated", "interval",
      "later",    "length",     "lines",      "log",   "loss",    "pair",         "perplexity",
      "plain",    "position",   "positions",  "ppl",   "rad",     "run",          "scale",
      "scheme",   "seed",       "seeds",      "theta", "token",   "tokens",       "training",
      "unseen",   "val",        "wavelength", "win",   "window"};
  std::string word;
  for (size_t i = 0; i <= t.size(); ++i) {
    const char c = i < t.size() ? t[i] : ' ';
    if (std::isalpha(static_cast<unsigned char>(c)) || c == '_') {
      word += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    } else {
      if (kWords.count(word)) return word;
      word.clear();
    }
  }
  return "";
}

bool has_han(const std::string& s) {  // U+4E00..U+9FFF: UTF-8 lead bytes E4..E9
  for (const char c : s)
    if (static_cast<unsigned char>(c) >= 0xE4 && static_cast<unsigned char>(c) <= 0xE9) return true;
  return false;
}

}  // namespace

TEST_CASE("the Chinese guide's figures also in Chinese: the same drawing, Chinese words",
          "[report]") {
  TempDir d;
  write_study(d);
  report_of(d);
  for (const char* name :
       {"ppl_vs_length", "loss_vs_position", "rope_scaling", "rope_scaling_position", "rope_theta",
        "rope_rotation", "rope_offset", "attribution", "copy_gain", "rope_pairs"}) {
    INFO(name);
    const std::string base = d.path + "/plots/" + name;
    REQUIRE(fs::exists(base + ".zh.svg"));
    const std::string en = read_file(base + ".svg"), zh = read_file(base + ".zh.svg");
    CHECK(xml_error(zh) == "");
    CHECK(drawing(zh) == drawing(en));  // every coordinate, colour and path
    const std::vector<std::string> t_en = test::svg_texts(en), t_zh = test::svg_texts(zh);
    REQUIRE(t_zh.size() == t_en.size());
    size_t han = 0;
    for (size_t k = 0; k < t_zh.size(); ++k) {
      INFO("text " << k << ": " << t_zh[k] << " | " << t_en[k]);
      CHECK(english_word(t_zh[k]) == "");  // ticks, scheme and scaling names stay as they are
      han += has_han(t_zh[k]);
    }
    CHECK(han >= 3);       // the title and the axes, at least
    bool english = false;  // the English figure has the words the check above looks for
    for (const std::string& t : t_en) english |= english_word(t) != "";
    CHECK(english);
  }
  // the report links the English figures only
  CHECK(report_of(d).find(".zh.svg") == std::string::npos);
}

TEST_CASE("the figures: seeds not pooled, bands not below 1, positions on a log axis", "[report]") {
  TempDir d;
  write_study(d);
  report_of(d);
  // passkey: one panel per scheme and seed (rope seeds 1 and 2, alibi seed 1 and an empty 2).
  const std::string passkey = read_file(d.path + "/plots/passkey.svg");
  CHECK(passkey.find(">rope, seed 1<") != std::string::npos);
  CHECK(passkey.find(">rope, seed 2<") != std::string::npos);
  CHECK(passkey.find("pooled") == std::string::npos);
  // Loss against position: a log x axis (its note says so).
  CHECK(read_file(d.path + "/plots/loss_vs_position.svg").find("log x axis") != std::string::npos);
  // Copy gain: the training length marked.
  CHECK(read_file(d.path + "/plots/copy_gain.svg").find("T0 = 256") != std::string::npos);
  // RoPE pairs: YaRN's alpha and beta marked.
  CHECK(read_file(d.path + "/plots/rope_pairs.svg").find("1/beta = 1/32") != std::string::npos);
}

namespace {

// Adds `by` to the loss of extrapolation.csv's rows (or runs.csv's val_loss) of the runs named,
// writes the report again and returns the figure at `plot`.
std::string figure_after(const TempDir& d, const std::string& plot,
                         const std::set<std::string>& runs, double by, bool in_runs_csv = false) {
  if (in_runs_csv) {
    std::vector<RunRow> rows = read_rows<RunRow>(d.path + "/runs.csv");
    for (auto& r : rows) r.val_loss += runs.count(r.run) ? by : 0;
    write_rows(d.path + "/runs.csv", rows);
  } else {
    std::vector<EvalRow> rows = read_rows<EvalRow>(d.path + "/extrapolation.csv");
    for (auto& e : rows) e.loss += runs.count(e.run) ? by : 0;
    write_rows(d.path + "/extrapolation.csv", rows);
  }
  report_of(d);
  return read_file(d.path + "/" + plot);
}

}  // namespace

TEST_CASE("the theta figure sets theta 10 and 1e6 against RoPE's B/4 branches", "[report]") {
  TempDir d;
  write_study(d);
  report_of(d);
  const std::string plot = "plots/rope_theta.svg", before = read_file(d.path + "/" + plot);
  CHECK(before.find(">theta 10000 (B/4 branches)<") != std::string::npos);
  // The main runs (budget B) are not in it, nor the branch of a seed the ablation lacks (3).
  CHECK(figure_after(d, plot, {"rope_s1", "rope_s2", "rope_s3"}, 0.5) == before);
  CHECK(figure_after(d, plot, {"rope_b4_s3"}, 0.5) == before);
  // The B/4 branches of the ablation's seeds are.
  CHECK(figure_after(d, plot, {"rope_b4_s2"}, 0.5) != before);
}

TEST_CASE("the budget figure is the mean over seeds, not seed 1 alone", "[report]") {
  TempDir d;
  write_study(d);
  report_of(d);
  const std::string plot = "plots/budget.svg", before = read_file(d.path + "/" + plot);
  CHECK(before.find("mean over seeds") != std::string::npos);
  CHECK(figure_after(d, plot, {"alibi_b4_s2"}, 0.5, true) != before);
}

TEST_CASE("a malformed CSV fails naming the file and the line", "[report]") {
  TempDir d;
  write_study(d);
  const auto error_of = [&] {
    try {
      write_report(d.path, kInfo);
    } catch (const std::runtime_error& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  SECTION("a row with a field missing") {
    const std::string runs = read_file(d.path + "/runs.csv");
    const size_t line3 = runs.find('\n', runs.find('\n') + 1) + 1;
    d.write("runs.csv", runs.substr(0, line3) + "oops,rope,1\n" + runs.substr(line3));
    CHECK(error_of() ==
          d.path + "/runs.csv: line 3: expected 16 fields, as in the header, but got 3");
  }
  SECTION("a field that is not a number") {
    d.write("ngram.csv", "corpus,n,k,val_loss\npystdlib,3,0.1,abc\n");
    CHECK(error_of() ==
          d.path + "/ngram.csv: line 2: column 'val_loss': expected a number, but got 'abc'");
  }
  SECTION("a missing column") {
    d.write("loc.csv", "pe,file,params\nnone,a.cpp,1\n");
    CHECK(error_of() == d.path +
                            "/loc.csv: line 1: expected a column 'lines' in the header, but got "
                            "'pe,file,params'");
  }
}
