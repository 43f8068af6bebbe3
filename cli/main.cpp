// main.cpp — `poslab <command> [flags]`. Errors become one line on stderr and exit code 1.
// The subcommands live in train/commands.h (prepare, train, eval, generate),
// study/experiments.h (experiments), train/attend.h (attend) and
// cli/guide_figures.h (figure); this file, at the top of the graph, sees them all.
#include <cstdio>
#include <cstring>
#include <exception>
#include <string>

#include "cli/guide_figures.h"
#include "study/experiments.h"
#include "train/attend.h"
#include "train/commands.h"

static const char* kUsage =
    "usage: poslab <command> [flags]     (poslab <command> --help for its flags)\n"
    "  prepare      build a character corpus: train.bin, val.bin, vocab.json (docs/formats.md)\n"
    "  train        train the GPT with one positional scheme\n"
    "  eval         loss and perplexity at a length, with optional RoPE scaling "
    "(docs/evaluation.md)\n"
    "  generate     sample text with a KV cache\n"
    "  attend       where a model attends on a text of yours: SVG, CSV and the top keys\n"
    "  figure       the guide's figures: rope-decay, rope-scaling, yarn-ramp, alibi-bias (from\n"
    "               the formulas), ngram (a corpus's n-gram reference losses)\n"
    "  experiments  run the whole study and write results/REPORT.md (docs/cli.md)\n";

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
    if (cmd == "attend") return poslab::cmd_attend(argc - 2, argv + 2);
    if (cmd == "figure") return poslab::cmd_figure(argc - 2, argv + 2);
    if (cmd == "experiments") return poslab::cmd_experiments(argc - 2, argv + 2);
    std::fprintf(stderr,
                 "poslab: unknown command '%s'; valid: prepare, train, eval, generate, attend, "
                 "figure, experiments\n",
                 cmd.c_str());
    return 2;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "poslab %s: error: %s\n", cmd.c_str(), e.what());
    return 1;
  }
}
