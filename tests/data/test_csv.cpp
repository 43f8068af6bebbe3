// data/csv.h: the one CSV reader and writer (log.csv, the study's tables, the report).
#include "data/csv.h"

#include <catch2/catch.hpp>

#include <cmath>

#include "data/atomic_file.h"
#include "tests/support/temp_dir.h"

using namespace poslab;
using Catch::Contains;

TEST_CASE("read_csv reads numbers as printf and C++ write them", "[csv]") {
  test::TempDir d;
  write_file_atomic(d.file("x.csv"),
                    "a,b,c\r\n1e+06,-nan,inf\r\n\n 2.5 ,,7\n");  // CRLF, blank, spaces
  const CsvTable c = read_csv(d.file("x.csv"), {"a", "c"});
  REQUIRE(c.rows.size() == 2);
  CHECK(c.number(0, "a") == 1e6);
  CHECK(std::isnan(c.number(0, "b")));
  CHECK(std::isinf(c.number(0, "c")));
  CHECK(c.number(1, "a") == 2.5);
  CHECK(std::isnan(c.number(1, "b")));  // an empty field is a missing number
  CHECK(c.integer(1, "c") == 7);
  CHECK(c.lines == std::vector<int>{2, 4});
  CHECK(c.has("b"));
  CHECK_FALSE(c.has("d"));
}

TEST_CASE("CsvWriter writes what read_csv reads back, by column name", "[csv]") {
  test::TempDir d;
  CsvWriter w({"run", "loss", "note"});
  w.row({"rope_s1", csv_number(2.5358612), ""});
  w.row({"none_s1", csv_number(NAN), "x"});
  CHECK(w.text() == "run,loss,note\nrope_s1,2.53586,\nnone_s1,,x\n");
  w.write(d.file("t.csv"));
  const CsvTable c = read_csv(d.file("t.csv"), {"loss", "run"});
  CHECK(c.text(0, "run") == "rope_s1");
  CHECK(c.number(0, "loss") == 2.53586);
  CHECK(std::isnan(c.number(1, "loss")));
  CHECK(c.text(0, "note").empty());
  REQUIRE_THROWS_WITH(w.row({"a", "b"}),
                      Contains("expected 3 cells, one per column (run,loss,note), but got 2"));
}

TEST_CASE("csv_number is printf's %.6g", "[csv]") {
  CHECK(csv_number(2.535861) == "2.53586");
  CHECK(csv_number(0.002) == "0.002");
  CHECK(csv_number(10000) == "10000");
  CHECK(csv_number(1e6) == "1e+06");
  CHECK(csv_number(5864) == "5864");
  CHECK(csv_number(NAN) == "");
}
