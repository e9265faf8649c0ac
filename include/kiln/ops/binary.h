#pragma once
// Elementwise binary and ternary ops with broadcasting and PyTorch's type promotion. A Scalar
// operand behaves like a Python number: it ranks below tensors in promotion.
#include <kiln/core/tensor.h>

#include <optional>
#include <string_view>

namespace kiln {

Tensor add(const Tensor& self, const Tensor& other, const Scalar& alpha = 1);
Tensor add(const Tensor& self, const Scalar& other, const Scalar& alpha = 1);
Tensor sub(const Tensor& self, const Tensor& other, const Scalar& alpha = 1);
Tensor sub(const Tensor& self, const Scalar& other, const Scalar& alpha = 1);
Tensor rsub(const Tensor& self, const Scalar& other,
            const Scalar& alpha = 1);  // other - alpha*self
// rounding_mode: none (true division), "trunc" or "floor".
Tensor div(const Tensor& self, const Tensor& other,
           std::optional<std::string_view> rounding_mode = std::nullopt);
Tensor div(const Tensor& self, const Scalar& other,
           std::optional<std::string_view> rounding_mode = std::nullopt);

// clang-format off
#define KILN_BINARY_OPS(X) \
  X(mul) X(floor_divide) X(remainder) X(fmod) X(pow) X(atan2) X(maximum) \
  X(minimum) X(eq) X(ne) X(lt) X(le) X(gt) X(ge) X(logical_and) X(logical_or) \
  X(logical_xor) X(bitwise_and) X(bitwise_or) X(bitwise_xor) X(bitwise_left_shift) \
  X(bitwise_right_shift)
// clang-format on

#define KILN_DECLARE_BINARY(name)                       \
  Tensor name(const Tensor& self, const Tensor& other); \
  Tensor name(const Tensor& self, const Scalar& other);
KILN_BINARY_OPS(KILN_DECLARE_BINARY)
#undef KILN_DECLARE_BINARY
Tensor pow(const Scalar& self, const Tensor& exponent);

Tensor where(const Tensor& condition, const Tensor& self, const Tensor& other);
Tensor where(const Tensor& condition, const Scalar& self, const Tensor& other);
Tensor where(const Tensor& condition, const Tensor& self, const Scalar& other);
Tensor where(const Tensor& condition, const Scalar& self, const Scalar& other);
Tensor clamp(const Tensor& self, std::optional<Scalar> min,
             std::optional<Scalar> max = std::nullopt);
Tensor clamp(const Tensor& self, const Tensor& min, const Tensor& max);
Tensor clamp_min(const Tensor& self, const Scalar& min);
Tensor clamp_max(const Tensor& self, const Scalar& max);
Tensor lerp(const Tensor& self, const Tensor& end, const Scalar& weight);
Tensor lerp(const Tensor& self, const Tensor& end, const Tensor& weight);
Tensor addcmul(const Tensor& self, const Tensor& tensor1, const Tensor& tensor2,
               const Scalar& value = 1);
Tensor addcdiv(const Tensor& self, const Tensor& tensor1, const Tensor& tensor2,
               const Scalar& value = 1);

// PyTorch's torch.result_type over tensors and scalars (wrapped numbers rank lowest, then 0-dim
// tensors, then tensors with dims; a higher category — bool < integral < floating — still wins).
DType result_type(TensorList tensors);
DType result_type(const Tensor& a, const Tensor& b);
DType result_type(const Tensor& a, const Scalar& b);

}  // namespace kiln
