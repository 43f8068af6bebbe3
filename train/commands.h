// commands.h — the subcommands of `poslab` that the trainer owns. Each takes the arguments
// after its name and returns the process exit code; errors are thrown and reported by the
// program's main(), which sits above every library and adds the other subcommands.
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

}  // namespace poslab
