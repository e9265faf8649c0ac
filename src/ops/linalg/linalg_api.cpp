// The typed C++ API of the linalg ops: each forwards to its registry declaration.
#include <kiln/ops/linalg.h>
#include <kiln/ops/registry.h>

#include <string>

namespace kiln {
namespace {
using ops::op_named;
}  // namespace

Tensor mm(const Tensor& self, const Tensor& mat2, const kiln::SourceLocation& loc) {
  static const auto& def = op_named("mm");
  return ops::call1(def, {self, mat2}, &loc);
}
Tensor bmm(const Tensor& self, const Tensor& mat2, const kiln::SourceLocation& loc) {
  static const auto& def = op_named("bmm");
  return ops::call1(def, {self, mat2}, &loc);
}
Tensor addmm(const Tensor& self, const Tensor& mat1, const Tensor& mat2, const Scalar& beta,
             const Scalar& alpha, const kiln::SourceLocation& loc) {
  static const auto& def = op_named("addmm");
  return ops::call1(def, {self, mat1, mat2, beta, alpha}, &loc);
}
Tensor baddbmm(const Tensor& self, const Tensor& batch1, const Tensor& batch2, const Scalar& beta,
               const Scalar& alpha, const kiln::SourceLocation& loc) {
  static const auto& def = op_named("baddbmm");
  return ops::call1(def, {self, batch1, batch2, beta, alpha}, &loc);
}
Tensor dot(const Tensor& self, const Tensor& tensor, const kiln::SourceLocation& loc) {
  static const auto& def = op_named("dot");
  return ops::call1(def, {self, tensor}, &loc);
}
Tensor outer(const Tensor& self, const Tensor& vec2, const kiln::SourceLocation& loc) {
  static const auto& def = op_named("outer");
  return ops::call1(def, {self, vec2}, &loc);
}
Tensor matmul(const Tensor& self, const Tensor& other, const kiln::SourceLocation& loc) {
  static const auto& def = op_named("matmul");
  return ops::call1(def, {self, other}, &loc);
}
Tensor linear(const Tensor& input, const Tensor& weight, const Tensor& bias,
              const kiln::SourceLocation& loc) {
  ops::CallSiteScope call_site(&loc);
  static const auto& def = op_named("linear");
  return ops::call1(def, {input, weight, bias.defined() ? ops::IValue(bias) : ops::IValue()}, &loc);
}
Tensor einsum(std::string_view equation, TensorList tensors, const kiln::SourceLocation& loc) {
  ops::CallSiteScope call_site(&loc);
  static const auto& def = op_named("einsum");
  return ops::call1(def, {std::string(equation), tensors.vec(), std::nullopt}, &loc);
}

}  // namespace kiln
