// report_markdown.h — the markdown builder the report's sections write into. Internal to the
// report_*.cpp files.
#pragma once
#include <string>
#include <vector>

namespace poslab::report_detail {

using Rows = std::vector<std::vector<std::string>>;

// A markdown document under construction; tables are numbered as they are added.
struct Markdown {
  std::string out;
  int tables = 0;
  bool quick = false;
  std::string dir;  // the results folder

  void para(const std::string& text) { out += text + "\n\n"; }
  void heading(const std::string& text, int level = 2);
  // The caption goes above the table: what was measured and how. Numeric columns (every cell
  // a number or n/a) are right-aligned.
  void table(const std::string& caption, const std::vector<std::string>& header, const Rows& rows);
  // A figure: `alt` is its short name, the caption says what it shows and how to read it.
  void figure(const std::string& path, const std::string& alt, const std::string& caption);
  // A section without data: its file is missing, or holds none of `what`.
  void not_run(const std::string& file, const std::string& what = "rows");
  void bullets(const std::vector<std::string>& items);
};

std::string join(const std::vector<std::string>& v, const std::string& sep = ", ");
// "L=256", ... one header cell per length after `first`.
std::vector<std::string> len_header(const std::vector<long>& lengths, const std::string& first);
// "12 s", "3 min 4 s (184 s)", "1 h 2 min 5 s (3,725 s)".
std::string duration(double seconds);

}  // namespace poslab::report_detail
