#pragma once
// Elementwise binary and ternary ops with broadcasting and PyTorch's type promotion. A Scalar
// operand behaves like a Python number: it ranks below tensors in promotion.
#include <kiln/core/tensor.h>

#include <kiln/core/source_location.h>
#include <optional>
#include <string_view>

namespace kiln {

Tensor add(const Tensor& self, const Tensor& other, const Scalar& alpha = 1,
           const kiln::SourceLocation& loc = kiln::SourceLocation::current());
Tensor add(const Tensor& self, const Scalar& other, const Scalar& alpha = 1,
           const kiln::SourceLocation& loc = kiln::SourceLocation::current());
Tensor sub(const Tensor& self, const Tensor& other, const Scalar& alpha = 1,
           const kiln::SourceLocation& loc = kiln::SourceLocation::current());
Tensor sub(const Tensor& self, const Scalar& other, const Scalar& alpha = 1,
           const kiln::SourceLocation& loc = kiln::SourceLocation::current());
Tensor rsub(
    const Tensor& self, const Scalar& other, const Scalar& alpha = 1,
    const kiln::SourceLocation& loc = kiln::SourceLocation::current());  // other - alpha*self
// rounding_mode: none (true division), "trunc" or "floor".
Tensor div(const Tensor& self, const Tensor& other,
           std::optional<std::string_view> rounding_mode = std::nullopt,
           const kiln::SourceLocation& loc = kiln::SourceLocation::current());
Tensor div(const Tensor& self, const Scalar& other,
           std::optional<std::string_view> rounding_mode = std::nullopt,
           const kiln::SourceLocation& loc = kiln::SourceLocation::current());

// clang-format off
#define KILN_BINARY_OPS(X) \
  X(mul) X(floor_divide) X(remainder) X(fmod) X(pow) X(atan2) X(maximum) \
  X(minimum) X(eq) X(ne) X(lt) X(le) X(gt) X(ge) X(logical_and) X(logical_or) \
  X(logical_xor) X(bitwise_and) X(bitwise_or) X(bitwise_xor) X(bitwise_left_shift) \
  X(bitwise_right_shift)
// clang-format on

#define KILN_DECLARE_BINARY(name)                                                 \
  Tensor name(const Tensor& self, const Tensor& other,                            \
              const kiln::SourceLocation& loc = kiln::SourceLocation::current()); \
  Tensor name(const Tensor& self, const Scalar& other,                            \
              const kiln::SourceLocation& loc = kiln::SourceLocation::current());
KILN_BINARY_OPS(KILN_DECLARE_BINARY)
#undef KILN_DECLARE_BINARY
Tensor pow(const Scalar& self, const Tensor& exponent,
           const kiln::SourceLocation& loc = kiln::SourceLocation::current());

Tensor where(const Tensor& condition, const Tensor& self, const Tensor& other,
             const kiln::SourceLocation& loc = kiln::SourceLocation::current());
Tensor where(const Tensor& condition, const Scalar& self, const Tensor& other,
             const kiln::SourceLocation& loc = kiln::SourceLocation::current());
Tensor where(const Tensor& condition, const Tensor& self, const Scalar& other,
             const kiln::SourceLocation& loc = kiln::SourceLocation::current());
Tensor where(const Tensor& condition, const Scalar& self, const Scalar& other,
             const kiln::SourceLocation& loc = kiln::SourceLocation::current());
Tensor clamp(const Tensor& self, std::optional<Scalar> min,
             std::optional<Scalar> max = std::nullopt,
             const kiln::SourceLocation& loc = kiln::SourceLocation::current());
Tensor clamp(const Tensor& self, const Tensor& min, const Tensor& max,
             const kiln::SourceLocation& loc = kiln::SourceLocation::current());
Tensor clamp_min(const Tensor& self, const Scalar& min,
                 const kiln::SourceLocation& loc = kiln::SourceLocation::current());
Tensor clamp_max(const Tensor& self, const Scalar& max,
                 const kiln::SourceLocation& loc = kiln::SourceLocation::current());
Tensor lerp(const Tensor& self, const Tensor& end, const Scalar& weight,
            const kiln::SourceLocation& loc = kiln::SourceLocation::current());
Tensor lerp(const Tensor& self, const Tensor& end, const Tensor& weight,
            const kiln::SourceLocation& loc = kiln::SourceLocation::current());
Tensor addcmul(const Tensor& self, const Tensor& tensor1, const Tensor& tensor2,
               const Scalar& value = 1,
               const kiln::SourceLocation& loc = kiln::SourceLocation::current());
Tensor addcdiv(const Tensor& self, const Tensor& tensor1, const Tensor& tensor2,
               const Scalar& value = 1,
               const kiln::SourceLocation& loc = kiln::SourceLocation::current());

// PyTorch's torch.result_type over tensors and scalars (wrapped numbers rank lowest, then 0-dim
// tensors, then tensors with dims; a higher category — bool < integral < floating — still wins).
DType result_type(TensorList tensors);
DType result_type(const Tensor& a, const Tensor& b);
DType result_type(const Tensor& a, const Scalar& b);

}  // namespace kiln
