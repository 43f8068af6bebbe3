// safetensors.h — the safetensors checkpoint format (docs/formats.md), F32 only.
//
// Layout of a file (https://github.com/huggingface/safetensors):
//   bytes [0, 8)        N, the header length, a little-endian uint64
//   bytes [8, 8+N)      the header: a UTF-8 JSON object, e.g.
//                         {"__metadata__":{"pe":"rope","step":"1000"},
//                          "transformer.wte.weight":{"dtype":"F32","shape":[65,64],
//                                                    "data_offsets":[0,16640]}}
//                       padded with spaces so that N is a multiple of 8 (data aligned);
//   bytes [8+N, end)    the data buffer. data_offsets [begin, end) are relative to its start;
//                       a tensor's bytes are its values in row-major order, little-endian.
// "__metadata__" is optional and maps strings to strings.
//
// The reader trusts nothing: the header length must fit the file (and stay under 100 MB),
// the JSON must be well-formed and of the shape above, every tensor F32 with a shape of
// non-negative integers whose element count times 4 equals end - begin (computed without
// overflow), offsets inside the data buffer, and the tensors must tile the buffer exactly:
// no overlap, no gap, no trailing bytes (as the reference implementation requires). Errors
// name the file and the tensor. Byte offsets in JSON errors count from the header's start.
#pragma once
#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace poslab {

struct StTensor {
  std::string name;
  std::string dtype = "F32";   // the only dtype poslab reads or writes
  std::vector<int64_t> shape;  // row-major; data.size() == product of shape
  std::vector<float> data;
};

using StMetadata = std::vector<std::pair<std::string, std::string>>;

struct StFile {
  StMetadata metadata;            // in file order
  std::vector<StTensor> tensors;  // in header order
};

// The largest header the reader accepts, as in the reference implementation.
constexpr uint64_t safetensors_max_header = 100'000'000;

// The file's bytes: header keys in the order given (metadata first, when non-empty), tensor
// data laid out in the order given. Throws on a repeated or empty name, a dtype other than
// F32, or a shape that does not match data.size().
std::string serialize_safetensors(const std::vector<StTensor>& tensors, const StMetadata& metadata);

// serialize_safetensors, then write_file_atomic (temporary file, fsync, rename).
void save_safetensors(const std::string& path, const std::vector<StTensor>& tensors,
                      const StMetadata& metadata);

// Validates and decodes the bytes of a file; `what` names it in errors.
StFile parse_safetensors(std::string_view bytes, const std::string& what);

// read_file, then parse_safetensors.
StFile load_safetensors(const std::string& path);

}  // namespace poslab
