// commands.h — the subcommands of `poslab` (SPEC 6). Each takes the arguments after its
// name and returns the process exit code; errors are thrown and reported by main().
#pragma once
#include "tensor/dtype.h"

namespace poslab {

class Args;
struct TrainOptions;
TrainOptions train_options(const Args& a);  // the flags of `poslab train`, checked
// --device cpu|cuda; cuda without a usable GPU (or without the backend) is an error saying why.
Device device_option(const Args& a);

int cmd_prepare(int argc, char** argv);
int cmd_train(int argc, char** argv);
int cmd_eval(int argc, char** argv);
int cmd_generate(int argc, char** argv);
int cmd_experiments(int argc, char** argv);  // experiments.cpp
int cmd_attend(int argc, char** argv);       // attend.cpp

}  // namespace poslab
