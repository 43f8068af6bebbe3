// args.h — the command-line parser: `--name value` pairs and boolean `--flag`s, checked
// against the list each subcommand declares. Every error names the flag and what is valid.
#pragma once
#include <map>
#include <string>
#include <vector>

namespace poslab {

struct FlagSpec {
  std::string name;  // without the dashes
  std::string help;  // "N  training steps (default 2000)"
  bool boolean = false;
};

class Args {
 public:
  // argv after the subcommand. Throws on an unknown flag (listing the valid ones), a
  // missing value, or a repeated flag.
  Args(const std::string& command, const std::vector<FlagSpec>& specs, int argc, char** argv);
  bool has(const std::string& name) const { return values_.count(name) > 0; }
  std::string str(const std::string& name, const std::string& def) const;
  int64_t integer(const std::string& name, int64_t def, int64_t lo, int64_t hi) const;
  double number(const std::string& name, double def, double lo, double hi) const;
  bool boolean(const std::string& name, bool def) const;  // --x, or --x true|false
  std::string choice(const std::string& name, const std::string& def,
                     const std::vector<std::string>& valid) const;
  bool help() const { return help_; }
  std::string usage() const;

 private:
  std::string command_;
  std::vector<FlagSpec> specs_;
  std::map<std::string, std::string> values_;
  bool help_ = false;
};

}  // namespace poslab
