#pragma once
// Factory functions, as in PyTorch (`kiln::zeros({2, 3})`, `kiln::arange(10, kiln::kInt64)`).
#include <kiln/core/tensor.h>

#include <kiln/core/source_location.h>
#include <functional>
#include <initializer_list>
#include <string>
#include <vector>

namespace kiln {

Tensor empty(IntList size, TensorOptions options = {},
             const kiln::SourceLocation& loc = kiln::SourceLocation::current());
Tensor empty_strided(IntList size, IntList stride, TensorOptions options = {},
                     const kiln::SourceLocation& loc = kiln::SourceLocation::current());
Tensor zeros(IntList size, TensorOptions options = {},
             const kiln::SourceLocation& loc = kiln::SourceLocation::current());
Tensor ones(IntList size, TensorOptions options = {},
            const kiln::SourceLocation& loc = kiln::SourceLocation::current());
// dtype defaults from the value: bool, int64 or float32, as in PyTorch.
Tensor full(IntList size, const Scalar& fill_value, TensorOptions options = {},
            const kiln::SourceLocation& loc = kiln::SourceLocation::current());
// dtype defaults to int64 when every bound is integral, else float32.
Tensor arange(const Scalar& end, TensorOptions options = {},
              const kiln::SourceLocation& loc = kiln::SourceLocation::current());
Tensor arange(const Scalar& start, const Scalar& end, const Scalar& step = 1,
              TensorOptions options = {},
              const kiln::SourceLocation& loc = kiln::SourceLocation::current());
Tensor linspace(const Scalar& start, const Scalar& end, int64_t steps, TensorOptions options = {},
                const kiln::SourceLocation& loc = kiln::SourceLocation::current());
Tensor eye(int64_t n, TensorOptions options = {},
           const kiln::SourceLocation& loc = kiln::SourceLocation::current());
Tensor eye(int64_t n, int64_t m, TensorOptions options = {},
           const kiln::SourceLocation& loc = kiln::SourceLocation::current());

// *_like: same sizes, dtype and device as `other` unless options say otherwise; dense layouts
// are kept (PyTorch's preserve_format).
Tensor empty_like(const Tensor& other, TensorOptions options = {},
                  const kiln::SourceLocation& loc = kiln::SourceLocation::current());
Tensor zeros_like(const Tensor& other, TensorOptions options = {},
                  const kiln::SourceLocation& loc = kiln::SourceLocation::current());
Tensor ones_like(const Tensor& other, TensorOptions options = {},
                 const kiln::SourceLocation& loc = kiln::SourceLocation::current());
Tensor full_like(const Tensor& other, const Scalar& fill_value, TensorOptions options = {},
                 const kiln::SourceLocation& loc = kiln::SourceLocation::current());

// A 0-dim tensor holding a number (what `tensor(3.5)` gives in PyTorch).
Tensor scalar_tensor(const Scalar& value, TensorOptions options = {},
                     const kiln::SourceLocation& loc = kiln::SourceLocation::current());
// A 0-dim tensor marked as a wrapped number: ranks lowest in type promotion, like a Python scalar
// passed to a PyTorch op.
Tensor wrapped_scalar(const Scalar& value, Device device = Device::cpu());

// Tensors from C++ data. `tensor({1.0, 2.0})`, `tensor({{1, 2}, {3, 4}})`; float literals give
// float32, integer literals int64, bool gives bool, unless options name a dtype.
// A nested braced list of numbers, flattened with its shape as it is built.
class NestedList {
 public:
  NestedList(double v) : kind_(Scalar::Kind::Float), values_{Scalar(v)} {}  // NOLINT: leaf
  NestedList(float v) : NestedList(static_cast<double>(v)) {}               // NOLINT
  NestedList(int v) : kind_(Scalar::Kind::Int), values_{Scalar(v)} {}       // NOLINT
  NestedList(int64_t v) : kind_(Scalar::Kind::Int), values_{Scalar(v)} {}   // NOLINT
  NestedList(bool v) : kind_(Scalar::Kind::Bool), values_{Scalar(v)} {}     // NOLINT
  // A ragged list is recorded, not raised at once (an inner list does not know its depth);
  // check() and tensor() raise kiln::Error for it, naming the dim from the outermost list:
  // "tensor: expected sequence of length 2 at dim 1, got 3".
  NestedList(std::initializer_list<NestedList> items);  // NOLINT: nesting
  void check() const;

  const std::vector<Scalar>& values() const { return values_; }
  const DimVector& shape() const { return shape_; }
  // bool if every leaf is bool, int64 if every leaf is integral, else float32.
  DType inferred_dtype() const;

 private:
  Scalar::Kind kind_;
  std::vector<Scalar> values_;
  DimVector shape_;
  // The first raggedness found: at which dim, what was expected there and what was found.
  int64_t ragged_dim_ = -1;
  std::string ragged_expected_, ragged_got_;
};

Tensor tensor(const NestedList& data, TensorOptions options = {},
              const kiln::SourceLocation& loc = kiln::SourceLocation::current());
// A tensor of the given shape from a flat vector in row-major order.
template <typename T>
Tensor from_vector(const std::vector<T>& values, IntList shape, TensorOptions options = {});
template <typename T>
Tensor from_vector(const std::vector<T>& values) {
  int64_t n = static_cast<int64_t>(values.size());
  return from_vector(values, IntList(&n, 1));
}
// Wraps caller-owned memory without copying; `deleter` (may be empty) runs when the last tensor
// using it goes.
Tensor from_blob(void* data, IntList sizes, IntList strides, DType dtype,
                 std::function<void(void*)> deleter = {}, Device device = Device::cpu());

}  // namespace kiln
