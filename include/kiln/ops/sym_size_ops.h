#pragma once
// Ops whose size arguments may be symbolic (PyTorch's view_symint, reshape_symint, ...): model
// code that builds a shape from its input's sym_sizes() stays symbolic under a dynamic trace, and
// runs as the IntList overloads do on concrete sizes.
#include <kiln/core/scalar.h>
#include <kiln/core/source_location.h>
#include <kiln/core/tensor.h>
#include <kiln/core/tensor_options.h>

namespace kiln {

Tensor view_symint(const Tensor& self, SymIntList size,
                   const kiln::SourceLocation& loc = kiln::SourceLocation::current());
Tensor reshape_symint(const Tensor& self, SymIntList shape,
                      const kiln::SourceLocation& loc = kiln::SourceLocation::current());
Tensor expand_symint(const Tensor& self, SymIntList size,
                     const kiln::SourceLocation& loc = kiln::SourceLocation::current());
Tensor narrow_symint(const Tensor& self, int64_t dim, SymInt start, SymInt length,
                     const kiln::SourceLocation& loc = kiln::SourceLocation::current());
Tensor full_symint(SymIntList size, const Scalar& fill_value, TensorOptions options = {},
                   const kiln::SourceLocation& loc = kiln::SourceLocation::current());
// t's element count as a 0-dim tensor of `options` (a mean's divisor): a sum of ones over t's
// shape, which a graph records for symbolic sizes (a size cannot be a Scalar argument).
Tensor numel_tensor(const Tensor& t, TensorOptions options);

}  // namespace kiln
