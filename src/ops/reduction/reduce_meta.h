#pragma once
// Shape logic shared by the reductions: which dims a dim list selects, and the reduced shape.
#include <kiln/ops/registry.h>

#include <vector>

namespace kiln::ops {

// The dims a dim list selects (one flag per input dim); an empty list selects every dim, as in
// PyTorch. Raises kiln::IndexError naming op for a dim out of range and kiln::Error for a
// repeated dim. A 0-dim input accepts dims 0 and -1.
std::vector<bool> reduction_mask(int64_t ndim, IntList dims, const char* op);
// The same for an `int[1]? dim` or `int? dim` argument (None selects every dim).
std::vector<bool> reduction_mask(int64_t ndim, const IValue& dims, const char* op);

// Sizes after reducing the selected dims (kept as 1 when keepdim).
SymDimVector reduced_sizes(SymIntList sizes, const std::vector<bool>& mask, bool keepdim);

// A contiguous output of the reduced shape.
TensorMeta reduction_meta(const Tensor& self, const std::vector<bool>& mask, bool keepdim,
                          DType dtype);

// Raises kiln::Error unless every selected dim is non-empty (reductions without an identity:
// max, amax, argmax, ...), with PyTorch's wording.
void check_nonempty_reduction(const Tensor& self, const std::vector<bool>& mask, bool all_dims,
                              const char* op);

// PyTorch's name for a dtype in messages: "Float", "Long", "Bool", ...
const char* torch_type_name(DType dtype);

}  // namespace kiln::ops
