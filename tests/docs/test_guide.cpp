// The guides (docs/guide.zh.md, docs/guide.md) cannot go stale: every file:function reference,
// test name, link, command and number in them is checked against the code, the test programs,
// the demo models and the study's CSVs.
//
// What a guide may contain, and how each is checked:
//   `dir/file.cpp:name`       the file exists and defines name (a function `name(`, or a
//                             `class`/`struct name`); `A::b` needs `A::b(` or both A and b(
//   `dir/file.h`              a source path in backticks: the file exists
//   [text](target#anchor)     target exists (relative to docs/); an anchor into a .md file
//                             matches the GitHub slug of one of its headings
//   ```sh blocks              one command a line, run in a scratch folder holding the demo
//                             and the repository's docs/ (docs/results/models):
//                             `make demo` runs scripts/demo.sh, `make X` needs a target X,
//                             `export PATH=...` is skipped, `poslab ...` and
//                             `build/release/tests/test_x "name"` run exactly as written; each
//                             must exit 0
//   ```text right after       the output of the block's one command: its lines must appear in
//                             order and together in the real output (a line `...` skips any
//                             lines; runs of spaces count as one). Text, Chinese included, must
//                             be equal; every number must be the number printed there, within
//                             the tolerance of numbers_agree; speeds and durations (a number
//                             before `tokens/s`, `s` or `ms`) are not compared. A block that
//                             shows `error:` expects the command to fail. (The guides show no
//                             Catch2 assertion counts: they change as the tests grow; shown,
//                             they would be compared like any integer.)
//   a number in the prose     one with three or more decimals (4.759) or a mantissa and an
//                             exponent (5.96e-8) quotes a command's output: it must equal a
//                             number of a ```text block shown after a one-command ```sh block
//                             (so checked against the output). Worked numbers of a formula go
//                             in a plain ``` block. An arXiv identifier (arXiv:2104.09864) and
//                             a link's target are names, not numbers.
//   <!-- results: F C=V ... AGG -->N   N (right after the marker) is a study figure: the rows of
//                             docs/results/F whose columns C equal V (V may be empty; C~V: the
//                             value matches the regular expression V), reduced
//                             by AGG, one of mean(COL) or exp(mean(COL)), rounded as N is
//                             printed.
#include <algorithm>
#include <catch2/catch.hpp>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <regex>
#include <set>
#include <sstream>
#include <tuple>

#include "tensor/cpu_isa.h"
#include "tests/support/temp_dir.h"

namespace fs = std::filesystem;

namespace {

const std::string kSource = POSLAB_SOURCE_DIR;  // the repository root
const std::string kTests = POSLAB_TESTS_DIR;    // where test_posenc etc. are built
const std::string kPoslab = POSLAB_BIN;
const char* const kGuides[] = {"docs/guide.zh.md", "docs/guide.md"};
// The commands run exactly as a reader runs them: `make demo` trains its 200 steps and `poslab
// train` the steps the guide gives, since the numbers they print (losses, attention weights, the
// greedy poem) are what the guide teaches from, and a shorter run prints other numbers. That is
// affordable: the demo and each guide's five `poslab train` lines train tiny models for 200 steps
// each.
//
// Numbers are compared within a relative tolerance, not exactly: training sums in an order that
// depends on the CPU's vector width, so a loss after 200 steps differs in its last digits between
// CPUs. 0.5% holds those differences and still catches a stale figure (0.31 where the output says
// 0.516, 3e-8 where it says 5.96e-8: factors, not digits).
constexpr double kRelTolerance = 5e-3;

// The guides show what the native build (-march=native, no sanitizers) prints with our kernels
// (AVX2 or AVX-512: the two give the same sums). Another build trains another demo model: the
// generic path (POSLAB_ISA=generic: OpenBLAS, and no FMA contraction in our loops), a build
// without -march=native and the sanitizer build round differently, and 200 steps on a 2-layer
// model turn that into attention weights 10% apart (0.35 for 0.39). `make test-portable` and
// `make sanitize` therefore leave the guides' commands out; run there by hand, the text and the
// integers of each output are checked and the other numbers only where they are
// (POSLAB_GUIDE_BUILD: tests/CMakeLists.txt).
bool guide_build() {
  return POSLAB_GUIDE_BUILD && poslab::kernel::cpu_isa() != poslab::kernel::Isa::generic;
}

std::string read(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  if (!f) throw std::runtime_error("cannot read " + path);
  std::stringstream s;
  s << f.rdbuf();
  return s.str();
}

std::vector<std::string> lines_of(const std::string& text) {
  std::vector<std::string> out;
  std::istringstream in(text);
  for (std::string l; std::getline(in, l);) out.push_back(l);
  return out;
}

struct Block {
  std::string lang;
  std::vector<std::string> lines;
  size_t line_no = 0;     // of the opening fence, 1-based
  bool followed = false;  // the next block comes right after this one (blank lines between)
};

struct Guide {
  std::string path;
  std::vector<std::string> prose;  // lines outside fenced blocks
  std::vector<Block> blocks;
};

Guide parse(const std::string& path) {
  Guide g{path, {}, {}};
  std::vector<std::string> ls = lines_of(read(kSource + "/" + path));
  size_t last_close = 0;
  for (size_t i = 0; i < ls.size(); ++i) {
    if (ls[i].rfind("```", 0) != 0) {
      g.prose.push_back(ls[i]);
      continue;
    }
    Block b{ls[i].substr(3), {}, i + 1, false};
    bool only_blank = last_close > 0;
    for (size_t k = last_close; k < i && only_blank; ++k) only_blank = ls[k].empty();
    if (only_blank && !g.blocks.empty()) g.blocks.back().followed = true;
    for (++i; i < ls.size() && ls[i].rfind("```", 0) != 0; ++i) b.lines.push_back(ls[i]);
    last_close = i + 1;
    g.blocks.push_back(b);
  }
  return g;
}

// Every `...` span of the prose.
std::vector<std::string> code_spans(const Guide& g) {
  std::vector<std::string> out;
  static const std::regex span("`([^`]+)`");
  for (const std::string& l : g.prose)
    for (std::sregex_iterator it(l.begin(), l.end(), span), end; it != end; ++it)
      out.push_back((*it)[1]);
  return out;
}

bool defines(const std::string& text, const std::string& name) {
  const std::regex call("(^|[^A-Za-z0-9_])" + name + "\\(");
  const std::regex type("(class|struct) " + name + "([^A-Za-z0-9_]|$)");
  return std::regex_search(text, call) || std::regex_search(text, type);
}

// The anchor GitHub gives a heading: lower case, punctuation dropped, spaces to hyphens.
std::string slug(std::string heading) {
  std::string s;
  for (unsigned char c : heading) {
    if (std::isalnum(c) || c == '-' || c == '_' || c >= 0x80)
      s += static_cast<char>(std::tolower(c));
    else if (c == ' ')
      s += '-';
  }
  return s;
}

std::set<std::string> anchors_of(const std::string& md_path) {
  std::set<std::string> out;
  bool fenced = false;
  for (const std::string& l : lines_of(read(md_path))) {
    if (l.rfind("```", 0) == 0) fenced = !fenced;
    if (fenced || l.empty() || l[0] != '#') continue;
    size_t start = l.find_first_not_of('#');
    out.insert(slug(l.substr(l.find_first_not_of(' ', start))));
  }
  return out;
}

// Runs a shell command in dir; returns its exit status and output (stdout and stderr).
int run(const std::string& dir, const std::string& command, std::string& output) {
  std::string full = "cd '" + dir + "' && PATH='" + fs::path(kPoslab).parent_path().string() +
                     "':\"$PATH\" OMP_WAIT_POLICY=PASSIVE " + command + " 2>&1";
  FILE* p = popen(full.c_str(), "r");
  if (!p) throw std::runtime_error("popen failed for " + command);
  output.clear();
  char buf[4096];
  for (size_t n; (n = fread(buf, 1, sizeof buf, p)) > 0;) output.append(buf, n);
  int status = pclose(p);
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128;
}

// A number as the guide or the output prints it: its value and the size of its last digit.
struct Number {
  double value = 0;
  double unit = 1;      // 1 for 42, 0.01 for 0.33, 1e-10 for 5.96e-08
  bool integer = true;  // no decimal point and no exponent
};

Number parse_number(const std::string& text) {
  Number n;
  n.value = std::stod(text);
  size_t e = text.find_first_of("eE"), dot = text.find('.');
  int decimals = 0;
  if (dot != std::string::npos)
    decimals = static_cast<int>((e == std::string::npos ? text.size() : e) - dot - 1);
  int exponent = e == std::string::npos ? 0 : std::stoi(text.substr(e + 1));
  n.unit = std::pow(10.0, exponent - decimals);
  n.integer = dot == std::string::npos && e == std::string::npos;
  return n;
}

// Integers (counts, positions, sizes) must be equal; other numbers may differ by one unit of
// their last printed digit (rounding across CPUs) or by kRelTolerance (see above); outside the
// guide's build (exact false, see guide_build) only integers are compared.
bool numbers_agree(const Number& shown, const Number& actual, bool exact) {
  if (shown.integer || actual.integer) return shown.value == actual.value;
  if (!exact) return true;
  double unit = std::max(shown.unit, actual.unit);
  double diff = std::abs(shown.value - actual.value);
  return diff <= unit * (1 + 1e-9) || diff <= kRelTolerance * std::abs(actual.value);
}

const std::regex& number_regex() {
  static const std::regex number("[0-9]+(\\.[0-9]+)?(e[-+]?[0-9]+)?");
  return number;
}

// A line of the guide or the output: its text with every number as '#' and runs of spaces as
// one, and the numbers that were there. A speed or duration (a number before "tokens/s", "s" or
// "ms") becomes '~' and is not kept: it is the machine's, not the code's. Every other number is
// kept, Catch2's count of assertions too: a guide that shows one has it checked (the guides show
// none, since it changes whenever a test grows).
struct Line {
  std::string text;
  std::vector<Number> numbers;
};

Line split_line(const std::string& line) {
  static const std::regex timing("^ ?(tokens/s|s|ms)([^A-Za-z]|$)");
  Line out;
  std::string s;
  size_t pos = 0;
  for (std::sregex_iterator it(line.begin(), line.end(), number_regex()), end; it != end; ++it) {
    s += line.substr(pos, it->position() - pos);
    pos = it->position() + it->length();
    if (std::regex_search(line.substr(pos), timing)) {
      s += '~';
    } else {
      s += '#';
      out.numbers.push_back(parse_number(it->str()));
    }
  }
  s += line.substr(pos);
  for (char c : s)
    if (!(c == ' ' && (out.text.empty() || out.text.back() == ' '))) out.text += c;
  while (!out.text.empty() && out.text.back() == ' ') out.text.pop_back();
  return out;
}

bool lines_agree(const Line& shown, const Line& actual, bool exact = guide_build()) {
  if (shown.text != actual.text || shown.numbers.size() != actual.numbers.size()) return false;
  for (size_t i = 0; i < shown.numbers.size(); ++i)
    if (!numbers_agree(shown.numbers[i], actual.numbers[i], exact)) return false;
  return true;
}

// Does pattern (with "..." lines as gaps) match actual[from..] line by line?
bool match_at(const std::vector<Line>& pat, size_t p, const std::vector<Line>& act, size_t a) {
  if (p == pat.size()) return true;
  if (pat[p].text == "...") {
    for (size_t k = a; k <= act.size(); ++k)
      if (match_at(pat, p + 1, act, k)) return true;
    return false;
  }
  return a < act.size() && lines_agree(pat[p], act[a]) && match_at(pat, p + 1, act, a + 1);
}

bool output_matches(const std::vector<std::string>& expected, const std::string& output) {
  std::vector<Line> pat, act;
  for (const std::string& l : expected)
    if (!split_line(l).text.empty()) pat.push_back(split_line(l));
  for (const std::string& l : lines_of(output))
    if (!split_line(l).text.empty()) act.push_back(split_line(l));
  for (size_t a = 0; a <= act.size(); ++a)
    if (match_at(pat, 0, act, a)) return true;
  return false;
}

// The command a guide line stands for, as run here; "" for a line that only sets up the shell.
std::string command_for(const std::string& line) {
  if (line == "make demo") return "'" + kSource + "/scripts/demo.sh' '" + kPoslab + "'";
  if (line.rfind("export PATH=", 0) == 0) return "";
  const std::string tests = "build/release/tests/";
  if (line.rfind(tests, 0) == 0) return "'" + kTests + "'/" + line.substr(tests.size());
  return line;
}

}  // namespace

TEST_CASE("guide: every file:function reference names a file that defines it", "[docs]") {
  static const std::regex ref("([A-Za-z0-9_/.-]+\\.(h|cpp|cu|cuh|sh)):([A-Za-z_][A-Za-z0-9_:]*)");
  static const std::regex path(
      "(tensor|autograd|posenc|nn|train|study|data|plot|cli|tests|bench|scripts)/"
      "[A-Za-z0-9_/.-]+\\.(h|cpp|cu|cuh|sh)");
  for (const char* file : kGuides) {
    Guide g = parse(file);
    int refs = 0;
    for (const std::string& s : code_spans(g)) {
      std::smatch m;
      if (std::regex_match(s, m, ref)) {
        INFO(file << ": `" << s << "`");
        std::string src = kSource + "/" + m[1].str(), name = m[3].str();
        REQUIRE(fs::exists(src));
        std::string text = read(src);
        size_t q = name.rfind("::");
        if (q == std::string::npos) {
          CHECK(defines(text, name));
        } else {
          bool qualified = text.find(name + "(") != std::string::npos;
          CHECK((qualified ||
                 (defines(text, name.substr(0, q)) && defines(text, name.substr(q + 2)))));
        }
        ++refs;
      } else if (std::regex_match(s, path)) {
        INFO(file << ": `" << s << "`");
        CHECK(fs::exists(kSource + "/" + s));
      }
    }
    INFO(file);
    REQUIRE(refs >= 20);  // the parser found the references (a format change would lose them)
  }
}

TEST_CASE("guide: every test it names exists in its test program", "[docs]") {
  static const std::regex test_line("build/release/tests/(test_[a-z_]+) \"(.+)\"");
  std::map<std::string, std::set<std::string>> listed;
  for (const char* file : kGuides) {
    int named = 0;
    for (const Block& b : parse(file).blocks)
      for (const std::string& l : b.lines) {
        std::smatch m;
        if (!std::regex_match(l, m, test_line)) continue;
        std::string bin = m[1], name = std::regex_replace(m[2].str(), std::regex("\\\\,"), ",");
        if (!listed.count(bin)) {
          std::string out;
          REQUIRE(run(kTests, "./" + bin + " --list-test-names-only", out) >= 0);
          for (const std::string& n : lines_of(out)) listed[bin].insert(n);
        }
        INFO(file << ": " << bin << " \"" << name << "\"");
        CHECK(listed[bin].count(name) == 1);
        ++named;
      }
    INFO(file);
    REQUIRE(named >= 10);
  }
}

TEST_CASE("guide: every link, plot and report anchor exists", "[docs]") {
  static const std::regex link("\\]\\(([^)#]*)(#[^)]*)?\\)");
  for (const char* file : kGuides) {
    Guide g = parse(file);
    for (const std::string& l : g.prose)
      for (std::sregex_iterator it(l.begin(), l.end(), link), end; it != end; ++it) {
        std::string target = (*it)[1], anchor = (*it)[2];
        if (target.rfind("http", 0) == 0) continue;
        std::string resolved = kSource + "/docs/" + (target.empty() ? "guide.md" : target);
        INFO(file << ": link " << target << anchor);
        REQUIRE(fs::exists(resolved));
        if (!anchor.empty() && resolved.size() > 3 && resolved.substr(resolved.size() - 3) == ".md")
          CHECK(anchors_of(resolved).count(anchor.substr(1)) == 1);
      }
  }
}

namespace {

// The study's figures a guide shows: the NAME of every "](results/plots/NAME)", in order.
std::vector<std::string> study_figures(const char* guide) {
  std::vector<std::string> names;
  const std::string md = read(kSource + "/" + guide), at = "](results/plots/";
  for (size_t p = md.find(at); p != std::string::npos; p = md.find(at, p + 1))
    names.push_back(md.substr(p + at.size(), md.find(')', p) - p - at.size()));
  return names;
}

// What an SVG draws: its lines but the <text>, the root's size and the legend box's (a
// legend is as wide as its words).
std::string drawing(const std::string& svg) {
  std::string out;
  for (const std::string& l : lines_of(svg))
    if (l.find("<text") == std::string::npos && l.rfind("<svg ", 0) != 0 &&
        l.find("<rect class=\"legend\"") == std::string::npos)
      out += l + "\n";
  return out;
}

}  // namespace

// The report writes plots/NAME.zh.svg beside NAME.svg for each figure the Chinese guide shows
// (study/report.h: save_bilingual): the same drawing, Chinese words.
TEST_CASE("guide: the study's figures in Chinese in the Chinese guide, in English in the English",
          "[docs]") {
  const std::vector<std::string> zh = study_figures("docs/guide.zh.md"),
                                 en = study_figures("docs/guide.md");
  REQUIRE(zh.size() >= 10);
  REQUIRE(zh.size() == en.size());
  for (size_t k = 0; k < zh.size(); ++k) {
    INFO("docs/guide.zh.md shows results/plots/" << zh[k] << ", docs/guide.md " << en[k]);
    REQUIRE(zh[k].size() > 7);
    REQUIRE(zh[k].substr(zh[k].size() - 7) == ".zh.svg");
    REQUIRE(en[k] == zh[k].substr(0, zh[k].size() - 7) + ".svg");  // its twin, in the same place
    const std::string svg_zh = read(kSource + "/docs/results/plots/" + zh[k]);
    // Chinese words: characters U+4E00..U+9FFF, whose UTF-8 lead bytes are E4..E9
    CHECK(std::any_of(svg_zh.begin(), svg_zh.end(), [](char c) {
      return static_cast<unsigned char>(c) >= 0xE4 && static_cast<unsigned char>(c) <= 0xE9;
    }));
    CHECK(drawing(svg_zh) == drawing(read(kSource + "/docs/results/plots/" + en[k])));
  }
}

namespace {

// The rows of a CSV file of docs/results as column -> value maps (the study writes no quotes).
std::vector<std::map<std::string, std::string>> read_csv(const std::string& path) {
  std::vector<std::map<std::string, std::string>> rows;
  std::vector<std::string> header;
  for (const std::string& l : lines_of(read(path))) {
    std::vector<std::string> cells;
    std::stringstream in(l);
    for (std::string c; std::getline(in, c, ',');) cells.push_back(c);
    if (!l.empty() && l.back() == ',') cells.push_back("");
    if (header.empty()) {
      header = cells;
      continue;
    }
    std::map<std::string, std::string> row;
    for (size_t i = 0; i < header.size() && i < cells.size(); ++i) row[header[i]] = cells[i];
    rows.push_back(row);
  }
  return rows;
}

// The value a `<!-- results: ... -->` marker names (see the top of this file).
double results_value(const std::string& spec) {
  std::istringstream in(spec);
  std::string file, word, agg;
  in >> file;
  struct Filter {
    std::string column, value;
    bool regex;  // C~V: the whole value matches the regular expression V
  };
  std::vector<Filter> filters;
  while (in >> word) {
    size_t op = word.find_first_of("=~");
    if (op == std::string::npos) {
      agg = word;
      break;
    }
    filters.push_back({word.substr(0, op), word.substr(op + 1), word[op] == '~'});
  }
  static const std::regex form("(exp\\()?mean\\(([a-z_0-9]+)\\)\\)?");
  std::smatch m;
  if (!std::regex_match(agg, m, form)) throw std::runtime_error("results: unknown " + agg);
  double sum = 0;
  int n = 0;
  for (const auto& row : read_csv(kSource + "/docs/results/" + file)) {
    bool keep = true;
    for (const Filter& f : filters)
      keep = keep && row.count(f.column) &&
             (f.regex ? std::regex_match(row.at(f.column), std::regex(f.value))
                      : row.at(f.column) == f.value);
    if (!keep) continue;
    sum += std::stod(row.at(m[2].str()));
    ++n;
  }
  if (n == 0) throw std::runtime_error("results: no row of " + file + " matches " + spec);
  return m[1].matched ? std::exp(sum / n) : sum / n;
}

}  // namespace

TEST_CASE("guide: every number the prose quotes is in an output it shows, or in the results",
          "[docs]") {
  static const std::regex quoted(
      "(^|[^0-9.A-Za-z_])([0-9]+\\.[0-9]{3,}|[0-9]+\\.[0-9]+e[-+]?[0-9]+)");
  static const std::regex marker("<!-- results: ([^>]*) -->\\s*([0-9]+(\\.[0-9]+)?)");
  // names that look like numbers: an arXiv identifier, a link's target
  static const std::regex not_a_quote("arXiv:[0-9]+\\.[0-9]+|\\]\\([^)]*\\)");
  for (const char* file : kGuides) {
    Guide g = parse(file);
    std::vector<double> shown;  // every number of the ```text blocks that check_commands checks
    for (size_t k = 1; k < g.blocks.size(); ++k)
      if (g.blocks[k].lang == "text" && g.blocks[k - 1].lang == "sh" && g.blocks[k - 1].followed &&
          g.blocks[k - 1].lines.size() == 1)
        for (const std::string& l : g.blocks[k].lines)
          for (const Number& n : split_line(l).numbers) shown.push_back(n.value);
    int markers = 0;
    for (const std::string& l : g.prose) {
      std::string rest = l;
      for (std::sregex_iterator it(l.begin(), l.end(), marker), end; it != end; ++it) {
        INFO(file << ": " << (*it)[0].str());
        Number n = parse_number((*it)[2].str());
        CHECK(std::abs(results_value((*it)[1].str()) - n.value) <= n.unit / 2 * (1 + 1e-9));
        ++markers;
      }
      rest = std::regex_replace(rest, marker, "");
      rest = std::regex_replace(rest, not_a_quote, "");
      for (std::sregex_iterator it(rest.begin(), rest.end(), quoted), end; it != end; ++it) {
        double v = std::stod((*it)[2].str());
        INFO(file << ": " << (*it)[2].str() << " in: " << l);
        CHECK(std::any_of(shown.begin(), shown.end(),
                          [v](double s) { return std::abs(s - v) <= 1e-12 * std::abs(v); }));
      }
    }
    INFO(file);
    CHECK(markers >= 1);  // the parser found the study's figures (a format change would lose them)
  }
}

TEST_CASE("guide: the number rules (tolerances, speeds, exact integers)", "[docs]") {
  auto agree = [](const std::string& shown, const std::string& actual) {
    return lines_agree(split_line(shown), split_line(actual), true);
  };
  CHECK(agree("loss 5.1117 nats, 17204 tokens/s", "loss 5.1118 nats, 23173 tokens/s"));
  CHECK(agree("ready in 55 s: runs", "ready in 34 s: runs"));
  CHECK_FALSE(agree("All tests passed (10 assertions in 1 test case)",
                    "All tests passed (12 assertions in 1 test case)"));  // a count is checked
  CHECK_FALSE(agree("All tests passed (1 assertion in 1 test case)",
                    "All tests passed (1 assertion in 2 test cases)"));
  CHECK(agree("  送(1) 0.33", "  送(1)   0.34"));
  CHECK_FALSE(agree("  送(1) 0.33", "  君(1) 0.33"));  // text is exact
  CHECK_FALSE(agree("  送(1) 0.33", "  送(2) 0.33"));  // so are integers
  CHECK_FALSE(agree("= 3e-08", "= 5.96e-08"));         // a stale float rounding
  CHECK_FALSE(agree("= 2.98e-08", "= 5.96e-08"));
  CHECK_FALSE(agree("= 0.31", "= 0.516"));  // a stale weight
  CHECK_FALSE(agree("val loss 6.1053", "val loss 6.2053"));
  CHECK(agree("val loss 6.1053", "val loss 6.1071"));  // another CPU's last digits
  // another build's demo model: its weights, not its text or its counts
  CHECK(lines_agree(split_line("  送(1) 0.39"), split_line("  送(1) 0.35"), false));
  CHECK_FALSE(lines_agree(split_line("  送(1) 0.39"), split_line("  送(2) 0.39"), false));
  CHECK_FALSE(lines_agree(split_line("  送(1) 0.39"), split_line("  君(1) 0.39"), false));
}

namespace {

// One command of a guide: a line of a ```sh block, with the ```text block shown right after
// that block (if any): an `error:` in it means the command must fail, and for a block of one
// command its lines are the output the command must print.
struct Command {
  std::string line;
  size_t block_line = 0;  // the line of its ```sh block in the guide
  std::vector<std::string> shown;
  bool compare = false;  // the shown lines are this command's output
};

std::vector<Command> commands_of(const std::string& file) {
  Guide g = parse(file);
  std::vector<Command> out;
  for (size_t k = 0; k < g.blocks.size(); ++k) {
    const Block& b = g.blocks[k];
    if (b.lang != "sh") continue;
    const bool shown = b.followed && k + 1 < g.blocks.size() && g.blocks[k + 1].lang == "text";
    for (const std::string& line : b.lines) {
      if (line.empty() || line[0] == '#') continue;
      out.push_back({line, b.line_no, shown ? g.blocks[k + 1].lines : std::vector<std::string>{},
                     shown && b.lines.size() == 1});
    }
  }
  return out;
}

// One command's result against what one guide shows for it.
void check_result(const std::string& file, const Command& c, int status, const std::string& out) {
  INFO(file << ":" << c.block_line << ": " << c.line);
  INFO("output:\n" << out);
  bool fails = std::any_of(c.shown.begin(), c.shown.end(), [](const std::string& l) {
    return l.find("error:") != std::string::npos;
  });
  CHECK((fails ? status != 0 : status == 0));
  if (c.compare) CHECK(output_matches(c.shown, out));
}

// Runs the commands of guides that give the same commands in the same order, once, in a scratch
// folder of its own, from a fresh clone's view (no data, no runs: the guide's own `make demo`
// makes them), as a reader of either guide would; each command's result is checked against
// what every one of these guides shows. The reader runs them at the root of the clone, so the
// scratch folder has the clone's docs/ (a link): the exercises evaluate the study's models in
// docs/results/models. A guide that repeats a `poslab train` line (to show its output beside
// the next step) gets the output of its first run: the same command on the same data with
// --force trains the same model and prints the same digits (test_train checks that a run is
// reproduced byte for byte), so running it again would only cost its minutes.
void check_commands(const std::vector<std::string>& files) {
  std::vector<std::vector<Command>> lists;
  for (const std::string& f : files) lists.push_back(commands_of(f));
  poslab::test::TempDir dir;
  fs::create_directory_symlink(kSource + "/docs", dir.file("docs"));
  std::map<std::string, std::pair<int, std::string>> trained;  // train line -> status, output
  for (size_t k = 0; k < lists[0].size(); ++k) {
    const std::string& line = lists[0][k].line;
    if (line.rfind("make ", 0) == 0 && line != "make demo") {
      INFO(files[0] << ":" << lists[0][k].block_line << ": " << line);
      CHECK(read(kSource + "/Makefile").find("\n" + line.substr(5) + ":") != std::string::npos);
      continue;
    }
    std::string cmd = command_for(line), out;
    if (cmd.empty()) continue;
    const bool train =
        line.rfind("poslab train ", 0) == 0 && line.find(" --force") != std::string::npos;
    int status = 0;
    if (train && trained.count(line)) {
      std::tie(status, out) = trained[line];
    } else {
      status = run(dir.path(), cmd, out);
      if (train) trained[line] = {status, out};
    }
    for (size_t i = 0; i < files.size(); ++i) check_result(files[i], lists[i][k], status, out);
  }
}

}  // namespace

// The English guide gives the Chinese guide's commands, in the same order, and a command run
// after the same commands prints the same output: the two readers' folders are the same. So the
// commands run once and each output is checked against both guides (half the time of running
// each guide's commands: the training runs are most of this test). Guides whose commands
// differ run each in a folder of its own.
TEST_CASE("guides: every command runs on the demo models and prints what each guide shows",
          "[docs][slow][guides]") {
  std::vector<std::vector<std::string>> groups;  // guides with the same commands
  std::vector<std::vector<std::string>> lines;   // each group's commands
  for (const char* file : kGuides) {
    std::vector<std::string> these;
    for (const Command& c : commands_of(file)) these.push_back(c.line);
    auto same = std::find(lines.begin(), lines.end(), these);
    if (same == lines.end()) {
      groups.push_back({file});
      lines.push_back(these);
    } else {
      groups[same - lines.begin()].push_back(file);
    }
  }
  for (const auto& group : groups) check_commands(group);
}
