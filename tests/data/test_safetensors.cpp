// test_safetensors.cpp — round trips, the exact bytes of a tiny file, and every way a
// hostile or damaged file is refused.
#include <catch2/catch.hpp>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <limits>

#include "data/atomic_file.h"
#include "data/safetensors.h"
#include "tests/support/temp_dir.h"

using namespace poslab;
using Catch::Contains;

namespace {

// A file made by hand: the 8-byte little-endian length, the header, then the data.
std::string make_file(const std::string& header, const std::string& data) {
  std::string out;
  for (int k = 0; k < 8; ++k) out += static_cast<char>((header.size() >> (8 * k)) & 0xFF);
  return out + header + data;
}

StFile parse(const std::string& header, size_t data_bytes) {
  return parse_safetensors(make_file(header, std::string(data_bytes, '\0')), "m.st");
}

// One tensor entry for a hand-made header.
std::string entry(const std::string& name, const std::string& shape, uint64_t begin, uint64_t end,
                  const std::string& dtype = "F32") {
  std::string e = "\"";
  e += name;
  e += "\":{\"dtype\":\"" + dtype + "\",\"shape\":" + shape;
  e += ",\"data_offsets\":[" + std::to_string(begin) + "," + std::to_string(end) + "]}";
  return e;
}

// N, the header length, from the first 8 bytes of a file.
size_t header_length(const std::string& bytes) {
  size_t n = 0;
  for (int k = 7; k >= 0; --k) n = (n << 8) | static_cast<unsigned char>(bytes.at(k));
  return n;
}

uint32_t bits_of(float x) {
  uint32_t b;
  std::memcpy(&b, &x, 4);
  return b;
}

}  // namespace

TEST_CASE("safetensors: the exact bytes of a one-tensor file", "[data][safetensors]") {
  const std::string bytes = serialize_safetensors({{"a", "F32", {1}, {1.0f}}}, {});
  const std::string header = R"({"a":{"dtype":"F32","shape":[1],"data_offsets":[0,4]}})";
  REQUIRE(header.size() == 54);  // padded with two spaces to 56, a multiple of 8
  std::string expected = std::string("\x38\0\0\0\0\0\0\0", 8) + header + "  ";
  expected += std::string("\x00\x00\x80\x3F", 4);  // 1.0f little-endian
  CHECK(bytes == expected);
}

TEST_CASE("safetensors: save and load round-trip everything", "[data][safetensors]") {
  test::TempDir tmp;
  const float inf = std::numeric_limits<float>::infinity();
  const std::vector<StTensor> tensors = {
      {"transformer.wte.weight", "F32", {2, 3}, {1, -2, 3.5f, 1e-30f, -0.0f, inf}},
      {"transformer.ln_f.bias", "F32", {4}, {0.1f, 0.2f, 0.3f, std::nanf("")}},
      {"scalar", "F32", {}, {42}},
      {"empty", "F32", {0, 5}, {}},
  };
  const StMetadata metadata = {{"pe", "rope"}, {"n_layer", "2"}, {"quote\"\n", "\xC3\xA9"}};
  const std::string path = tmp.file("model.safetensors");
  save_safetensors(path, tensors, metadata);

  const std::string bytes = read_file(path);
  const size_t n = header_length(bytes);
  CHECK(n % 8 == 0);  // the header is padded so the data starts 8-byte aligned
  CHECK(bytes.size() == 8 + n + 4 * (6 + 4 + 1 + 0));

  const StFile f = load_safetensors(path);
  CHECK(f.metadata == metadata);
  REQUIRE(f.tensors.size() == tensors.size());
  for (size_t i = 0; i < tensors.size(); ++i) {
    CHECK(f.tensors[i].name == tensors[i].name);
    CHECK(f.tensors[i].dtype == "F32");
    CHECK(f.tensors[i].shape == tensors[i].shape);
    REQUIRE(f.tensors[i].data.size() == tensors[i].data.size());
    for (size_t k = 0; k < tensors[i].data.size(); ++k) {
      CHECK(bits_of(f.tensors[i].data[k]) == bits_of(tensors[i].data[k]));  // NaN, -0 too
    }
  }
  CHECK(load_safetensors(path).tensors[0].data[2] == 3.5f);
  CHECK(std::filesystem::directory_iterator(tmp.path())->path() == path);  // no temp left

  // No metadata: no __metadata__ key at all.
  CHECK(serialize_safetensors({{"a", "F32", {1}, {1.0f}}}, {}).find("__metadata__") ==
        std::string::npos);
  CHECK(parse_safetensors(serialize_safetensors({}, {}), "x").tensors.empty());
}

TEST_CASE("safetensors: the writer refuses what it cannot write", "[data][safetensors]") {
  REQUIRE_THROWS_WITH(serialize_safetensors({{"a", "F32", {2, 2}, {1, 2, 3}}}, {}),
                      Contains("tensor 'a': shape [2,2] has 4 elements, but data has 3"));
  REQUIRE_THROWS_WITH(serialize_safetensors({{"a", "F16", {1}, {1}}}, {}),
                      Contains("tensor 'a': expected dtype F32, but got F16"));
  REQUIRE_THROWS_WITH(serialize_safetensors({{"a", "F32", {-1}, {}}}, {}),
                      Contains("invalid shape [-1]"));
  REQUIRE_THROWS_WITH(serialize_safetensors({{"a", "F32", {1}, {1}}, {"a", "F32", {1}, {2}}}, {}),
                      Contains("tensor 'a': expected a unique name"));
  REQUIRE_THROWS_WITH(serialize_safetensors({{"__metadata__", "F32", {1}, {1}}}, {}),
                      Contains("expected a unique name"));
  REQUIRE_THROWS_WITH(serialize_safetensors({}, {{"k", "1"}, {"k", "2"}}),
                      Contains("metadata key 'k' repeated"));
}

TEST_CASE("safetensors: length prefix and header framing", "[data][safetensors]") {
  const std::string ok = R"({"w":{"dtype":"F32","shape":[2],"data_offsets":[0,8]}})";
  CHECK(parse(ok, 8).tensors.at(0).data == std::vector<float>{0, 0});

  REQUIRE_THROWS_WITH(parse_safetensors("", "m.st"),
                      Contains("m.st: expected at least 8 bytes") && Contains("has 0"));
  REQUIRE_THROWS_WITH(parse_safetensors(std::string("\x05\0\0", 3), "m.st"), Contains("has 3"));

  std::string past_end = make_file(ok, std::string(8, '\0'));
  past_end[0] = static_cast<char>(ok.size() + 9);  // claims 9 bytes more than there are
  REQUIRE_THROWS_WITH(parse_safetensors(past_end, "m.st"),
                      Contains("m.st: header length") && Contains("runs past the end"));

  std::string huge = make_file(ok, "");
  for (int k = 0; k < 8; ++k) huge[k] = '\xFF';  // 2^64 - 1: must not overflow the check
  REQUIRE_THROWS_WITH(parse_safetensors(huge, "m.st"), Contains("above the limit"));

  REQUIRE_THROWS_WITH(parse(R"({"w":)", 0), Contains("m.st header: byte 5: expected a JSON"));
  REQUIRE_THROWS_WITH(parse("[1,2]", 0),
                      Contains("expected the header to be a JSON object, but got an array"));
  REQUIRE_THROWS_WITH(parse(ok + "x", 8), Contains("expected the end of the JSON text"));
  CHECK_NOTHROW(parse(ok + "      ", 8));  // space padding is part of the header
}

TEST_CASE("safetensors: metadata must map strings to strings", "[data][safetensors]") {
  CHECK(parse(R"({"__metadata__":{"pe":"alibi","step":"7"}})", 0).metadata ==
        StMetadata{{"pe", "alibi"}, {"step", "7"}});
  REQUIRE_THROWS_WITH(parse(R"({"__metadata__":[]})", 0),
                      Contains("m.st: expected __metadata__ to be an object, but got an array"));
  REQUIRE_THROWS_WITH(parse(R"({"__metadata__":{"step":7}})", 0),
                      Contains("__metadata__ 'step': expected a string value, but got a number"));
}

TEST_CASE("safetensors: tensor entries are checked field by field", "[data][safetensors]") {
  REQUIRE_THROWS_WITH(parse("{" + entry("w", "[2]", 0, 8, "F16") + "}", 8),
                      Contains("m.st: tensor 'w': expected dtype F32, but got \"F16\""));
  REQUIRE_THROWS_WITH(parse("{" + entry("w", "[2]", 0, 8, "BF16") + "}", 8),
                      Contains("tensor 'w': expected dtype F32"));
  REQUIRE_THROWS_WITH(parse(R"({"w":[]})", 0),
                      Contains("tensor 'w': expected an object with dtype, shape and"));
  REQUIRE_THROWS_WITH(parse(R"({"w":{"shape":[0],"data_offsets":[0,0]}})", 0),
                      Contains("tensor 'w': expected a string dtype"));
  REQUIRE_THROWS_WITH(parse(R"({"w":{"dtype":1,"shape":[0],"data_offsets":[0,0]}})", 0),
                      Contains("tensor 'w': expected a string dtype"));
  REQUIRE_THROWS_WITH(parse(R"({"w":{"dtype":"F32","shape":0,"data_offsets":[0,0]}})", 0),
                      Contains("tensor 'w': expected an array shape"));
  REQUIRE_THROWS_WITH(parse(R"({"w":{"dtype":"F32","shape":[0]}})", 0),
                      Contains("tensor 'w': expected an array data_offsets"));
  REQUIRE_THROWS_WITH(parse(R"({"w":{"dtype":"F32","shape":[0],"data_offsets":[0,0],"x":1}})", 0),
                      Contains("tensor 'w': expected only the keys") && Contains("got 'x'"));
  REQUIRE_THROWS_WITH(parse("{" + entry("w", "[-2]", 0, 8) + "}", 8),
                      Contains("tensor 'w': expected shape entries that are non-negative "
                               "integers, but got -2"));
  REQUIRE_THROWS_WITH(parse("{" + entry("w", "[2.0]", 0, 8) + "}", 8),
                      Contains("non-negative integers, but got 2.0"));
  REQUIRE_THROWS_WITH(parse("{" + entry("w", "[\"2\"]", 0, 8) + "}", 8),
                      Contains("non-negative integers, but got a string"));
  REQUIRE_THROWS_WITH(parse(R"({"w":{"dtype":"F32","shape":[2],"data_offsets":[0,4,8]}})", 8),
                      Contains("tensor 'w': expected data_offsets [begin, end], but got 3"));
  REQUIRE_THROWS_WITH(parse(R"({"w":{"dtype":"F32","shape":[2],"data_offsets":[0,-8]}})", 8),
                      Contains("tensor 'w': expected data_offsets of non-negative integers"));
}

TEST_CASE("safetensors: offsets, sizes and layout are validated", "[data][safetensors]") {
  // Shape/size mismatch: [2,3] F32 needs 24 bytes.
  REQUIRE_THROWS_WITH(parse("{" + entry("w", "[2,3]", 0, 20) + "}", 20),
                      Contains("tensor 'w': shape [2,3] of F32 needs 24 bytes, but data_offsets "
                               "[0, 20] hold 20"));
  // Offsets past the data buffer, and reversed.
  REQUIRE_THROWS_WITH(parse("{" + entry("w", "[2]", 0, 8) + "}", 4),
                      Contains("tensor 'w': expected data_offsets within the data buffer [0, 4], "
                               "but got [0, 8]"));
  REQUIRE_THROWS_WITH(parse("{" + entry("w", "[2]", 8, 0) + "}", 8),
                      Contains("within the data buffer"));
  REQUIRE_THROWS_WITH(parse("{" + entry("w", "[2]", 0, 18446744073709551615ull) + "}", 8),
                      Contains("within the data buffer"));
  // A shape whose byte count overflows 64 bits.
  REQUIRE_THROWS_WITH(parse("{" + entry("w", "[4294967296,4294967296]", 0, 0) + "}", 0),
                      Contains("tensor 'w'") && Contains("needs more than 2^64 bytes"));
  // Overlap, gap and trailing bytes.
  REQUIRE_THROWS_WITH(
      parse("{" + entry("a", "[2]", 0, 8) + "," + entry("b", "[2]", 4, 12) + "}", 12),
      Contains("tensor 'b' at [4, 12) overlaps tensor 'a', which ends at 8"));
  REQUIRE_THROWS_WITH(parse("{" + entry("a", "[2]", 0, 8) + "," + entry("b", "[2]", 0, 8) + "}", 8),
                      Contains("overlaps tensor"));
  REQUIRE_THROWS_WITH(
      parse("{" + entry("a", "[1]", 0, 4) + "," + entry("b", "[1]", 8, 12) + "}", 12),
      Contains("tensor 'b' starts at 8, leaving data bytes [4, 8) unused"));
  REQUIRE_THROWS_WITH(parse("{" + entry("a", "[1]", 4, 8) + "}", 8),
                      Contains("tensor 'a' starts at 4"));
  REQUIRE_THROWS_WITH(parse("{" + entry("a", "[1]", 0, 4) + "}", 8),
                      Contains("the data buffer has 8 bytes, but the tensors use only 4"));
  // Out of order in the data buffer is fine; header order is kept.
  const StFile f = parse("{" + entry("b", "[1]", 4, 8) + "," + entry("a", "[1]", 0, 4) + "}", 8);
  CHECK(f.tensors.at(0).name == "b");
  CHECK(f.tensors.at(1).name == "a");
}

TEST_CASE("safetensors: every truncation and every header byte flip is handled",
          "[data][safetensors]") {
  const std::string good = serialize_safetensors(
      {{"a", "F32", {2, 2}, {1, 2, 3, 4}}, {"b", "F32", {3}, {5, 6, 7}}}, {{"step", "10"}});
  REQUIRE_NOTHROW(parse_safetensors(good, "g"));
  // Any prefix is refused (too short, header past the end, or data missing).
  for (size_t len = 0; len < good.size(); ++len) {
    CHECK_THROWS_AS(parse_safetensors(good.substr(0, len), "g"), std::runtime_error);
  }
  // Flipping bytes of the prefix and header either still parses or throws cleanly; run
  // under the sanitizer build this also proves no out-of-bounds read.
  const size_t header_end = 8 + header_length(good);
  for (size_t i = 0; i < header_end; ++i) {
    for (unsigned char x : {0x01, 0x20, 0x80, 0xFF}) {
      std::string bad = good;
      bad[i] = static_cast<char>(bad[i] ^ x);
      try {
        parse_safetensors(bad, "g");
      } catch (const std::runtime_error&) {
      }
    }
  }
  REQUIRE_THROWS_WITH(load_safetensors("/nonexistent/model.safetensors"),
                      Contains("/nonexistent/model.safetensors: cannot open"));
}
