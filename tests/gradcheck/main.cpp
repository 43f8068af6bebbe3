// `make gradcheck`: every gradient check of poslab, then one table per encoding (and one for
// the ops) — check, input or parameter, elements compared, the largest absolute and relative
// error, the tolerance, pass or fail. Exits non-zero when any check fails.
//
// The checks are the [gradcheck] test cases of tests/{autograd,posenc,nn} (the same ones
// `make test` runs in each layer's binary); each gradcheck() call records its result
// (tests/support/gradcheck.h), and the op's name, "<table>: <what>", says which table it goes
// in. A new encoding adds rows by adding one check named "<encoding>: ...".
// Arguments are Catch2's (e.g. `gradcheck "[posenc]"`); without any, every [gradcheck] case.
#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <string>
#include <vector>

#include "posenc/factory.h"
#include "tests/support/catch_session.h"
#include "tests/support/gradcheck.h"

using poslab::testing::GradcheckResult;

namespace {

struct Row {
  std::string check, input, elements, abs, rel, tol, result;
};

std::string table_of(const std::string& op) {
  size_t colon = op.find(": ");
  return colon == std::string::npos ? "other" : op.substr(0, colon);
}

std::string sci(double x) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.1e", x);
  return buf;
}

std::vector<Row> rows_of(const GradcheckResult& r) {
  std::string check = r.op.substr(std::min(r.op.size(), table_of(r.op).size() + 2));
  if (r.inputs.empty())  // refused before comparing anything: the reason is the row
    return {{check, "-", "0", "-", "-", "-", "FAIL (" + r.message + ")"}};
  std::vector<Row> rows;
  std::string tol = sci(r.atol) + " + " + sci(r.rtol) + "|n|";
  for (const auto& in : r.inputs)
    rows.push_back({rows.empty() ? check : "", in.name, std::to_string(in.checked), sci(in.max_abs),
                    sci(in.max_rel), tol, in.ok ? "pass" : "FAIL"});
  return rows;
}

void print_table(const std::string& name, const std::vector<Row>& rows) {
  std::vector<Row> all{{"check", "input or parameter", "elements", "max abs err", "max rel err",
                        "tolerance |a-n| <=", "result"}};
  all.insert(all.end(), rows.begin(), rows.end());
  size_t w[7] = {};
  for (const Row& r : all) {
    const std::string* c[7] = {&r.check, &r.input, &r.elements, &r.abs, &r.rel, &r.tol, &r.result};
    for (int i = 0; i < 7; ++i) w[i] = std::max(w[i], c[i]->size());
  }
  std::printf("\n%s\n", name.c_str());
  for (const Row& r : all) {
    const std::string* c[7] = {&r.check, &r.input, &r.elements, &r.abs, &r.rel, &r.tol, &r.result};
    for (int i = 0; i < 6; ++i)
      std::printf(i == 2 || i == 3 || i == 4 ? "%*s  " : "%-*s  ", static_cast<int>(w[i]),
                  c[i]->c_str());
    std::printf("%s\n", r.result.c_str());
  }
}

// Tables in the order of the encodings' names (poslab's --pe list), then the others ("ops",
// and any table a new check opens) in the order they first appear.
std::vector<std::string> table_order(const std::vector<GradcheckResult>& log) {
  std::vector<std::string> order;
  auto add = [&](const std::string& t) {
    if (std::find(order.begin(), order.end(), t) == order.end()) order.push_back(t);
  };
  for (const std::string& pe : poslab::pe_names())
    for (const auto& r : log)
      if (table_of(r.op) == pe) add(pe);
  for (const auto& r : log) add(table_of(r.op));
  return order;
}

}  // namespace

int main(int argc, char** argv) {
  std::vector<const char*> args(argv, argv + argc);
  if (argc == 1) args.push_back("[gradcheck]");
  int failed = poslab::test::run_catch_session(static_cast<int>(args.size()),
                                               const_cast<char**>(args.data()));
  const auto& log = poslab::testing::gradcheck_log();
  int checks = 0, bad = 0;
  int64_t elements = 0;
  for (const std::string& t : table_order(log)) {
    std::vector<Row> rows;
    for (const auto& r : log)
      if (table_of(r.op) == t) {
        auto more = rows_of(r);
        rows.insert(rows.end(), more.begin(), more.end());
        ++checks, bad += !r.ok;
        for (const auto& in : r.inputs) elements += in.checked;
      }
    print_table(t, rows);
  }
  std::printf("\n%d gradient checks, %lld elements compared with central differences: %s\n", checks,
              static_cast<long long>(elements),
              bad ? (std::to_string(bad) + " FAILED").c_str() : "all pass");
  return failed || bad ? 1 : 0;
}
