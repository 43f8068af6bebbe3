// safetensors.cpp — writer and validating reader; the format is described in safetensors.h.
#include "data/safetensors.h"

#include <algorithm>
#include <cstring>
#include <unordered_set>

#include "data/atomic_file.h"
#include "data/error.h"
#include "data/json.h"

namespace poslab {

namespace {

// Product of the dims times 4 (bytes of F32), or false when it overflows uint64.
bool f32_byte_size(const std::vector<uint64_t>& shape, uint64_t& bytes) {
  uint64_t n = 4;
  for (uint64_t dim : shape) {
    if (__builtin_mul_overflow(n, dim, &n)) return false;
  }
  bytes = n;
  return true;
}

std::string shape_text(const std::vector<int64_t>& shape) {
  std::string s = "[";
  for (size_t i = 0; i < shape.size(); ++i) {
    if (i > 0) s += ',';
    s += std::to_string(shape[i]);
  }
  return s + "]";
}

void put_u32_le(std::string& out, uint32_t v) {
  for (int k = 0; k < 4; ++k) out += static_cast<char>((v >> (8 * k)) & 0xFF);
}

uint64_t get_u64_le(std::string_view bytes) {
  uint64_t v = 0;
  for (int k = 7; k >= 0; --k) v = (v << 8) | static_cast<unsigned char>(bytes[k]);
  return v;
}

// One tensor entry of the header once its fields have been checked.
struct Entry {
  const std::string* name;
  std::vector<int64_t> shape;
  uint64_t begin, end;
};

// Reads one "name": {"dtype": ..., "shape": ..., "data_offsets": ...} entry; data_size is
// the length of the data buffer.
Entry check_entry(const std::string& what, const std::string& name, const Json& value,
                  uint64_t data_size) {
  const std::string where = what + ": tensor '" + name + "'";
  if (!value.is_object()) {
    data_error(where, ": expected an object with dtype, shape and data_offsets, but got ",
               json_kind_name(value.kind));
  }
  for (const auto& [key, field] : value.members) {
    if (key != "dtype" && key != "shape" && key != "data_offsets") {
      data_error(where, ": expected only the keys dtype, shape and data_offsets, but got '", key,
                 "'");
    }
  }
  const Json* dtype = value.find("dtype");
  const Json* shape = value.find("shape");
  const Json* offsets = value.find("data_offsets");
  if (!dtype || !dtype->is_string()) data_error(where, ": expected a string dtype");
  if (dtype->text != "F32") {
    data_error(where, ": expected dtype F32, but got ", json_quote(dtype->text),
               " (poslab reads only float32 checkpoints)");
  }
  if (!shape || !shape->is_array()) data_error(where, ": expected an array shape");
  if (!offsets || !offsets->is_array()) data_error(where, ": expected an array data_offsets");

  Entry entry{&name, {}, 0, 0};
  std::vector<uint64_t> dims;
  for (const Json& dim : shape->items) {
    const auto d = dim.to_uint64();
    if (!d || *d > static_cast<uint64_t>(INT64_MAX)) {
      data_error(where, ": expected shape entries that are non-negative integers, but got ",
                 dim.is_number() ? dim.text : json_kind_name(dim.kind));
    }
    dims.push_back(*d);
    entry.shape.push_back(static_cast<int64_t>(*d));
  }
  if (offsets->items.size() != 2) {
    data_error(where, ": expected data_offsets [begin, end], but got ", offsets->items.size(),
               " entries");
  }
  const auto begin = offsets->items[0].to_uint64();
  const auto end = offsets->items[1].to_uint64();
  if (!begin || !end) data_error(where, ": expected data_offsets of non-negative integers");
  if (*begin > *end || *end > data_size) {
    data_error(where, ": expected data_offsets within the data buffer [0, ", data_size,
               "], but got [", *begin, ", ", *end, "]");
  }
  uint64_t bytes = 0;
  const bool fits = f32_byte_size(dims, bytes);
  if (!fits || bytes != *end - *begin) {
    data_error(where, ": shape ", shape_text(entry.shape), " of F32 needs ",
               fits ? std::to_string(bytes) : std::string("more than 2^64"),
               " bytes, but data_offsets [", *begin, ", ", *end, "] hold ", *end - *begin);
  }
  entry.begin = *begin;
  entry.end = *end;
  return entry;
}

// The tensors must tile [0, data_size): sorted by offset, each starts where the last ended.
void check_layout(const std::string& what, std::vector<Entry> entries, uint64_t data_size) {
  std::sort(entries.begin(), entries.end(), [](const Entry& a, const Entry& b) {
    return a.begin != b.begin ? a.begin < b.begin : a.end < b.end;
  });
  uint64_t expected = 0;
  const std::string* previous = nullptr;
  for (const Entry& e : entries) {
    if (e.begin < expected) {
      data_error(what, ": tensor '", *e.name, "' at [", e.begin, ", ", e.end, ") overlaps tensor '",
                 *previous, "', which ends at ", expected);
    }
    if (e.begin > expected) {
      data_error(what, ": tensor '", *e.name, "' starts at ", e.begin, ", leaving data bytes [",
                 expected, ", ", e.begin, ") unused (expected tensors to tile the buffer)");
    }
    expected = e.end;
    previous = e.name;
  }
  if (expected != data_size) {
    data_error(what, ": the data buffer has ", data_size, " bytes, but the tensors use only ",
               expected, " (trailing bytes)");
  }
}

}  // namespace

std::string serialize_safetensors(const std::vector<StTensor>& tensors,
                                  const StMetadata& metadata) {
  // The header, with each tensor's offsets into the data buffer.
  std::string header = "{";
  if (!metadata.empty()) {
    std::unordered_set<std::string> keys;
    header += "\"__metadata__\":{";
    for (size_t i = 0; i < metadata.size(); ++i) {
      const auto& [key, value] = metadata[i];
      if (!keys.insert(key).second) data_error("safetensors: metadata key '", key, "' repeated");
      if (i > 0) header += ',';
      header += json_quote(key);
      header += ':';
      header += json_quote(value);
    }
    header += "}";
  }
  std::unordered_set<std::string> names;
  uint64_t offset = 0;
  for (const StTensor& t : tensors) {
    const std::string where = "safetensors: tensor '" + t.name + "'";
    if (t.name.empty() || t.name == "__metadata__" || !names.insert(t.name).second) {
      data_error(where, ": expected a unique name other than \"\" and __metadata__");
    }
    if (t.dtype != "F32") data_error(where, ": expected dtype F32, but got ", t.dtype);
    uint64_t numel = 1;
    for (int64_t dim : t.shape) {
      if (dim < 0 || __builtin_mul_overflow(numel, static_cast<uint64_t>(dim), &numel)) {
        data_error(where, ": invalid shape ", shape_text(t.shape));
      }
    }
    if (numel != t.data.size()) {
      data_error(where, ": shape ", shape_text(t.shape), " has ", numel, " elements, but data has ",
                 t.data.size());
    }
    const uint64_t end = offset + 4 * numel;
    if (header.size() > 1) header += ',';  // not right after the opening '{'
    header += json_quote(t.name);
    header += ":{\"dtype\":\"F32\",\"shape\":";
    header += shape_text(t.shape);
    header += ",\"data_offsets\":[";
    header += std::to_string(offset) + "," + std::to_string(end) + "]}";
    offset = end;
  }
  header += "}";
  header.append((8 - header.size() % 8) % 8, ' ');  // data starts 8-byte aligned

  std::string out;
  out.reserve(8 + header.size() + offset);
  for (int k = 0; k < 8; ++k) out += static_cast<char>((uint64_t{header.size()} >> (8 * k)) & 0xFF);
  out += header;
  for (const StTensor& t : tensors) {
    for (float x : t.data) {
      uint32_t bits;
      std::memcpy(&bits, &x, 4);
      put_u32_le(out, bits);
    }
  }
  return out;
}

void save_safetensors(const std::string& path, const std::vector<StTensor>& tensors,
                      const StMetadata& metadata) {
  write_file_atomic(path, serialize_safetensors(tensors, metadata));
}

StFile parse_safetensors(std::string_view bytes, const std::string& what) {
  if (bytes.size() < 8) {
    data_error(what, ": expected at least 8 bytes (the header length), but the file has ",
               bytes.size());
  }
  const uint64_t n = get_u64_le(bytes);
  if (n > safetensors_max_header) {
    data_error(what, ": header length ", n, " is above the limit of ", safetensors_max_header,
               " bytes");
  }
  if (n > bytes.size() - 8) {
    data_error(what, ": header length ", n, " runs past the end of the file (", bytes.size(),
               " bytes, so at most ", bytes.size() - 8, " after the length)");
  }
  const Json header = json_parse(bytes.substr(8, n), what + " header");
  if (!header.is_object()) {
    data_error(what, ": expected the header to be a JSON object, but got ",
               json_kind_name(header.kind));
  }
  const std::string_view data = bytes.substr(8 + n);

  StFile file;
  std::vector<Entry> entries;
  for (const auto& [name, value] : header.members) {
    if (name != "__metadata__") {
      entries.push_back(check_entry(what, name, value, data.size()));
      continue;
    }
    if (!value.is_object()) {
      data_error(what, ": expected __metadata__ to be an object, but got ",
                 json_kind_name(value.kind));
    }
    for (const auto& [key, v] : value.members) {
      if (!v.is_string()) {
        data_error(what, ": __metadata__ '", key, "': expected a string value, but got ",
                   json_kind_name(v.kind));
      }
      file.metadata.emplace_back(key, v.text);
    }
  }
  check_layout(what, entries, data.size());

  for (const Entry& e : entries) {
    StTensor t;
    t.name = *e.name;
    t.shape = e.shape;
    t.data.resize((e.end - e.begin) / 4);
    for (size_t i = 0; i < t.data.size(); ++i) {
      const char* p = data.data() + e.begin + 4 * i;
      uint32_t bits = 0;
      for (int k = 3; k >= 0; --k) bits = (bits << 8) | static_cast<unsigned char>(p[k]);
      std::memcpy(&t.data[i], &bits, 4);
    }
    file.tensors.push_back(std::move(t));
  }
  return file;
}

StFile load_safetensors(const std::string& path) {
  return parse_safetensors(read_file(path), path);
}

}  // namespace poslab
