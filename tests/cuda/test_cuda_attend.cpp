// `poslab attend --device cuda` against the CPU: the same weights in attention.csv.
#include <catch2/catch.hpp>
#include <sstream>

#include "train/attend.h"
#include "data/atomic_file.h"
#include "data/corpus.h"
#include "tests/support/temp_dir.h"
#include "train/trainer.h"

using namespace poslab;

namespace {

int attend(std::vector<std::string> args) {
  std::vector<char*> argv;
  for (std::string& a : args) argv.push_back(a.data());
  return cmd_attend(static_cast<int>(argv.size()), argv.data());
}

std::vector<double> weights(const std::string& csv) {
  std::vector<double> w;
  std::istringstream in(csv);
  std::string line;
  std::getline(in, line);  // header
  while (std::getline(in, line)) w.push_back(std::stod(line.substr(line.rfind(',') + 1)));
  return w;
}

}  // namespace

TEST_CASE("cuda: poslab attend on the GPU writes the CPU's weights", "[cuda]") {
  test::TempDir dir;
  std::string t;
  for (int i = 0; i < 40; ++i) t += "我送君，君送我。春风又绿江南岸。\n";
  write_corpus(build_corpus(t), dir.file("data"));
  for (PeKind pe : {PeKind::rope, PeKind::alibi}) {
    INFO("pe " << pe_name(pe));
    TrainOptions o;
    o.data = dir.file("data");
    o.out = dir.file(std::string("run_") + pe_name(pe));
    o.model.pe.kind = pe;
    o.model.n_embd = 16, o.model.n_layer = 2, o.model.n_head = 2, o.model.block_size = 16;
    o.batch = 4, o.steps = 10, o.eval_every = 10, o.eval_batches = 1, o.quiet = true;
    train(o);
    std::string ckpt = o.out + "/model.safetensors";
    for (const char* device : {"cpu", "cuda"})
      REQUIRE(attend({"--ckpt", ckpt, "--text", "春风又绿江南岸", "--compare", "岸南江绿又风春",
                      "--device", device, "--out", dir.file(device)}) == 0);
    std::vector<double> c = weights(read_file(dir.file("cpu/attention.csv"))),
                        g = weights(read_file(dir.file("cuda/attention.csv")));
    REQUIRE(c.size() == 2 * 2 * 2 * 7 * 7);
    REQUIRE(g.size() == c.size());
    // probabilities from T=7 scores of D=8 dot products in float32: 1e-5 absolute
    for (size_t i = 0; i < c.size(); ++i) REQUIRE(g[i] == Approx(c[i]).margin(1e-5));
  }
}
