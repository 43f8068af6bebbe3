#include "tensor/check.h"
#include "train/commands.h"
namespace poslab {
int cmd_experiments(int, char**) {
  fail("experiments: not built yet");
}
}  // namespace poslab
