#include <kiln/nn/functional.h>
#include <kiln/ops/binary.h>
#include <kiln/ops/registry.h>

namespace kiln::nn::functional {

Tensor bilinear(const Tensor& input1, const Tensor& input2, const Tensor& weight,
                const Tensor& bias, const kiln::SourceLocation& loc) {
  ops::CallSiteScope call_site(&loc);
  KILN_CHECK(weight.dim() == 3, "bilinear: expected a 3-D weight (out, in1, in2), got {} dims",
             weight.dim());
  KILN_CHECK(input1.dim() >= 1 && input2.dim() >= 1 && input1.size(-1) == weight.size(1) &&
                 input2.size(-1) == weight.size(2),
             "bilinear: input1's last dim ({}) and input2's ({}) must equal weight's dims 1 and "
             "2 ({}, {})",
             input1.dim() ? input1.size(-1) : 0, input2.dim() ? input2.size(-1) : 0, weight.size(1),
             weight.size(2));
  Tensor out = einsum("...i,oij,...j->...o", {input1, weight, input2});
  return bias.defined() ? out + bias : out;
}

Tensor batch_norm(const Tensor& input, const Tensor& running_mean, const Tensor& running_var,
                  const Tensor& weight, const Tensor& bias, bool training, double momentum,
                  double eps, const kiln::SourceLocation& loc) {
  return kiln::batch_norm(input, weight, bias, running_mean, running_var, training, momentum, eps,
                          loc);
}

Tensor dropout(const Tensor& input, double p, bool training, bool inplace,
               const kiln::SourceLocation& loc) {
  ops::CallSiteScope call_site(&loc);
  KILN_CHECK(p >= 0.0 && p <= 1.0, "dropout probability has to be between 0 and 1, but got {}", p);
  // The identity needs no kernel (aten's dropout returns its input too).
  if (!training || p == 0.0) return input;
  if (inplace) {
    Tensor self = input;
    return kiln::dropout_(self, p, training);
  }
  return kiln::dropout(input, p, training);
}

Tensor dropout2d(const Tensor& input, double p, bool training, const kiln::SourceLocation& loc) {
  ops::CallSiteScope call_site(&loc);
  KILN_CHECK(p >= 0.0 && p <= 1.0, "dropout probability has to be between 0 and 1, but got {}", p);
  return kiln::dropout2d(input, p, training);
}

Tensor embedding(const Tensor& input, const Tensor& weight, std::optional<int64_t> padding_idx,
                 const kiln::SourceLocation& loc) {
  ops::CallSiteScope call_site(&loc);
  KILN_CHECK(weight.dim() == 2, "embedding: expected a 2-D weight, got {} dims", weight.dim());
  int64_t pad = -1;
  if (padding_idx) {
    const int64_t n = weight.size(0);
    KILN_CHECK(*padding_idx < n && *padding_idx >= -n,
               "embedding: padding_idx must be within num_embeddings ({}), got {}", n,
               *padding_idx);
    pad = *padding_idx < 0 ? *padding_idx + n : *padding_idx;
  }
  return kiln::embedding(weight, input, pad);
}

}  // namespace kiln::nn::functional
