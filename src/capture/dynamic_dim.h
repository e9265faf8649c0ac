#pragma once
// One dynamic dimension of a compiled function's argument, as tracing and guards name it.
#include <cstddef>
#include <cstdint>
#include <optional>

namespace kiln::capture {

// Argument leaf `arg`, dimension `dim` (negative counts from the end). Traced with a symbol of
// the session's ShapeEnv instead of its size, restricted to [min, max] when given (mark_dynamic).
struct DynamicDim {
  size_t arg = 0;
  int64_t dim = 0;
  std::optional<int64_t> min = std::nullopt, max = std::nullopt;
  bool operator==(const DynamicDim&) const = default;
};

}  // namespace kiln::capture
