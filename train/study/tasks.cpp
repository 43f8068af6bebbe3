#include "train/study/tasks.h"

#include "data/corpus.h"

namespace poslab {
namespace {

const char* kFiller = "the sky is blue. ";

struct Line {
  std::string text;
  size_t answer_start, answer_len;  // where the answer is, in characters of text
};

Line reverse_line(Generator& g) {
  std::string s;
  for (int i = 0; i < 10; ++i) s.push_back(static_cast<char>('a' + g.next_u64() % 26));
  std::string r(s.rbegin(), s.rend());
  return {s + "=" + r + "\n", s.size() + 1, r.size()};
}

// A line of exactly line_len characters: filler with "k=DDDDD;" at a random depth, then
// "?DDDDD\n" at the end.
Line passkey_line(Generator& g, int64_t line_len) {
  std::string key;
  for (int i = 0; i < 5; ++i) key.push_back(static_cast<char>('0' + g.next_u64() % 10));
  std::string tail = "?" + key + "\n", needle = "k=" + key + ";";
  int64_t filler_len =
      std::max<int64_t>(0, line_len - static_cast<int64_t>(tail.size() + needle.size()));
  std::string filler;
  while (static_cast<int64_t>(filler.size()) < filler_len) filler += kFiller;
  filler.resize(filler_len);
  size_t depth = filler_len ? g.next_u64() % (filler_len + 1) : 0;
  std::string text = filler.substr(0, depth) + needle + filler.substr(depth) + tail;
  return {text, text.size() - 6, 5};
}

Line make_line(const std::string& task, Generator& g, int64_t line_len) {
  if (task == "reverse") return reverse_line(g);
  if (task == "passkey") return passkey_line(g, line_len);
  fail("tasks: unknown task '", task, "'; valid: reverse|passkey");
}

}  // namespace

std::string task_text(const std::string& task, int64_t n_lines, int64_t line_len, uint64_t seed) {
  Generator g(seed);
  std::string s;
  for (int64_t i = 0; i < n_lines; ++i) s += make_line(task, g, line_len).text;
  return s;
}

TaskScore task_accuracy(const GPT& model, const std::vector<std::string>& vocab,
                        const std::string& task, int64_t line_len, int64_t n, uint64_t seed) {
  Generator g(seed);
  NoGrad no_grad;
  int64_t right = 0, chars = 0, chars_right = 0;
  for (int64_t k = 0; k < n; ++k) {
    Line line = make_line(task, g, line_len);
    // the model reads "\n" + line; the token at input position t predicts character t of line
    std::vector<uint16_t> ids = encode(vocab, "\n" + line.text);
    int64_t T = static_cast<int64_t>(ids.size()) - 1;
    Ids x{std::vector<int32_t>(ids.begin(), ids.end() - 1), {1, T}};
    Tensor logits = model.logits(x);  // (1,T,V)
    bool ok = true;
    for (size_t c = line.answer_start; c < line.answer_start + line.answer_len; ++c) {
      std::vector<double> row = logits.slice(1, c, c + 1).to_vector();
      size_t best = 0;
      for (size_t v = 1; v < row.size(); ++v)
        if (row[v] > row[best]) best = v;
      ok = ok && best == ids[c + 1];
      chars_right += best == ids[c + 1];
      ++chars;
    }
    right += ok;
  }
  return {static_cast<double>(right) / n, static_cast<double>(chars_right) / chars};
}

}  // namespace poslab
