// standins.h — STAND-INS (plan branch, issue #15) for two pieces the evaluation branch of the
// study v2 brings. Delete this file at the merge: include train/study/ngram.h instead and read
// the members directly (collect.cpp is the one user).
//   ngram_rows(corpus, data_dir)   train/study/ngram.h; until it exists: one row per n = 1..5
//                                  with NaN k and loss (empty cells in ngram.csv)
//   sliding_loss_of(x)             EvalResult::sliding_loss / EvalBucket::sliding_loss
//                                  (train/eval.h) once they exist; NaN until then
#pragma once
#include <cmath>
#include <string>
#include <vector>

#include "train/study/tables.h"

#if __has_include("train/study/ngram.h")
#include "train/study/ngram.h"
#else
namespace poslab {
inline std::vector<NgramRow> ngram_rows(const std::string& corpus_name, const std::string&) {
  std::vector<NgramRow> rows;
  for (long n = 1; n <= 5; ++n) rows.push_back({corpus_name, n, NAN, NAN});
  return rows;
}
}  // namespace poslab
#endif

namespace poslab {
template <class T>
double sliding_loss_of(const T& x) {
  if constexpr (requires { x.sliding_loss; })
    return x.sliding_loss;
  else
    return NAN;
}
}  // namespace poslab
