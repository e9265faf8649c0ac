#pragma once
// The safetensors format as kiln reads it: the dtype table, and a header parsed and validated
// against the file's size before any tensor byte is touched.
#include <kiln/core/dtype.h>
#include <kiln/serialize/safetensors.h>

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace kiln::safetensors::detail {

// The largest header the reference implementation accepts (100 MB).
inline constexpr uint64_t kMaxHeaderBytes = 100'000'000;

// How a file dtype becomes a kiln tensor.
enum class Conversion {
  None,         // the bytes are kiln's dtype as they are
  U16ToInt32,   // widened: every value fits
  U32ToInt64,   // widened: every value fits
  F8E4M3ToF16,  // float16 holds every float8_e4m3fn value exactly
  F8E5M2ToF16,  // float8_e5m2 is float16 with the low mantissa byte dropped
  Unsupported,  // kiln has no dtype that holds every value (U64, sub-byte and complex floats)
};

struct FileDType {
  std::string_view name;  // as the header spells it: "F32", "BF16", ...
  uint32_t bits;          // per element
  DType kiln_dtype;       // what load() returns (meaningless when Unsupported)
  Conversion conversion;
};

// The entry for a header dtype name, or nullptr if the format does not name it.
const FileDType* find_file_dtype(std::string_view name);
// The header name of a kiln dtype ("F32" for float32, ...).
std::string_view file_dtype_name(DType dtype);

struct TensorEntry {
  std::string name;
  const FileDType* dtype;
  std::vector<int64_t> shape;
  uint64_t begin, end;  // byte offsets into the data section
};

struct Header {
  Metadata metadata;
  std::vector<TensorEntry> tensors;  // in the order of their bytes
  uint64_t data_start;               // 8 + header length
  uint64_t data_bytes;               // the data section's length
};

// Parses the JSON header (json, json_len bytes) of a file of file_size bytes and checks it:
// well-formed JSON, known dtypes, non-negative shapes whose byte size matches the data_offsets,
// offsets inside the data section, tensors packed without overlap or gaps and covering it all,
// no arithmetic overflow. Raises kiln::Error naming the path and the problem.
Header parse_header(const char* json, uint64_t json_len, uint64_t file_size,
                    const std::string& path);

// Checks the 8-byte length prefix against the file size; returns the header's length.
uint64_t checked_header_length(const unsigned char prefix[8], uint64_t file_size,
                               const std::string& path);

}  // namespace kiln::safetensors::detail
