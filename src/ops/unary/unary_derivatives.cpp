// Derivatives of the elementwise unary ops, written in kiln ops (so tracing a backward pass
// records a graph). x: the input, y: the output, g: the output's gradient.
#include "ops/unary/unary_kernels.h"

#include <kiln/ops/binary.h>
#include <kiln/ops/creation.h>
#include <kiln/ops/registry.h>
#include <kiln/ops/unary.h>

#include <cmath>
#include <numbers>
#include <string_view>

namespace kiln::ops {
namespace {

using Formula = Tensor (*)(const Tensor& x, const Tensor& y, const Tensor& g);

struct UnaryDerivative {
  std::string_view name;
  Formula formula;
  DerivativeReads reads = DerivativeReads::Inputs;  // which of x and y the formula reads
};

Tensor zero_gradient(const Tensor& x, const Tensor&, const Tensor&) { return zeros_like(x); }

// The fused backward ops (activation_backward_ops.cpp).
Tensor relu_gradient(const Tensor&, const Tensor& y, const Tensor& g) {
  static const OpDef& threshold_backward = OpRegistry::instance().get("threshold_backward");
  return call1(threshold_backward, {g, y, Scalar(0)});
}
Tensor sigmoid_gradient(const Tensor&, const Tensor& y, const Tensor& g) {
  static const OpDef& sigmoid_backward = OpRegistry::instance().get("sigmoid_backward");
  return call1(sigmoid_backward, {g, y});
}
Tensor tanh_gradient(const Tensor&, const Tensor& y, const Tensor& g) {
  static const OpDef& tanh_backward = OpRegistry::instance().get("tanh_backward");
  return call1(tanh_backward, {g, y});
}
Tensor silu_gradient(const Tensor& x, const Tensor&, const Tensor& g) {
  static const OpDef& silu_backward = OpRegistry::instance().get("silu_backward");
  return call1(silu_backward, {g, x});
}

constexpr double kLn2 = std::numbers::ln2;
constexpr double kLn10 = std::numbers::ln10;
constexpr double kTwoOverSqrtPi = std::numbers::inv_sqrtpi * 2.0;
constexpr double kSqrtPiOverTwo = 0.5 / std::numbers::inv_sqrtpi;

constexpr UnaryDerivative kUnaryDerivatives[] = {
    {"neg", [](const Tensor&, const Tensor&, const Tensor& g) { return -g; },
     DerivativeReads::Nothing},
    {"abs", [](const Tensor& x, const Tensor&, const Tensor& g) { return g * sign(x); }},
    {"sign", zero_gradient, DerivativeReads::Nothing},
    {"exp", [](const Tensor&, const Tensor& y, const Tensor& g) { return g * y; },
     DerivativeReads::Outputs},
    {"exp2", [](const Tensor&, const Tensor& y, const Tensor& g) { return g * y * kLn2; },
     DerivativeReads::Outputs},
    {"expm1", [](const Tensor&, const Tensor& y, const Tensor& g) { return g * (y + 1); },
     DerivativeReads::Outputs},
    {"log", [](const Tensor& x, const Tensor&, const Tensor& g) { return g / x; }},
    {"log2", [](const Tensor& x, const Tensor&, const Tensor& g) { return g / (x * kLn2); }},
    {"log10", [](const Tensor& x, const Tensor&, const Tensor& g) { return g / (x * kLn10); }},
    {"log1p", [](const Tensor& x, const Tensor&, const Tensor& g) { return g / (x + 1); }},
    {"sqrt", [](const Tensor&, const Tensor& y, const Tensor& g) { return g / (y * 2); },
     DerivativeReads::Outputs},
    {"rsqrt", [](const Tensor&, const Tensor& y, const Tensor& g) { return g * y * y * y * -0.5; },
     DerivativeReads::Outputs},
    {"sin", [](const Tensor& x, const Tensor&, const Tensor& g) { return g * cos(x); }},
    {"cos", [](const Tensor& x, const Tensor&, const Tensor& g) { return -g * sin(x); }},
    {"tan", [](const Tensor&, const Tensor& y, const Tensor& g) { return g * (y * y + 1); },
     DerivativeReads::Outputs},
    {"asin", [](const Tensor& x, const Tensor&, const Tensor& g) { return g * rsqrt(1 - x * x); }},
    {"acos", [](const Tensor& x, const Tensor&, const Tensor& g) { return -g * rsqrt(1 - x * x); }},
    {"atan", [](const Tensor& x, const Tensor&, const Tensor& g) { return g / (x * x + 1); }},
    {"sinh", [](const Tensor& x, const Tensor&, const Tensor& g) { return g * cosh(x); }},
    {"cosh", [](const Tensor& x, const Tensor&, const Tensor& g) { return g * sinh(x); }},
    {"tanh", tanh_gradient, DerivativeReads::Outputs},
    {"asinh", [](const Tensor& x, const Tensor&, const Tensor& g) { return g * rsqrt(x * x + 1); }},
    {"acosh", [](const Tensor& x, const Tensor&, const Tensor& g) { return g * rsqrt(x * x - 1); }},
    {"atanh", [](const Tensor& x, const Tensor&, const Tensor& g) { return g / (1 - x * x); }},
    {"erf", [](const Tensor& x, const Tensor&,
               const Tensor& g) { return g * exp(-(x * x)) * kTwoOverSqrtPi; }},
    {"erfc", [](const Tensor& x, const Tensor&,
                const Tensor& g) { return g * exp(-(x * x)) * -kTwoOverSqrtPi; }},
    {"erfinv",
     [](const Tensor&, const Tensor& y, const Tensor& g) {
       return g * exp(y * y) * kSqrtPiOverTwo;
     },
     DerivativeReads::Outputs},
    {"sigmoid", sigmoid_gradient, DerivativeReads::Outputs},
    {"reciprocal", [](const Tensor&, const Tensor& y, const Tensor& g) { return -g * y * y; },
     DerivativeReads::Outputs},
    {"square", [](const Tensor& x, const Tensor&, const Tensor& g) { return g * x * 2; }},
    {"floor", zero_gradient, DerivativeReads::Nothing},
    {"ceil", zero_gradient, DerivativeReads::Nothing},
    {"round", zero_gradient, DerivativeReads::Nothing},
    {"trunc", zero_gradient, DerivativeReads::Nothing},
    {"frac", [](const Tensor&, const Tensor&, const Tensor& g) { return g; },
     DerivativeReads::Nothing},
    // PyTorch's threshold_backward (a fused op): no gradient where the result is not positive.
    {"relu", relu_gradient, DerivativeReads::Outputs},
    {"silu", silu_gradient},
    {"mish",
     [](const Tensor& x, const Tensor&, const Tensor& g) {
       Tensor t = tanh(log1p(exp(x)));
       return g * (t + x * sigmoid(x) * (1 - t * t));
     }},
    {"hardsigmoid", [](const Tensor& x, const Tensor&,
                       const Tensor& g) { return g * ((x > -3) & (x < 3)) * (1.0 / 6.0); }},
    {"hardswish",
     [](const Tensor& x, const Tensor&, const Tensor& g) {
       return where(x < -3, 0.0, where(x <= 3, g * (x / 3 + 0.5), g));
     }},
};

}  // namespace

UnaryDerivativeDecl unary_derivative(std::string_view name) {
  for (const UnaryDerivative& d : kUnaryDerivatives) {
    if (d.name == name) {
      Formula f = d.formula;
      return {[f](const BackwardArgs& a) -> std::vector<Tensor> {
                return {f(a.inputs[0].to_tensor(), a.outputs[0], a.grad_outputs[0])};
              },
              d.reads};
    }
  }
  return {};
}

}  // namespace kiln::ops
