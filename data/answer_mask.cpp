#include "data/answer_mask.h"

#include "data/atomic_file.h"
#include "data/error.h"

namespace poslab {

namespace {

// Checks one example, marks [start, start + E): its start mark, no other start, a valid
// value everywhere, at least one answer token.
void check_example(const std::string& path, const std::vector<uint8_t>& m, size_t start, size_t E) {
  size_t answers = 0;
  for (size_t i = start; i < start + E; ++i) {
    if (m[i] > mark_example_start)
      data_error(path, ": byte ", i, ": expected a mark 0, 1 or 2, but got ", int(m[i]));
    if ((i == start) != (m[i] == mark_example_start))
      data_error(path, ": byte ", i, ": expected a 2 exactly where an example starts (every ", E,
                 " bytes, the distance between the first two 2s), but got ", int(m[i]));
    answers += m[i] == mark_answer;
  }
  if (answers == 0)
    data_error(path, ": the example at byte ", start, " holds no answer token (mark 1)");
}

}  // namespace

AnswerMask load_answer_mask(const std::string& path, size_t n_tokens) {
  const std::string bytes = read_file(path);
  if (bytes.size() != n_tokens)
    data_error(path, ": expected one byte per token of its split (", n_tokens, " bytes), but got ",
               bytes.size(), " bytes");
  AnswerMask a;
  a.marks.assign(bytes.begin(), bytes.end());
  if (a.marks.empty()) data_error(path, ": expected at least one example, but the file is empty");
  if (a.marks[0] != mark_example_start)
    data_error(path, ": byte 0: expected 2 (the first token of an example), but got ",
               int(a.marks[0]));
  size_t E = 1;
  while (E < a.marks.size() && a.marks[E] != mark_example_start) ++E;
  if (a.marks.size() % E != 0)
    data_error(path, ": ", a.marks.size(), " tokens are not a whole number of examples of ", E,
               " tokens (the distance between the first two 2s)");
  for (size_t start = 0; start < a.marks.size(); start += E) check_example(path, a.marks, start, E);
  a.example_len = static_cast<int64_t>(E);
  return a;
}

void write_answer_mask(const std::string& path, const std::vector<uint8_t>& marks) {
  for (size_t i = 0; i < marks.size(); ++i)
    if (marks[i] > mark_example_start)
      data_error("write_answer_mask: ", path, ": entry ", i, " is ", int(marks[i]),
                 ", but marks are 0, 1 or 2");
  write_file_atomic(path, std::string(marks.begin(), marks.end()));
}

}  // namespace poslab
