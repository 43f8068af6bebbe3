// main.cpp — `poslab <command> [flags]`. Errors become one line on stderr and exit code 1.
// The subcommands live in train/commands.h (prepare, train, eval, generate) and
// train/study/experiments.h (experiments); this file, at the top of the graph, sees both.
#include <cstdio>
#include <cstring>
#include <exception>
#include <string>

#include "train/commands.h"
#include "train/study/experiments.h"

static const char* kUsage =
    "usage: poslab <command> [flags]     (poslab <command> --help for its flags)\n"
    "  prepare      build a character corpus: train.bin, val.bin, vocab.json (SPEC 3)\n"
    "  train        train the GPT with one positional scheme\n"
    "  eval         loss and perplexity at a length, with optional RoPE scaling (SPEC 5)\n"
    "  generate     sample text with a KV cache\n"
    "  experiments  run the whole study and write results/REPORT.md (SPEC 7)\n";

int main(int argc, char** argv) {
  if (argc < 2 || !std::strcmp(argv[1], "--help") || !std::strcmp(argv[1], "-h")) {
    std::fputs(kUsage, argc < 2 ? stderr : stdout);
    return argc < 2 ? 2 : 0;
  }
  std::string cmd = argv[1];
  try {
    if (cmd == "prepare") return poslab::cmd_prepare(argc - 2, argv + 2);
    if (cmd == "train") return poslab::cmd_train(argc - 2, argv + 2);
    if (cmd == "eval") return poslab::cmd_eval(argc - 2, argv + 2);
    if (cmd == "generate") return poslab::cmd_generate(argc - 2, argv + 2);
    if (cmd == "experiments") return poslab::cmd_experiments(argc - 2, argv + 2);
    std::fprintf(
        stderr,
        "poslab: unknown command '%s'; valid: prepare, train, eval, generate, experiments\n",
        cmd.c_str());
    return 2;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "poslab %s: error: %s\n", cmd.c_str(), e.what());
    return 1;
  }
}
