#pragma once
// Elementwise unary ops. Integer inputs to floating functions (exp, sin, ...) give float32, as in
// PyTorch; rounding and sign-like ops keep the input dtype.
#include <kiln/core/tensor.h>

#include <kiln/core/source_location.h>
#include <optional>
#include <string_view>

namespace kiln {

// clang-format off
#define KILN_UNARY_OPS(X) \
  X(neg) X(abs) X(sign) X(exp) X(exp2) X(expm1) X(log) X(log2) X(log10) X(log1p) \
  X(sqrt) X(rsqrt) X(sin) X(cos) X(tan) X(asin) X(acos) X(atan) X(sinh) X(cosh) \
  X(tanh) X(asinh) X(acosh) X(atanh) X(erf) X(erfc) X(erfinv) X(sigmoid) X(relu) \
  X(relu6) X(silu) X(mish) X(floor) X(ceil) X(trunc) X(frac) X(reciprocal) \
  X(square) X(logical_not) X(bitwise_not) X(isnan) X(isinf) X(isfinite) \
  X(hardsigmoid) X(hardswish) X(selu)
// clang-format on

#define KILN_DECLARE_UNARY(name)  \
  Tensor name(const Tensor& self, \
              const kiln::SourceLocation& loc = kiln::SourceLocation::current());
KILN_UNARY_OPS(KILN_DECLARE_UNARY)
#undef KILN_DECLARE_UNARY

Tensor round(const Tensor& self, int64_t decimals = 0,
             const kiln::SourceLocation& loc = kiln::SourceLocation::current());
Tensor logit(const Tensor& self, std::optional<double> eps = std::nullopt,
             const kiln::SourceLocation& loc = kiln::SourceLocation::current());
// approximate: "none" (erf) or "tanh".
Tensor gelu(const Tensor& self, std::string_view approximate = "none",
            const kiln::SourceLocation& loc = kiln::SourceLocation::current());
Tensor softplus(const Tensor& self, double beta = 1.0, double threshold = 20.0,
                const kiln::SourceLocation& loc = kiln::SourceLocation::current());
Tensor hardtanh(const Tensor& self, double min_val = -1.0, double max_val = 1.0,
                const kiln::SourceLocation& loc = kiln::SourceLocation::current());
Tensor leaky_relu(const Tensor& self, double negative_slope = 0.01,
                  const kiln::SourceLocation& loc = kiln::SourceLocation::current());
Tensor elu(const Tensor& self, double alpha = 1.0, double scale = 1.0, double input_scale = 1.0,
           const kiln::SourceLocation& loc = kiln::SourceLocation::current());
Tensor nan_to_num(const Tensor& self, std::optional<double> nan = std::nullopt,
                  std::optional<double> posinf = std::nullopt,
                  std::optional<double> neginf = std::nullopt,
                  const kiln::SourceLocation& loc = kiln::SourceLocation::current());

}  // namespace kiln
