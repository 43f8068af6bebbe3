// libFuzzer target: the command-line parser and the option checks of `poslab train`.
// The input is split at NUL bytes into argv.
#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

#include "train/args.h"
#include "train/commands.h"
#include "train/trainer.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::vector<std::string> parts(1);
  for (size_t i = 0; i < size && parts.size() < 64; ++i) {
    if (data[i] == 0)
      parts.emplace_back();
    else
      parts.back().push_back(static_cast<char>(data[i]));
  }
  std::vector<char*> argv;
  for (auto& p : parts) argv.push_back(p.data());
  try {
    std::vector<poslab::FlagSpec> specs{
        {"data", "DIR"},      {"out", "DIR"},     {"pe", "NAME"},   {"steps", "N"},
        {"ctx", "N"},         {"d", "N"},         {"heads", "N"},   {"layers", "N"},
        {"lr", "X"},          {"theta", "X"},     {"max-len", "N"}, {"causal", "B", true},
        {"resume", "", true}, {"force", "", true}};
    poslab::Args a("train", specs, static_cast<int>(argv.size()), argv.data());
    poslab::TrainOptions o = poslab::train_options(a);
    o.data = "d", o.out = "o";
    poslab::validate(o);
  } catch (const std::runtime_error&) {
  }
  return 0;
}
