// Parsing and validating a safetensors header. Nothing here trusts the file: every number is
// range-checked before it is used in arithmetic or as an offset.
#include <kiln/core/error.h>

#include <algorithm>
#include <array>
#include <limits>
#include <nlohmann/json.hpp>

#include "serialize/safetensors_format.h"

namespace kiln::safetensors::detail {
namespace {

using json = nlohmann::json;

constexpr std::array<FileDType, 20> kFileDTypes = {{
    {"BOOL", 8, DType::Bool, Conversion::None},
    {"U8", 8, DType::UInt8, Conversion::None},
    {"I8", 8, DType::Int8, Conversion::None},
    {"I16", 16, DType::Int16, Conversion::None},
    {"I32", 32, DType::Int32, Conversion::None},
    {"I64", 64, DType::Int64, Conversion::None},
    {"F16", 16, DType::Float16, Conversion::None},
    {"BF16", 16, DType::BFloat16, Conversion::None},
    {"F32", 32, DType::Float32, Conversion::None},
    {"F64", 64, DType::Float64, Conversion::None},
    {"U16", 16, DType::Int32, Conversion::U16ToInt32},
    {"U32", 32, DType::Int64, Conversion::U32ToInt64},
    {"F8_E4M3", 8, DType::Float16, Conversion::F8E4M3ToF16},
    {"F8_E5M2", 8, DType::Float16, Conversion::F8E5M2ToF16},
    {"U64", 64, DType::Int64, Conversion::Unsupported},
    {"F8_E8M0", 8, DType::Float32, Conversion::Unsupported},
    {"F6_E2M3", 6, DType::Float32, Conversion::Unsupported},
    {"F6_E3M2", 6, DType::Float32, Conversion::Unsupported},
    {"F4", 4, DType::Float32, Conversion::Unsupported},
    {"C64", 64, DType::Float32, Conversion::Unsupported},
}};

std::string known_dtype_names() {
  std::string s;
  for (const auto& d : kFileDTypes) s += (s.empty() ? "" : ", ") + std::string(d.name);
  return s;
}

// A JSON value that must be a non-negative integer (no sign, no fraction, no exponent overflow).
uint64_t unsigned_field(const json& v, const std::string& path, const std::string& tensor,
                        const char* field) {
  KILN_CHECK(v.is_number_unsigned(),
             "safetensors: {}: tensor '{}' has {} entry {}, expected a non-negative integer", path,
             tensor, field, v.dump());
  return v.get<uint64_t>();
}

TensorEntry parse_entry(const std::string& name, const json& info, const std::string& path) {
  KILN_CHECK(info.is_object(), "safetensors: {}: entry '{}' should be an object, got {}", path,
             name, info.type_name());
  auto dtype_it = info.find("dtype");
  auto shape_it = info.find("shape");
  auto offsets_it = info.find("data_offsets");
  KILN_CHECK(dtype_it != info.end() && shape_it != info.end() && offsets_it != info.end(),
             "safetensors: {}: tensor '{}' needs 'dtype', 'shape' and 'data_offsets'", path, name);
  KILN_CHECK(dtype_it->is_string(), "safetensors: {}: tensor '{}' has a non-string dtype {}", path,
             name, dtype_it->dump());
  const std::string& dtype_name = dtype_it->get_ref<const std::string&>();
  const FileDType* dtype = find_file_dtype(dtype_name);
  KILN_CHECK(dtype != nullptr, "safetensors: {}: tensor '{}' has unknown dtype '{}' (known: {})",
             path, name, dtype_name, known_dtype_names());

  KILN_CHECK(shape_it->is_array(), "safetensors: {}: tensor '{}' has a shape that is not a list",
             path, name);
  TensorEntry e{name, dtype, {}, 0, 0};
  // The element count, skipping zero dims so that a huge dim next to a zero one still has to
  // fit (kiln computes strides from the sizes).
  uint64_t nonzero_product = 1;
  bool empty = false;
  for (const json& d : *shape_it) {
    uint64_t size = unsigned_field(d, path, name, "shape");
    KILN_CHECK(size <= static_cast<uint64_t>(std::numeric_limits<int64_t>::max()),
               "safetensors: {}: tensor '{}' has shape entry {}, too large", path, name, size);
    if (size == 0) {
      empty = true;
    } else {
      KILN_CHECK(!__builtin_mul_overflow(nonzero_product, size, &nonzero_product) &&
                     nonzero_product <= static_cast<uint64_t>(std::numeric_limits<int64_t>::max()),
                 "safetensors: {}: tensor '{}' has shape {} with too many elements", path, name,
                 shape_it->dump());
    }
    e.shape.push_back(static_cast<int64_t>(size));
  }
  const uint64_t numel = empty ? 0 : nonzero_product;
  uint64_t bits = 0;
  KILN_CHECK(!__builtin_mul_overflow(numel, static_cast<uint64_t>(dtype->bits), &bits),
             "safetensors: {}: tensor '{}' of shape {} is too large", path, name, shape_it->dump());
  KILN_CHECK(bits % 8 == 0,
             "safetensors: {}: tensor '{}' ({} x {}) does not fill a whole number of bytes", path,
             name, dtype_name, shape_it->dump());

  KILN_CHECK(offsets_it->is_array() && offsets_it->size() == 2,
             "safetensors: {}: tensor '{}' should have data_offsets [begin, end], got {}", path,
             name, offsets_it->dump());
  e.begin = unsigned_field((*offsets_it)[0], path, name, "data_offsets");
  e.end = unsigned_field((*offsets_it)[1], path, name, "data_offsets");
  KILN_CHECK(e.begin <= e.end,
             "safetensors: {}: tensor '{}' has data_offsets [{}, {}] (end < begin)", path, name,
             e.begin, e.end);
  KILN_CHECK(e.end - e.begin == bits / 8,
             "safetensors: {}: tensor '{}' ({} x {}) needs {} bytes but its data_offsets [{}, {}] "
             "span {}",
             path, name, dtype_name, shape_it->dump(), bits / 8, e.begin, e.end, e.end - e.begin);
  return e;
}

Metadata parse_metadata(const json& v, const std::string& path) {
  KILN_CHECK(v.is_object(), "safetensors: {}: __metadata__ should be an object of strings", path);
  Metadata m;
  for (const auto& [key, value] : v.items()) {
    KILN_CHECK(value.is_string(), "safetensors: {}: __metadata__ entry '{}' should be a string",
               path, key);
    m.emplace(key, value.get<std::string>());
  }
  return m;
}

}  // namespace

const FileDType* find_file_dtype(std::string_view name) {
  for (const auto& d : kFileDTypes)
    if (d.name == name) return &d;
  return nullptr;
}

std::string_view file_dtype_name(DType dtype) {
  for (const auto& d : kFileDTypes)
    if (d.conversion == Conversion::None && d.kiln_dtype == dtype) return d.name;
  throw_error(fmt::format("safetensors: no file dtype for {}", dtype_name(dtype)));
}

uint64_t checked_header_length(const unsigned char prefix[8], uint64_t file_size,
                               const std::string& path) {
  KILN_CHECK(file_size >= 8, "safetensors: {}: file of {} bytes is too short for a header length",
             path, file_size);
  uint64_t n = 0;
  for (int i = 7; i >= 0; --i) n = (n << 8) | prefix[i];  // little-endian
  KILN_CHECK(n <= kMaxHeaderBytes,
             "safetensors: {}: header length {} exceeds the limit of {} bytes", path, n,
             kMaxHeaderBytes);
  KILN_CHECK(n <= file_size - 8,
             "safetensors: {}: header length {} runs past the end of the file ({} bytes)", path, n,
             file_size);
  return n;
}

Header parse_header(const char* text, uint64_t json_len, uint64_t file_size,
                    const std::string& path) {
  json root;
  try {
    root = json::parse(text, text + json_len);
  } catch (const json::exception& e) {
    throw_error(fmt::format("safetensors: {}: the header is not valid JSON: {}", path, e.what()));
  }
  KILN_CHECK(root.is_object(), "safetensors: {}: the header should be a JSON object, got {}", path,
             root.type_name());

  Header h;
  h.data_start = 8 + json_len;
  h.data_bytes = file_size - h.data_start;  // json_len <= file_size - 8 was checked
  for (const auto& [key, value] : root.items()) {
    if (key == "__metadata__") {
      h.metadata = parse_metadata(value, path);
    } else {
      h.tensors.push_back(parse_entry(key, value, path));
    }
  }
  std::sort(h.tensors.begin(), h.tensors.end(), [](const TensorEntry& a, const TensorEntry& b) {
    return a.begin != b.begin ? a.begin < b.begin : a.end < b.end;
  });
  // Packed: each tensor starts where the previous one ended, and the last ends the file.
  uint64_t expected = 0;
  const TensorEntry* previous = nullptr;
  for (const auto& t : h.tensors) {
    KILN_CHECK(t.end <= h.data_bytes,
               "safetensors: {}: tensor '{}' has data_offsets [{}, {}] outside the data section "
               "of {} bytes (the file may be truncated)",
               path, t.name, t.begin, t.end, h.data_bytes);
    KILN_CHECK(t.begin >= expected,
               "safetensors: {}: tensor '{}' (bytes [{}, {}]) overlaps tensor '{}' (bytes [{}, "
               "{}])",
               path, t.name, t.begin, t.end, previous ? previous->name : "",
               previous ? previous->begin : 0, expected);
    KILN_CHECK(t.begin == expected,
               "safetensors: {}: tensor '{}' starts at byte {} but the previous tensor ends at {} "
               "(a gap in the data section)",
               path, t.name, t.begin, expected);
    expected = t.end;
    previous = &t;
  }
  KILN_CHECK(expected == h.data_bytes,
             "safetensors: {}: the tensors cover {} bytes but the data section has {} (wrong "
             "header or trailing bytes)",
             path, expected, h.data_bytes);
  return h;
}

}  // namespace kiln::safetensors::detail
