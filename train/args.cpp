#include "train/args.h"

#include <cerrno>
#include <cmath>
#include <cstdlib>

#include "tensor/check.h"

namespace poslab {

Args::Args(const std::string& command, const std::vector<FlagSpec>& specs, int argc, char** argv)
    : command_(command), specs_(specs) {
  for (int i = 0; i < argc; ++i) {
    std::string a = argv[i];
    if (a == "--help" || a == "-h") {
      help_ = true;
      continue;
    }
    if (a.rfind("--", 0) != 0 || a.size() == 2)
      fail("poslab ", command, ": unexpected argument '", a,
           "'; flags look like --name value (see --help)");
    std::string name = a.substr(2), value;
    auto eq = name.find('=');
    bool inline_value = eq != std::string::npos;
    if (inline_value) value = name.substr(eq + 1), name = name.substr(0, eq);
    const FlagSpec* spec = nullptr;
    for (const auto& s : specs_)
      if (s.name == name) spec = &s;
    if (!spec) {
      std::string valid;
      for (const auto& s : specs_) valid += " --" + s.name;
      fail("poslab ", command, ": unknown flag --", name, "; valid flags:", valid);
    }
    if (values_.count(name)) fail("poslab ", command, ": --", name, " given twice");
    if (!inline_value) {
      bool next_is_value = i + 1 < argc && std::string(argv[i + 1]).rfind("--", 0) != 0;
      if (spec->boolean && !(next_is_value && (std::string(argv[i + 1]) == "true" ||
                                               std::string(argv[i + 1]) == "false")))
        value = "true";
      else if (!next_is_value)
        fail("poslab ", command, ": --", name, " needs a value (", spec->help, ")");
      else
        value = argv[++i];
    }
    values_[name] = value;
  }
}

std::string Args::str(const std::string& name, const std::string& def) const {
  auto it = values_.find(name);
  return it == values_.end() ? def : it->second;
}

int64_t Args::integer(const std::string& name, int64_t def, int64_t lo, int64_t hi) const {
  auto it = values_.find(name);
  if (it == values_.end()) return def;
  const std::string& s = it->second;
  errno = 0;
  char* end = nullptr;
  long long v = std::strtoll(s.c_str(), &end, 10);
  if (s.empty() || *end != '\0' || errno == ERANGE || v < lo || v > hi)
    fail("--", name, ": expected an integer in [", lo, ", ", hi, "], but got '", s, "'");
  return v;
}

double Args::number(const std::string& name, double def, double lo, double hi) const {
  auto it = values_.find(name);
  if (it == values_.end()) return def;
  const std::string& s = it->second;
  char* end = nullptr;
  double v = std::strtod(s.c_str(), &end);
  if (s.empty() || *end != '\0' || !std::isfinite(v) || v < lo || v > hi)
    fail("--", name, ": expected a number in [", lo, ", ", hi, "], but got '", s, "'");
  return v;
}

bool Args::boolean(const std::string& name, bool def) const {
  auto it = values_.find(name);
  if (it == values_.end()) return def;
  if (it->second == "true") return true;
  if (it->second == "false") return false;
  fail("--", name, ": expected true or false, but got '", it->second, "'");
}

std::string Args::choice(const std::string& name, const std::string& def,
                         const std::vector<std::string>& valid) const {
  return valid[name_index(valid, str(name, def), "--" + name)];
}

std::string Args::usage() const {
  std::string s = "usage: poslab " + command_ + " [flags]\n";
  for (const auto& f : specs_) s += "  --" + f.name + (f.boolean ? "" : " ") + "  " + f.help + "\n";
  return s;
}

}  // namespace poslab
