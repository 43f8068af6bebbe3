// sha256.h — SHA-256 (FIPS 180-4, unchanged since FIPS 180-2), written out so that data/
// needs no library: `prepare` prints the hash of a corpus's prepared text, so that a corpus
// built from other files (another Python version, another Debian release) is told apart.
//
// The algorithm, in short:
//   1. pad the message: one 1 bit, zeros, then its length in bits as a 64-bit big-endian
//      number, to a whole number of 64-byte blocks;
//   2. for each block, expand its 16 big-endian words w[0..15] into 64:
//        w[t] = s1(w[t-2]) + w[t-7] + s0(w[t-15]) + w[t-16]
//      then run 64 rounds over eight working words a..h with the round constants k[t];
//   3. add a..h into the hash state h0..h7; after the last block the state, big-endian, is
//      the 32-byte digest.
// All additions are mod 2^32. Tested on the FIPS 180-2 vectors (tests/data/test_sha256.cpp).
#pragma once
#include <array>
#include <cstdint>
#include <string>
#include <string_view>

namespace poslab {

// Incremental: update() any number of times with consecutive pieces, then hex() once.
class Sha256 {
 public:
  Sha256();
  void update(std::string_view bytes);
  // The digest as 64 lowercase hex digits. Ends the hash: call nothing on it afterwards.
  std::string hex();

 private:
  void compress(const unsigned char* block);  // one 64-byte block into state_

  std::array<uint32_t, 8> state_;
  std::array<unsigned char, 64> buffer_{};  // the start of a block not yet compressed
  size_t buffered_ = 0;                     // bytes held in buffer_
  uint64_t length_ = 0;                     // message bytes so far
};

// The hex digest of one whole message.
std::string sha256_hex(std::string_view bytes);

}  // namespace poslab
