// test_sha256.cpp — SHA-256 against the FIPS 180-2 test vectors (appendix B, and the
// one-million-'a' message of its section B.3).
#include <catch2/catch.hpp>
#include <string>

#include "data/sha256.h"

using namespace poslab;

TEST_CASE("sha256: the FIPS 180-2 vectors", "[data][sha256]") {
  // B.1: one block.
  CHECK(sha256_hex("abc") == "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
  // The empty message: padding alone fills the one block.
  CHECK(sha256_hex("") == "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
  // B.2: 448 bits, so the padding's 1 bit and length need a second block.
  CHECK(sha256_hex("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq") ==
        "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1");
  // B.3: one million 'a', given 1,000 at a time (the incremental path).
  Sha256 h;
  const std::string thousand(1000, 'a');
  for (int i = 0; i < 1000; ++i) h.update(thousand);
  CHECK(h.hex() == "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0");
  CHECK(sha256_hex(std::string(1000000, 'a')) ==
        "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0");
}

TEST_CASE("sha256: pieces of any size give the hash of the whole", "[data][sha256]") {
  // Lengths around the block (64) and padding (56) boundaries, cut at every place.
  for (size_t n : {55, 56, 63, 64, 65, 119, 120, 128}) {
    std::string message;
    for (size_t i = 0; i < n; ++i) message += static_cast<char>('a' + i % 26);
    const std::string whole = sha256_hex(message);
    for (size_t cut = 0; cut <= n; ++cut) {
      Sha256 h;
      h.update(std::string_view(message).substr(0, cut));
      h.update(std::string_view(message).substr(cut));
      INFO("n = " << n << ", cut at " << cut);
      CHECK(h.hex() == whole);
    }
  }
}
