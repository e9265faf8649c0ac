#pragma once
// Comparing a compiled result with eager's, and copying a graph's inputs so that both can run on
// the same values (compile_check.h).
#include <kiln/core/tensor.h>

#include <optional>
#include <span>
#include <string>
#include <vector>

namespace kiln::capture {

struct Tolerance {
  double rtol = 0;
  double atol = 0;
};

// The tolerance for `dtype`: exact for integers and bool; otherwise the given values or the
// dtype's default (float32 rtol 1e-4 atol 1e-5; float64 1e-7 both; 16-bit floats 1e-2 and 1e-3).
Tolerance tolerance_for(DType dtype, std::optional<double> rtol, std::optional<double> atol);

// Why `actual` is not `expected` (dtype, sizes, or the largest elementwise difference with its
// index and the count beyond |a - e| <= atol + rtol * |e|; NaN equals NaN), or nullopt when they
// agree. Undefined tensors equal only each other.
std::optional<std::string> tensor_difference(const Tensor& actual, const Tensor& expected,
                                             std::optional<double> rtol,
                                             std::optional<double> atol);

// Detached copies of `inputs` with the same sizes, strides and dtypes; inputs that share memory
// share it in the copies too (views of one tensor stay views of one copy), so in-place writes
// through one are seen through the others as in the originals.
std::vector<Tensor> copy_inputs_keeping_aliases(std::span<const Tensor> inputs);

// Detached copies of `inputs`, each its own leaf, requiring grad where the original does.
std::vector<Tensor> copy_inputs_as_leaves(std::span<const Tensor> inputs);

}  // namespace kiln::capture
