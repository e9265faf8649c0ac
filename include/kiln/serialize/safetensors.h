#pragma once
// safetensors checkpoints (https://github.com/huggingface/safetensors): an 8-byte little-endian
// header length, a JSON header {"name": {"dtype", "shape", "data_offsets"}, "__metadata__": {...}},
// then the tensors' bytes. Every field of a file is checked before it is used, so a truncated or
// malicious file raises kiln::Error, never reads out of bounds.
#include <kiln/core/tensor.h>

#include <map>
#include <string>

namespace kiln::safetensors {

using TensorMap = std::map<std::string, Tensor>;
using Metadata = std::map<std::string, std::string>;

// Reads every tensor of a file, memory-mapped: tensors whose bytes are aligned for their dtype
// view the mapping (copy-on-write: writing to them never changes the file), the others are
// copied. The mapping lives as long as any tensor viewing it. The file must not be truncated by
// another process while they are alive (the OS would signal an access past its end).
// Dtypes kiln lacks load into the closest one that holds every value exactly: U16 -> int32,
// U32 -> int64, F8_E4M3 / F8_E5M2 -> float16; U64 and the sub-byte and complex dtypes raise
// kiln::Error naming the dtype.
TensorMap load(const std::string& path);
// The header's "__metadata__" (empty if absent), without reading the tensors.
Metadata load_metadata(const std::string& path);

// Writes tensors (any layout, CPU) and metadata to path atomically: into a temporary file next to
// it, renamed over path only once complete, so an error never leaves a partial file behind or
// touches an existing one. Tensors are ordered by alignment then name, and the header padded to a
// multiple of 8 bytes, as the Python package writes them, so every tensor is aligned on load.
void save(const std::string& path, const TensorMap& tensors, const Metadata& metadata = {});

}  // namespace kiln::safetensors
