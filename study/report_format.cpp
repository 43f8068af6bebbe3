// report_format.cpp — numbers as text and the markdown builder. See report.h and
// report_markdown.h.
#include <algorithm>
#include <cctype>
#include <charconv>
#include <cmath>
#include <filesystem>

#include "study/report.h"
#include "study/report_markdown.h"

namespace poslab::report_detail {

// ---------------------------------------------------------------- numbers as text

std::string fmt(double v, int significant) {
  if (std::isnan(v)) return "n/a";
  if (std::isinf(v)) return v > 0 ? "inf" : "-inf";
  char buf[64];
  const double a = std::abs(v);
  if (a != 0 && (a >= 1e5 || a < 1e-3)) {
    // "3.210e+07" -> mantissa without trailing zeros, exponent without '+' and leading zeros.
    const auto r = std::to_chars(buf, buf + sizeof buf, v, std::chars_format::scientific,
                                 std::max(0, significant - 2));
    std::string t(buf, r.ptr);
    const size_t e = t.find('e');
    std::string mant = t.substr(0, e), exp = t.substr(e + 1);
    if (mant.find('.') != std::string::npos) {
      mant.erase(mant.find_last_not_of('0') + 1);
      if (mant.back() == '.') mant.pop_back();
    }
    const bool neg = exp[0] == '-';
    exp.erase(0, exp.find_first_not_of("+-0"));
    return mant + "e" + (neg ? "-" : "") + exp;
  }
  int decimals = significant - 1;  // for 0
  if (a >= 1000) {
    decimals = 0;  // "1235", "12346": whole numbers, never "1.235e3"
  } else if (a > 0) {
    decimals = std::max(0, significant - 1 - static_cast<int>(std::floor(std::log10(a))));
  }
  const auto r = std::to_chars(buf, buf + sizeof buf, v, std::chars_format::fixed, decimals);
  return std::string(buf, r.ptr);
}

std::string fmt_plain(double v) {
  if (!std::isfinite(v)) return fmt(v);
  char buf[64];
  const auto r = std::to_chars(buf, buf + sizeof buf, v);  // shortest round-trip: "1e+06"
  std::string t(buf, r.ptr);
  const size_t e = t.find('e');
  if (e == std::string::npos) return t;
  std::string exp = t.substr(e + 1);
  const bool neg = exp[0] == '-';
  exp.erase(0, exp.find_first_not_of("+-0"));
  return t.substr(0, e) + "e" + (neg ? "-" : "") + exp;
}

std::string fmt_count(long v) {
  std::string digits = std::to_string(std::labs(v)), out;
  for (size_t i = 0; i < digits.size(); ++i) {
    if (i > 0 && (digits.size() - i) % 3 == 0) out += ',';
    out += digits[i];
  }
  return (v < 0 ? "-" : "") + out;
}

std::string fmt_percent(double v) {
  if (std::isnan(v)) return "n/a";
  char buf[32];
  const auto r = std::to_chars(buf, buf + sizeof buf, 100 * v, std::chars_format::fixed, 1);
  return std::string(buf, r.ptr) + "%";
}

namespace {
// Fixed decimals, so a half-width of 3e-16 (float noise of equal seeds) prints as 0.0000.
std::string fixed_text(double v, int decimals) {
  char buf[64];
  const auto r = std::to_chars(buf, buf + sizeof buf, v, std::chars_format::fixed, decimals);
  return std::string(buf, r.ptr);
}
std::string signed_fixed(double v, int decimals) {
  return (v < 0 ? "-" : "+") + fixed_text(std::abs(v), decimals);
}
// Each seed's value as text, ", " between: the report's form for exactly 2 seeds.
std::string each_value(const PerSeed& v, std::string (*text)(double)) {
  std::string out;
  for (const auto& [seed, x] : v) out += (out.empty() ? "" : ", ") + text(x);
  return out;
}
std::string ppl_text(double loss) {
  return fmt(std::exp(loss));
}
std::string nats_text(double v) {
  return signed_fixed(v, 4);
}
std::string loss_text(double v) {
  return fmt(v);
}
}  // namespace

std::string fmt_signed(double v, int decimals) {
  return std::isnan(v) ? "n/a" : signed_fixed(v, decimals);
}

std::string fmt_ppl(const PerSeed& loss) {
  const Interval v = interval_of(loss);
  if (v.n == 0) return "n/a";
  if (v.n == 1) return fmt(std::exp(v.mean)) + " (1 seed)";
  if (v.n == 2) return each_value(loss, ppl_text);
  const double low = std::exp(v.low());
  return fmt(std::exp(v.mean)) + " (" + (low < 1 ? std::string("1*") : fmt(low)) + "–" +
         fmt(std::exp(v.high())) + ")";
}

std::string fmt_nats(const PerSeed& values) {
  const Interval v = interval_of(values);
  if (v.n == 0) return "n/a";
  if (v.n == 1) return signed_fixed(v.mean, 4) + " (1 seed)";
  if (v.n == 2) return each_value(values, nats_text);
  return signed_fixed(v.mean, 4) + " ± " + fixed_text(v.half, 4);
}

std::string fmt_loss(const PerSeed& values) {
  const Interval v = interval_of(values);
  if (v.n == 0) return "n/a";
  if (v.n == 1) return fmt(v.mean) + " (1 seed)";
  if (v.n == 2) return each_value(values, loss_text);
  return fmt(v.mean) + " ± " + fixed_text(v.half, 3);
}

std::string fmt_accuracy(const TaskRow& t) {
  return fmt_percent(t.accuracy) + " (" + fmt(100 * t.ci_low, 3) + "–" + fmt(100 * t.ci_high, 3) +
         ")";
}

// ---------------------------------------------------------------- markdown

std::string join(const std::vector<std::string>& v, const std::string& sep) {
  std::string out;
  for (const auto& x : v) out += (out.empty() ? "" : sep) + x;
  return out;
}

std::vector<std::string> len_header(const std::vector<long>& lengths, const std::string& first) {
  std::vector<std::string> h = {first};
  for (const long L : lengths) h.push_back("L=" + std::to_string(L));
  return h;
}

std::string duration(double seconds) {
  if (!(seconds >= 60)) return fmt(seconds, 3) + " s";
  const long s = std::lround(seconds), h = s / 3600, m = (s % 3600) / 60;
  return (h ? std::to_string(h) + " h " : "") + std::to_string(m) + " min " +
         std::to_string(s % 60) + " s (" + fmt_count(s) + " s)";
}

void Markdown::heading(const std::string& text, int level) {
  out += std::string(level, '#') + " " + text + "\n\n";
}

namespace {
// A column whose cells all start like a number (or are n/a): right-aligned, digits line up.
bool numeric(const Rows& rows, size_t col) {
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

std::string escape_cell(const std::string& s) {
  std::string t;
  for (const char c : s) t += c == '|' ? std::string("\\|") : std::string(1, c);
  return t;
}
}  // namespace

void Markdown::table(const std::string& caption, const std::vector<std::string>& header,
                     const Rows& rows) {
  out += "**Table " + std::to_string(++tables) + ".** " + caption + "\n\n";
  const auto line = [&](const std::vector<std::string>& cells) {
    out += "|";
    for (const auto& c : cells) out += " " + escape_cell(c) + " |";
    out += "\n";
  };
  line(header);
  out += "|";
  for (size_t i = 0; i < header.size(); ++i) out += numeric(rows, i) ? "---:|" : "---|";
  out += "\n";
  for (const auto& r : rows) line(r);
  out += "\n";
}

void Markdown::figure(const std::string& path, const std::string& alt, const std::string& caption) {
  if (path.empty()) return para("*(Figure " + alt + " not drawn: no data for it.)*");
  out += "![" + alt + "](" + path + ")\n\n*Figure: " + caption + "*\n\n";
}

void Markdown::not_run(const std::string& file, const std::string& what) {
  const bool there = std::filesystem::exists(dir + "/" + file);
  para("**Not run**: `" + file + "` " +
       (there ? "holds no " + what : std::string("is not in the results folder")) +
       (quick ? " (the quick study skips some parts)." : "."));
}

void Markdown::bullets(const std::vector<std::string>& items) {
  for (const auto& b : items) out += "- " + b + "\n";
  out += "\n";
}

}  // namespace poslab::report_detail
