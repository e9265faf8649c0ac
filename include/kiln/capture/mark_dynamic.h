#pragma once
// Per-tensor overrides of compile's dynamic-shape policy (torch._dynamo.mark_dynamic and
// mark_static): when a compiled function traces with this tensor as an argument, the marked
// dimension is traced with a symbol (mark_dynamic, optionally bounded) or with its size
// (mark_static), whatever CompileOptions::dynamic says. The marks live as long as the tensor;
// they are read only when a compiled function traces.
#include <kiln/core/tensor.h>

#include <cstdint>
#include <optional>

namespace kiln {

// Trace `dim` of `t` (negative counts from the end) as a symbol. A call whose size lies outside
// [min, max] recompiles. Sizes 0 and 1 are still specialized, as in PyTorch.
void mark_dynamic(const Tensor& t, int64_t dim, std::optional<int64_t> min = std::nullopt,
                  std::optional<int64_t> max = std::nullopt);
// Trace `dim` of `t` with its size even under dynamic = true or automatic dynamic.
void mark_static(const Tensor& t, int64_t dim);

namespace capture {

// What mark_dynamic / mark_static said about one dimension of a tensor.
struct DimMark {
  bool dynamic = false;  // false: mark_static
  std::optional<int64_t> min, max;
};

// The mark on `t`'s dimension `dim` (0 <= dim < t.dim()), or nullopt when it has none.
std::optional<DimMark> dim_mark(const Tensor& t, int64_t dim);

}  // namespace capture
}  // namespace kiln
