// The guides (docs/guide.zh.md, docs/guide.md) cannot go stale: every file:function reference,
// test name, link and command in them is checked against the code, the test programs and the
// demo models.
//
// What a guide may contain, and how each is checked:
//   `dir/file.cpp:name`       the file exists and defines name (a function `name(`, or a
//                             `class`/`struct name`); `A::b` needs `A::b(` or both A and b(
//   `dir/file.h`              a source path in backticks: the file exists
//   [text](target#anchor)     target exists (relative to docs/); an anchor into a .md file
//                             matches the GitHub slug of one of its headings
//   ```sh blocks              one command a line, run in a scratch folder holding the demo:
//                             `make demo` runs scripts/demo.sh (fewer steps), `make X` needs a
//                             target X, `export PATH=...` is skipped, `poslab ...` and
//                             `build/release/tests/test_x "name"` run (poslab with --steps cut
//                             to keep the test short); each must exit 0
//   ```text right after       the output of the block's one command: with numbers and non-ASCII
//                             characters as wildcards, its lines must appear in order and
//                             together in the real output; a line `...` skips any lines. A block
//                             that shows `error:` expects the command to fail.
#include <algorithm>
#include <catch2/catch.hpp>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <regex>
#include <set>
#include <sstream>

#include "tests/support/temp_dir.h"

namespace fs = std::filesystem;

namespace {

const std::string kSource = POSLAB_SOURCE_DIR;  // the repository root
const std::string kTests = POSLAB_TESTS_DIR;    // where test_posenc etc. are built
const std::string kPoslab = POSLAB_BIN;
const char* const kGuides[] = {"docs/guide.zh.md", "docs/guide.md"};
constexpr int kDemoSteps = 60, kTrainSteps = 40;  // enough for the outputs' shape, and quick

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

// Numbers become '#', every non-ASCII character '?', runs of spaces one space.
std::string mask(const std::string& line) {
  static const std::regex number("[0-9]+(\\.[0-9]+)?(e[-+]?[0-9]+)?");
  std::string s = std::regex_replace(line, number, "#"), out;
  for (size_t i = 0; i < s.size(); ++i) {
    unsigned char c = static_cast<unsigned char>(s[i]);
    if (c >= 0x80) {
      while (i + 1 < s.size() && (static_cast<unsigned char>(s[i + 1]) & 0xC0) == 0x80) ++i;
      out += '?';
    } else if (c == ' ' && !out.empty() && out.back() == ' ') {
      continue;
    } else {
      out += static_cast<char>(c);
    }
  }
  while (!out.empty() && out.back() == ' ') out.pop_back();
  return out;
}

// Does pattern (with "..." lines as gaps) match actual[from..] line by line?
bool match_at(const std::vector<std::string>& pat, size_t p, const std::vector<std::string>& act,
              size_t a) {
  if (p == pat.size()) return true;
  if (pat[p] == "...") {
    for (size_t k = a; k <= act.size(); ++k)
      if (match_at(pat, p + 1, act, k)) return true;
    return false;
  }
  return a < act.size() && pat[p] == act[a] && match_at(pat, p + 1, act, a + 1);
}

bool output_matches(const std::vector<std::string>& expected, const std::string& output) {
  std::vector<std::string> pat, act;
  for (const std::string& l : expected)
    if (!l.empty()) pat.push_back(mask(l));
  for (const std::string& l : lines_of(output))
    if (!mask(l).empty()) act.push_back(mask(l));
  for (size_t a = 0; a <= act.size(); ++a)
    if (match_at(pat, 0, act, a)) return true;
  return false;
}

// The command a guide line stands for, as run here; "" for a line that only sets up the shell.
std::string command_for(const std::string& line) {
  static const std::regex steps("--steps [0-9]+");
  if (line == "make demo")
    return "'" + kSource + "/scripts/demo.sh' '" + kPoslab + "' " + std::to_string(kDemoSteps);
  if (line.rfind("export PATH=", 0) == 0) return "";
  const std::string tests = "build/release/tests/";
  if (line.rfind(tests, 0) == 0) return "'" + kTests + "'/" + line.substr(tests.size());
  if (line.rfind("poslab ", 0) == 0)
    return std::regex_replace(line, steps, "--steps " + std::to_string(kTrainSteps));
  return line;
}

}  // namespace

TEST_CASE("guide: every file:function reference names a file that defines it", "[docs]") {
  static const std::regex ref("([A-Za-z0-9_/.-]+\\.(h|cpp|cu|cuh|sh)):([A-Za-z_][A-Za-z0-9_:]*)");
  static const std::regex path(
      "(tensor|autograd|posenc|nn|train|data|tests|bench|scripts)/"
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

// Runs every command of one guide in a scratch folder of its own, from a fresh clone's view
// (no data, no runs: the guide's own `make demo` makes them), as a reader of that guide alone
// would. One test case per guide, so that CTest runs the two at once (tests/CMakeLists.txt).
void check_commands(const char* file) {
  poslab::test::TempDir dir;
  Guide g = parse(file);
  for (size_t k = 0; k < g.blocks.size(); ++k) {
    const Block& b = g.blocks[k];
    if (b.lang != "sh") continue;
    const bool shown = b.followed && k + 1 < g.blocks.size() && g.blocks[k + 1].lang == "text";
    for (const std::string& line : b.lines) {
      if (line.empty() || line[0] == '#') continue;
      INFO(file << ":" << b.line_no << ": " << line);
      if (line.rfind("make ", 0) == 0 && line != "make demo") {
        CHECK(read(kSource + "/Makefile").find("\n" + line.substr(5) + ":") != std::string::npos);
        continue;
      }
      std::string cmd = command_for(line), out;
      if (cmd.empty()) continue;
      int status = run(dir.path(), cmd, out);
      INFO("output:\n" << out);
      const std::vector<std::string> none;
      const std::vector<std::string>& shown_lines = shown ? g.blocks[k + 1].lines : none;
      bool fails = std::any_of(shown_lines.begin(), shown_lines.end(), [](const std::string& l) {
        return l.find("error:") != std::string::npos;
      });
      CHECK((fails ? status != 0 : status == 0));
      if (shown && b.lines.size() == 1) CHECK(output_matches(shown_lines, out));
    }
  }
}

}  // namespace

TEST_CASE("guide (Chinese): every command runs on the demo models and prints what it shows",
          "[docs][slow][zh]") {
  check_commands("docs/guide.zh.md");
}

TEST_CASE("guide (English): every command runs on the demo models and prints what it shows",
          "[docs][slow][en]") {
  check_commands("docs/guide.md");
}
