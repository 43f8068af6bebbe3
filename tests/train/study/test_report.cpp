// Tests for train/study/report.h: a small fake results folder (every CSV, a nan perplexity, a
// missing optional file) goes through write_report; REPORT.md must hold the tables with
// numbers computed by hand, every plot it links must exist and be well-formed SVG, and a
// malformed CSV must fail with an error naming the file and the line.
#include "train/study/report.h"

#include <stdlib.h>

#include <catch2/catch.hpp>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>
#include <string>
#include <tuple>
#include <vector>

#include "data/atomic_file.h"

using namespace poslab;
using namespace poslab::report_detail;
namespace fs = std::filesystem;

namespace {

// A fresh directory under /tmp, removed when the object goes out of scope.
struct TempDir {
  std::string path;
  TempDir() {
    char tmpl[] = "/tmp/poslab_report_XXXXXX";
    REQUIRE(mkdtemp(tmpl) != nullptr);
    path = tmpl;
  }
  ~TempDir() { fs::remove_all(path); }
  void write(const std::string& name, const std::string& text) const {
    fs::create_directories(fs::path(path + "/" + name).parent_path());
    std::ofstream(path + "/" + name) << text;
  }
};

std::string ln(double ppl) {  // a loss, printed with enough digits to give `ppl` back
  std::ostringstream os;
  os.precision(17);
  os << std::log(ppl);
  return os.str();
}

// runs.csv of the fake study, and the training curves of three runs.
//   rope      val ppl 10 / 20 (mean 15), train ppl 9 / 11 (mean 10)
void write_runs(const TempDir& d) {
  std::string runs =
      "run,pe,seed,steps,theta,causal,objective,params,train_loss,val_loss,tokens_per_s,"
      "train_seconds\n";
  const auto run = [&](const std::string& name, const std::string& pe, int seed, double theta,
                       const std::string& causal, const std::string& obj, long params,
                       double train_ppl, double val_ppl, double secs) {
    std::ostringstream os;
    os << name << "," << pe << "," << seed << ",200," << theta << "," << causal << "," << obj << ","
       << params << "," << ln(train_ppl) << "," << ln(val_ppl) << ",1000," << secs << "\n";
    runs += os.str();
  };
  run("none_s1", "none", 1, 10000, "true", "lm", 800000, 14, 16, 40);
  run("none_s2", "none", 2, 10000, "true", "lm", 800000, 15, 17, 40);
  run("learned_s1", "learned", 1, 10000, "true", "lm", 931072, 9, 11, 40);
  run("learned_s2", "learned", 2, 10000, "true", "lm", 931072, 10, 13, 40);
  run("sinusoidal_s1", "sinusoidal", 1, 10000, "true", "lm", 800000, 10, 12, 40);
  run("rope_s1", "rope", 1, 10000, "true", "lm", 800000, 9, 10, 50);
  run("rope_s2", "rope", 2, 10000, "true", "lm", 800000, 11, 20, 70);
  run("alibi_s1", "alibi", 1, 10000, "true", "lm", 800000, 9, 10.5, 40);
  run("rope_theta10", "rope", 1, 10, "true", "lm", 800000, 12, 13, 40);
  run("rope_theta1e6", "rope", 1, 1e6, "true", "lm", 800000, 9, 10, 40);
  run("mlm_none", "none", 1, 10000, "false", "mlm", 800000, 20, 24.5, 40);
  run("mlm_rope", "rope", 1, 10000, "false", "mlm", 800000, 15, 18.2, 40);
  d.write("runs.csv", runs);

  // Training curves; val_loss is nan on steps without an evaluation.
  for (const std::string r : {"rope_s1", "rope_s2", "none_s1"}) {
    d.write("curves/" + r + ".csv",
            "step,lr,train_loss,val_loss,grad_norm,tokens_per_s\n"
            "0,0.001,4.5,4.6,1.0,1000\n50,0.001,3.5,nan,0.8,1000\n100,0.001,3.0,3.1,0.7,1000\n"
            "200,0.0001,2.5,2.6,0.5,1000\n");
  }
}

// extrapolation.csv of the fake study: three lengths (T0 = 256).
//   learned   eval ppl at 256: 11 / 13, at 512: 90 / 110, at 1024: nan (past its max_len)
void write_extrapolation(const TempDir& d) {
  std::string ex =
      "run,pe,seed,scaling,len,loss,ppl,last_quarter_loss,last_quarter_ppl,tokens,"
      "windows\n";
  const auto eval = [&](const std::string& r, const std::string& pe, int seed,
                        const std::string& sc, int len, double ppl, double lq) {
    std::ostringstream os;
    os << r << "," << pe << "," << seed << "," << sc << "," << len << ","
       << (std::isnan(ppl) ? "nan" : ln(ppl)) << "," << ppl << ","
       << (std::isnan(lq) ? "nan" : ln(lq)) << "," << lq << "," << len * 4 << ",4\n";
    ex += os.str();
  };
  const double nan = NAN;
  eval("rope_s1", "rope", 1, "none", 256, 10, 10), eval("rope_s2", "rope", 2, "none", 256, 20, 20);
  eval("rope_s1", "rope", 1, "none", 512, 12, 30), eval("rope_s2", "rope", 2, "none", 512, 14, 50);
  eval("rope_s1", "rope", 1, "none", 1024, 500, 3000);
  eval("rope_s2", "rope", 2, "none", 1024, 700, 5000);
  for (const auto& [sc, f] :
       std::vector<std::pair<std::string, double>>{{"linear", 2.0}, {"ntk", 1.5}, {"yarn", 1.2}}) {
    for (const int seed : {1, 2}) {
      const std::string r = "rope_s" + std::to_string(seed);
      eval(r, "rope", seed, sc, 256, seed * 10, seed * 10);
      eval(r, "rope", seed, sc, 512, seed * 10 * f, seed * 10 * f);
      eval(r, "rope", seed, sc, 1024, seed * 20 * f, seed * 20 * f);
    }
  }
  eval("learned_s1", "learned", 1, "none", 256, 11, 11);
  eval("learned_s2", "learned", 2, "none", 256, 13, 13);
  eval("learned_s1", "learned", 1, "none", 512, 90, 200);
  eval("learned_s2", "learned", 2, "none", 512, 110, 200);
  eval("learned_s1", "learned", 1, "none", 1024, nan, nan);
  eval("learned_s2", "learned", 2, "none", 1024, nan, nan);
  for (const int L : {256, 512, 1024}) {
    eval("none_s1", "none", 1, "none", L, 16 * L / 256.0, 16);
    eval("none_s2", "none", 2, "none", L, 17 * L / 256.0, 17);
    eval("sinusoidal_s1", "sinusoidal", 1, "none", L, 12 * L / 128.0, 12);
    eval("alibi_s1", "alibi", 1, "none", L, 10.5 - L / 1024.0, 10);
    eval("rope_theta10", "rope", 1, "none", L, 13 + L, 13);
    eval("rope_theta1e6", "rope", 1, "none", L, 10 + L / 8.0, 10);
  }
  d.write("extrapolation.csv", ex);
}

// The fake study: three lengths (T0 = 256), two seeds for rope, learned and none.
void write_study(const TempDir& d) {
  write_runs(d);
  write_extrapolation(d);
  std::string pos = "run,pe,scaling,len,start,end,loss\n";
  for (const std::string pe : {"none", "learned", "sinusoidal", "rope", "alibi"}) {
    for (int b = 0; b < 4; ++b) {
      pos += pe + "_s1," + pe + ",none,1024," + std::to_string(256 * b) + "," +
             std::to_string(256 * (b + 1)) + "," + std::to_string(2.5 + b * b) + "\n";
    }
  }
  for (const std::string sc : {"linear", "ntk", "yarn"}) {
    for (int b = 0; b < 4; ++b) {
      pos += "rope_s1,rope," + sc + ",1024," + std::to_string(256 * b) + "," +
             std::to_string(256 * (b + 1)) + "," + std::to_string(2.5 + 0.1 * b) + "\n";
    }
  }
  d.write("position_loss.csv", pos);
  d.write("mlm.csv", "pe,val_loss,shuffle_max_diff\nnone,3.2,1.2e-06\nrope,2.9,0.35\n");
  d.write("loc.csv",
          "pe,file,lines,params\nnone,posenc/none.cpp,20,800000\n"
          "learned,posenc/learned.h+posenc/learned.cpp,40,931072\nrope,posenc/rope.cpp,80,800000\n"
          "rope,posenc/rope_scaling.cpp,120,800000\n");
  d.write("attention_none.csv", "1,0,0\n0.5,0.5,0\n0.3,0.3,0.4\n");
  d.write("attention_rope.csv", "1,0,0\n0.9,0.1,0\n0.2,0.3,0.5\n");
  // tasks.csv is left out on purpose: the optional file that is missing.
}

const ReportInfo kInfo{
    "poslab study (test)", "poslab experiments --quick", "2024-01-01", "test machine", true, 3725};

std::string report_of(const TempDir& d) {
  write_report(d.path, kInfo);
  return read_file(d.path + "/REPORT.md");
}

// The markdown table row that starts with `first` cell, after `after` in the text.
std::string row(const std::string& md, const std::string& after, const std::string& first) {
  const size_t a = md.find(after);
  REQUIRE(a != std::string::npos);
  const size_t b = md.find("\n| " + first + " |", a);
  REQUIRE(b != std::string::npos);
  return md.substr(b + 1, md.find('\n', b + 1) - b - 1);
}

// Well-formed enough: one <svg> root, every tag closed in order, no stray '<' or '&'.
std::string svg_error(const std::string& doc) {
  std::vector<std::string> open;
  size_t i = doc.find("<svg");
  if (i == std::string::npos) return "no <svg> element";
  for (; i < doc.size(); ++i) {
    if (doc[i] == '&') {
      const size_t semi = doc.find(';', i);
      const std::string e = semi == std::string::npos ? "" : doc.substr(i + 1, semi - i - 1);
      const bool number =
          e.size() > 1 && e[0] == '#' && e.find_first_not_of("0123456789", 1) == std::string::npos;
      if (!number && e != "lt" && e != "gt" && e != "amp" && e != "quot" && e != "apos") {
        return "bad entity at byte " + std::to_string(i);
      }
    }
    if (doc[i] != '<') continue;
    const size_t end = doc.find('>', i);
    if (end == std::string::npos) return "unclosed tag at byte " + std::to_string(i);
    std::string tag = doc.substr(i + 1, end - i - 1);
    if (tag.find('<') != std::string::npos) return "'<' inside a tag at " + std::to_string(i);
    if (tag[0] == '/') {
      if (open.empty() || open.back() != tag.substr(1)) return "unbalanced </" + tag + ">";
      open.pop_back();
    } else if (tag.back() != '/') {
      open.push_back(tag.substr(0, tag.find_first_of(" \n")));
    }
    i = end;
  }
  return open.empty() ? "" : "unclosed <" + open.back() + ">";
}

}  // namespace

TEST_CASE("report numbers are formatted to 4 significant figures", "[report]") {
  CHECK(fmt(15) == "15.00");
  CHECK(fmt(100) == "100.0");
  CHECK(fmt(0.0123456) == "0.01235");
  CHECK(fmt(1234.4) == "1234");
  CHECK(fmt(3.21e7) == "3.21e7");
  CHECK(fmt(1.2e-6) == "1.2e-6");
  CHECK(fmt(NAN) == "n/a");
  CHECK(fmt(INFINITY) == "inf");
  CHECK(fmt_plain(10) == "10");
  CHECK(fmt_plain(1e6) == "1e6");
  CHECK(fmt_plain(0.5) == "0.5");
  CHECK(fmt_count(812544) == "812,544");
  CHECK(fmt_count(-1000) == "-1,000");
  CHECK(fmt_percent(0.875) == "87.5%");
  CHECK(fmt_stat({15, 10, 20, 2}) == "15.00 (10.00–20.00)");
  CHECK(fmt_stat(stat_of({NAN, 4.0})) == "4.000");
  CHECK(fmt_stat(stat_of({NAN})) == "n/a");
}

TEST_CASE("write_report computes the tables from the CSVs", "[report]") {
  TempDir d;
  write_study(d);
  const std::string md = report_of(d);

  // Header: the run info and the config read from runs.csv.
  CHECK(md.rfind("# poslab study (test)\n", 0) == 0);
  CHECK(md.find("| command | `poslab experiments --quick` |") != std::string::npos);
  CHECK(md.find("| wall time of the invocation that wrote this report | 1 h 2 min 5 s (3,725 s)") !=
        std::string::npos);
  CHECK(md.find("| training steps per main run | 200 |") != std::string::npos);
  CHECK(md.find("| seeds | 1, 2 |") != std::string::npos);
  CHECK(md.find("| training length T0 (= shortest eval length) | 256 |") != std::string::npos);
  CHECK(md.find("| schemes (main runs) | none, learned, sinusoidal, rope, alibi |") !=
        std::string::npos);

  // Training: rope train ppl 9 / 11, val ppl 10 / 20 -> means 10 and 15 with their ranges.
  CHECK(row(md, "## 1. Training", "rope") ==
        "| rope | 800,000 | 2 | 10.00 (9.000–11.00) | 15.00 (10.00–20.00) | 1000 | 60.00 |");
  CHECK(row(md, "## 1. Training", "sinusoidal") ==
        "| sinusoidal | 800,000 | 1 | 10.00 | 12.00 | 1000 | 40.00 |");

  // Extrapolation: mean over seeds; learned at 1024 is nan -> n/a.
  CHECK(row(md, "## 2. Extrapolation", "pe") == "| pe | L=256 | L=512 | L=1024 |");
  CHECK(row(md, "## 2. Extrapolation", "rope") == "| rope | 15.00 | 13.00 | 600.0 |");
  CHECK(row(md, "## 2. Extrapolation", "learned") == "| learned | 12.00 | 100.0 | n/a |");
  CHECK(row(md, "Last-quarter perplexity", "rope") == "| rope | 15.00 | 40.00 | 4000 |");

  // RoPE scaling: yarn at 1024 is 20 * 1.2 (seed 1) and 40 * 1.2 (seed 2): mean 36.
  CHECK(row(md, "## 3. RoPE scaling", "yarn") == "| yarn | 15.00 | 18.00 | 36.00 |");
  CHECK(row(md, "## 3. RoPE scaling", "none") == "| none | 15.00 | 13.00 | 600.0 |");

  // Ablations: theta runs sorted by theta, the seed-1 main run as the 10000 baseline.
  CHECK(row(md, "4.1 RoPE base theta", "10") == "| 10 | rope_theta10 | 269.0 | 525.0 | 1037 |");
  CHECK(row(md, "4.1 RoPE base theta", "10000") == "| 10000 | rope_s1 | 10.00 | 12.00 | 500.0 |");
  CHECK(row(md, "4.1 RoPE base theta", "1e6") == "| 1e6 | rope_theta1e6 | 42.00 | 74.00 | 138.0 |");
  CHECK(row(md, "4.2 RoPE at the longest", "yarn (best)") == "| yarn (best) | 36.00 | 36.00 |");
  CHECK(row(md, "4.2 RoPE at the longest", "none (plain RoPE)") ==
        "| none (plain RoPE) | 600.0 | 4000 |");
  CHECK(row(md, "4.3 No causal mask", "none") == "| none | 3.200 | 24.53 | 1.2e-6 |");
  CHECK(md.find("changed its (un-shuffled) outputs by at most 1.2e-6: float rounding") !=
        std::string::npos);
  CHECK(md.find("With rope the same shuffle changes the outputs by up to 0.3500") !=
        std::string::npos);
}

TEST_CASE("write_report: tasks not run, cost, findings and raw data from the CSVs", "[report]") {
  TempDir d;
  write_study(d);
  const std::string md = report_of(d);

  // The missing optional file: its section says "not run", in quick mode with the reason.
  const size_t tasks = md.find("## 5. Order and retrieval tasks");
  CHECK(md.find("**Not run**: `tasks.csv` is not in the results folder (the quick study skips "
                "some parts).",
                tasks) == md.find("**Not run**", tasks));

  // Lines of code: files of a scheme summed, params over none.
  CHECK(row(md, "## 6. Cost", "rope") ==
        "| rope | `posenc/rope.cpp`, `posenc/rope_scaling.cpp` | 200 | 800,000 | 0 |");
  CHECK(row(md, "## 6. Cost", "learned") ==
        "| learned | `posenc/learned.h`, `posenc/learned.cpp` | 40 | 931,072 | 131,072 |");

  // Findings quote the numbers.
  const std::string says = md.substr(md.find("## 8. What the numbers say"));
  CHECK(says.find("**learned**: val ppl rises from 12.00 to 100.0 (×8.33)") != std::string::npos);
  CHECK(says.find("val loss went from 4.600 to 2.600 nats (none_s1). A causal model without PE "
                  "does learn") != std::string::npos);
  CHECK(says.find("**alibi** from L=256 to L=1024: val ppl stays flat: 10.25 to 9.500") !=
        std::string::npos);
  CHECK(says.find("Best scaling there (seed-1 model): **yarn** at 36.00") != std::string::npos);

  // Raw data: links to present files, "not produced" for the missing one.
  CHECK(md.find("- [runs.csv](runs.csv)") != std::string::npos);
  CHECK(md.find("- [curves/rope_s2.csv](curves/rope_s2.csv)") != std::string::npos);
  CHECK(md.find("- tasks.csv: not produced") != std::string::npos);
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
       {"plots/training_curves.svg", "plots/ppl_vs_length.svg", "plots/loss_vs_position.svg",
        "plots/rope_scaling.svg", "plots/rope_scaling_position.svg", "plots/rope_theta.svg",
        "plots/rope_rotation.svg", "plots/attention.svg"}) {
    CHECK(linked.count(p) == 1);
  }
  for (const auto& p : linked) {
    INFO(p);
    REQUIRE(fs::exists(d.path + "/" + p));
    const std::string svg = read_file(d.path + "/" + p);
    CHECK(svg_error(svg) == "");
  }
  // Seed 2 curves are dashed, the ppl plot clips the rope blow-up (600 > 1e3? no: 4000 in
  // the last quarter only), the attention grid has one panel per attention_<pe>.csv.
  CHECK(read_file(d.path + "/plots/training_curves.svg").find("dashed") != std::string::npos);
  const std::string att = read_file(d.path + "/plots/attention.svg");
  CHECK(att.find(">none<") != std::string::npos);
  CHECK(att.find(">rope<") != std::string::npos);
}

TEST_CASE("write_report adds the tasks table when tasks.csv is there", "[report]") {
  TempDir d;
  write_study(d);
  d.write("tasks.csv",
          "task,pe,train_len,test_len,accuracy\nreverse,rope,64,64,0.9\nreverse,rope,64,128,0.5\n"
          "reverse,none,64,64,0.25\nreverse,none,64,128,0.125\npasskey,alibi,256,1024,1\n");
  const std::string md = report_of(d);
  CHECK(row(md, "Task `reverse`", "pe") == "| pe | 64 | 128† |");
  CHECK(row(md, "Task `reverse`", "none") == "| none | 25.0% | 12.5% |");
  CHECK(row(md, "Task `reverse`", "rope") == "| rope | 90.0% | 50.0% |");
  CHECK(row(md, "Task `passkey`", "alibi") == "| alibi | 100.0% |");
  CHECK(md.find("**Task reverse** at test length 128: rope 50.0%, none 12.5%.") !=
        std::string::npos);
}

TEST_CASE("write_report with runs.csv alone says \"not run\" for every other part", "[report]") {
  TempDir d;
  d.write("runs.csv",
          "run,pe,seed,steps,theta,causal,objective,params,train_loss,val_loss,tokens_per_s,"
          "train_seconds\nrope_s1,rope,1,10,10000,true,lm,100," +
              ln(30) + "," + ln(40) + ",5,1\n");
  d.write("mlm.csv", "pe,val_loss,shuffle_max_diff\n");  // a header only: skipped too
  const std::string md = report_of(d);
  CHECK(row(md, "## 1. Training", "rope") == "| rope | 100 | 1 | 30.00 | 40.00 | 5.000 | 1.000 |");
  for (const char* f : {"extrapolation.csv", "tasks.csv", "loc.csv", "attention_<pe>.csv"}) {
    INFO(f);
    CHECK(md.find(std::string("**Not run**: `") + f + "` is not in the results folder") !=
          std::string::npos);
  }
  CHECK(md.find("**Not run**: `mlm.csv` holds no rows (the quick study skips some parts).") !=
        std::string::npos);
  CHECK(md.find("**Not run**: `runs.csv` holds no RoPE runs with a theta other than 10000") !=
        std::string::npos);
  CHECK(md.find("(Figure training curves not drawn: no data for it.)") != std::string::npos);
  CHECK(fs::exists(d.path + "/plots/rope_rotation.svg"));  // drawn from the formula alone
  CHECK(md.find("## 8. What the numbers say") != std::string::npos);
}

TEST_CASE("the ranking at T0 says whether the two best schemes' seed ranges overlap", "[report]") {
  const auto says_for = [](double rope1, double rope2, double alibi1, double alibi2) {
    TempDir d;
    std::string runs =
        "run,pe,seed,steps,theta,causal,objective,params,train_loss,val_loss,tokens_per_s,"
        "train_seconds\n";
    for (auto [name, pe, seed, ppl] : {std::tuple{"rope_s1", "rope", 1, rope1},
                                       {"rope_s2", "rope", 2, rope2},
                                       {"alibi_s1", "alibi", 1, alibi1},
                                       {"alibi_s2", "alibi", 2, alibi2},
                                       {"none_s1", "none", 1, 30.0}})
      runs += std::string(name) + "," + pe + "," + std::to_string(seed) + ",10,10000,true,lm,100," +
              ln(ppl) + "," + ln(ppl) + ",5,1\n";
    d.write("runs.csv", runs);
    const std::string md = report_of(d);
    const std::string says = md.substr(md.find("## 8. What the numbers say"));
    return says.substr(0, says.find('\n', says.find("At the training length")));
  };
  // rope 9-10 and alibi 11-12: apart, whatever the seed
  CHECK_THAT(says_for(9, 10, 11, 12),
             Catch::Contains("rope 9.500 < alibi 11.50 < none 30.00. The two best, rope "
                             "(9.000–10.00) and alibi (11.00–12.00 over 2 seeds), do not "
                             "overlap: the order holds for every seed."));
  // rope 9-11.5 and alibi 11-12: the means differ, the seeds do not agree
  CHECK_THAT(says_for(9, 11.5, 11, 12),
             Catch::Contains("The two best, rope (9.000–11.50) and alibi (11.00–12.00 over 2 "
                             "seeds), overlap: their order is within seed noise."));
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
    CHECK(error_of() == d.path +
                            "/runs.csv: line 3: expected 12 fields, as in the header, "
                            "but got 3");
  }
  SECTION("a field that is not a number") {
    d.write("mlm.csv", "pe,val_loss,shuffle_max_diff\nnone,3.2,1e-6\nrope,abc,0.3\n");
    CHECK(error_of() == d.path +
                            "/mlm.csv: line 3: column 'val_loss': expected a number, but "
                            "got 'abc'");
  }
  SECTION("a missing column") {
    d.write("loc.csv", "pe,file,params\nnone,a.cpp,1\n");
    CHECK(error_of() == d.path +
                            "/loc.csv: line 1: expected a column 'lines' in the header, "
                            "but got 'pe,file,params'");
  }
  SECTION("a ragged attention matrix") {
    d.write("attention_rope.csv", "1,0,0\n0.9,0.1\n");
    CHECK(error_of() == d.path +
                            "/attention_rope.csv: line 2: expected 3 values, as on the "
                            "first line, but got 2");
  }
  SECTION("a length that is not a whole number") {
    d.write("position_loss.csv",
            "run,pe,scaling,len,start,end,loss\nrope_s1,rope,none,1.5,0,1,2\n");
    CHECK(error_of() == d.path +
                            "/position_loss.csv: line 2: column 'len': expected a whole "
                            "number, but got '1.5'");
  }
  SECTION("no runs.csv at all") {
    fs::remove(d.path + "/runs.csv");
    CHECK(error_of().find(d.path + "/runs.csv: cannot open") == 0);
  }
}
