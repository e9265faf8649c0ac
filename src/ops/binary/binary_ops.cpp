// Arithmetic binary ops: add, sub, rsub, mul, div, floor_divide, remainder, fmod, pow, atan2,
// maximum, minimum, with PyTorch's type promotion and dtype rules.
#include "ops/binary/binary_samples.h"
#include "ops/binary/elementwise_common.h"

#include <kiln/ops/binary.h>
#include <kiln/ops/creation.h>
#include <kiln/ops/registry.h>
#include <kiln/ops/unary.h>

#include <cmath>

#include <fmt/format.h>

namespace kiln::ops {
namespace {

BinaryPlan promoted(BinaryOp kind, const Stack& args) {
  const Tensor& a = args[0].to_tensor();
  const Tensor& b = args[1].to_tensor();
  DType d = result_type(a, b);
  return {kind, a, b, d, d};
}

// PyTorch's alpha_check.
void check_alpha(const char* op, DType result, const Scalar& alpha) {
  KILN_CHECK(!alpha.is_bool() || result == DType::Bool,
             "{}: Boolean alpha only supported for Boolean results.", op);
  KILN_CHECK(is_floating_point(result) || !alpha.is_floating_point(),
             "{}: For integral input tensors, argument alpha must not be a floating point number.",
             op);
}

// PyTorch's sub_check.
void check_sub(const char* op, const Tensor& a, const Tensor& b) {
  bool ab = a.dtype() == DType::Bool, bb = b.dtype() == DType::Bool;
  KILN_CHECK_T(TypeError, !(ab && bb),
               "{}: Subtraction, the `-` operator, with two bool tensors is not supported. Use "
               "the `^` or `logical_xor()` operator instead.",
               op);
  KILN_CHECK_T(TypeError, !ab && !bb,
               "{}: Subtraction, the `-` operator, with a bool tensor is not supported. If you "
               "are trying to invert a mask, use the `~` or `logical_not()` operator instead.",
               op);
}

Scalar negated(const Scalar& s) {
  return s.is_floating_point() ? Scalar(-s.to_double()) : Scalar(-s.to_int());
}

BinaryPlan add_plan(const Stack& args) {
  BinaryPlan p = promoted(BinaryOp::Add, args);
  p.alpha = args[2].to_scalar();
  check_alpha("add", p.result, p.alpha);
  return p;
}

// a - alpha * b is a + (-alpha) * b.
BinaryPlan subtract(const char* op, const Tensor& a, const Tensor& b, const Scalar& alpha) {
  check_sub(op, a, b);
  DType d = result_type(a, b);
  check_alpha(op, d, alpha);
  return {BinaryOp::Add, a, b, d, d, negated(alpha)};
}
BinaryPlan sub_plan(const Stack& args) {
  return subtract("sub", args[0].to_tensor(), args[1].to_tensor(), args[2].to_scalar());
}
// rsub(self, other, alpha) = other - alpha * self.
BinaryPlan rsub_plan(const Stack& args) {
  return subtract("rsub", args[1].to_tensor(), args[0].to_tensor(), args[2].to_scalar());
}

BinaryPlan mul_plan(const Stack& args) { return promoted(BinaryOp::Mul, args); }

// Integral (and bool) inputs divide in the default float dtype.
BinaryPlan true_divide(BinaryOp kind, const Stack& args) {
  BinaryPlan p = promoted(kind, args);
  if (!is_floating_point(p.compute)) p.compute = p.result = default_float_dtype();
  return p;
}

BinaryPlan no_bool(BinaryOp kind, const Stack& args, const char* op) {
  BinaryPlan p = promoted(kind, args);
  if (p.compute == DType::Bool) unsupported(op, p.compute);
  return p;
}

BinaryPlan div_plan(const Stack& args) {
  std::optional<std::string> mode = args[2].to_optional_string();
  if (!mode) return true_divide(BinaryOp::Div, args);
  KILN_CHECK(*mode == "trunc" || *mode == "floor",
             "div expected rounding_mode to be one of None, 'trunc', or 'floor' but found '{}'",
             *mode);
  return no_bool(*mode == "trunc" ? BinaryOp::DivTrunc : BinaryOp::DivFloor, args, "div");
}
BinaryPlan floor_divide_plan(const Stack& args) {
  return no_bool(BinaryOp::DivFloor, args, "floor_divide");
}
BinaryPlan remainder_plan(const Stack& args) {
  return no_bool(BinaryOp::Remainder, args, "remainder");
}
BinaryPlan fmod_plan(const Stack& args) { return no_bool(BinaryOp::Fmod, args, "fmod"); }

BinaryPlan pow_plan(const Stack& args) {
  BinaryPlan p = no_bool(BinaryOp::Pow, args, "pow");
  // A negative integer Python-number exponent is rejected (a tensor exponent truncates instead).
  const Tensor& e = p.b;
  if (is_integral(p.result) && e.impl()->is_wrapped_number() && !e.device().is_meta()) {
    KILN_CHECK(e.item().to_int() >= 0, "pow: Integers to negative integer powers are not allowed.");
  }
  return p;
}
BinaryPlan pow_scalar_exponent_plan(const Stack& args) {
  const Tensor& self = args[0].to_tensor();
  return pow_plan({self, wrapped_scalar(args[1].to_scalar(), self.device())});
}
BinaryPlan pow_scalar_base_plan(const Stack& args) {
  const Tensor& exponent = args[1].to_tensor();
  return pow_plan({wrapped_scalar(args[0].to_scalar(), exponent.device()), exponent});
}

BinaryPlan atan2_plan(const Stack& args) { return true_divide(BinaryOp::Atan2, args); }
BinaryPlan maximum_plan(const Stack& args) { return promoted(BinaryOp::Maximum, args); }
BinaryPlan minimum_plan(const Stack& args) { return promoted(BinaryOp::Minimum, args); }

std::vector<Sample> arithmetic_samples(const Stack& extra = {}) {
  return concat({promoting_samples(kFloat32, -3, 3, Scalar(2.5), kFloat64, extra),
                 promoting_samples(kInt64, -5, 5, Scalar(3), kInt32, extra),
                 binary_samples(kFloat64, -3, 3, extra)});
}

// Operands equal in half their elements (maximum/minimum split the gradient there).
std::vector<Sample> tie_samples() {
  Tensor a = make_sample({3, 4}, kFloat32, -3.0, 3.0, 41);
  Tensor b = make_sample({3, 4}, kFloat32, -3.0, 3.0, 42);
  b.view({-1}).narrow(0, 0, 6).copy_(a.view({-1}).narrow(0, 0, 6));
  return {{{a, b}, "ties"}};
}

// Derivatives (BackwardArgs: inputs as called, outputs, one gradient per output). The engine
// sums a gradient over broadcast dims and casts it to its input's dtype.
// A Python-number operand (x * 2, x ** 2) never needs a gradient: formulas skip its passes.
bool constant(const Tensor& t) { return t.impl()->is_wrapped_number(); }

std::vector<Tensor> add_derivative(const BackwardArgs& a) {
  const Tensor& g = a.grad_outputs[0];
  const Scalar alpha = a.inputs[2].to_scalar();
  return {g, alpha.to<double>() == 1.0 ? g : g * alpha};
}
std::vector<Tensor> sub_derivative(const BackwardArgs& a) {
  const Tensor& g = a.grad_outputs[0];
  return {g, g * -a.inputs[2].to_scalar().to<double>()};
}
std::vector<Tensor> mul_derivative(const BackwardArgs& a) {
  const Tensor& g = a.grad_outputs[0];
  return {g * a.input(1), constant(a.input(1)) ? Tensor() : g * a.input(0)};
}
std::vector<Tensor> div_derivative(const BackwardArgs& a) {
  const Tensor& g = a.grad_outputs[0];
  if (!a.inputs[2].is_none()) {
    // Rounded quotients are piecewise constant: zero gradient, as PyTorch.
    return {zeros_like(a.input(0)), zeros_like(a.input(1))};
  }
  const Tensor& other = a.input(1);
  if (constant(other)) return {g / other, Tensor()};
  return {g / other, -g * a.input(0) / (other * other)};
}
// rsub(self, other, alpha) = other - alpha * self.
std::vector<Tensor> rsub_derivative(const BackwardArgs& a) {
  const Tensor& g = a.grad_outputs[0];
  return {g * -a.inputs[2].to_scalar().to<double>(), g};
}
// self - q * other with q = self / other rounded (floor for remainder, trunc for fmod): the
// quotient is piecewise constant, so d/dself = 1 and d/dother = -q, as in PyTorch.
DerivativeFn rounded_remainder_derivative(const char* rounding) {
  return [rounding](const BackwardArgs& a) -> std::vector<Tensor> {
    const Tensor& g = a.grad_outputs[0];
    if (constant(a.input(1))) return {g, Tensor()};
    return {g, -g * div(a.input(0), a.input(1), rounding)};
  };
}
// d(x^e)/dx = e x^(e-1), taken as 0 where e == 0 (so 0^0 has no NaN gradient), as PyTorch.
Tensor pow_self_gradient(const Tensor& g, const Tensor& self, const Tensor& exponent) {
  return where(exponent == 0.0, 0.0, g * exponent * pow(self, exponent - 1.0));
}
// d(b^e)/de = b^e log(b), taken as 0 where b == 0 and e >= 0 (PyTorch's convention).
Tensor pow_exponent_gradient(const Tensor& g, const Tensor& base, const Tensor& exponent,
                             const Tensor& result) {
  return where((base == 0.0) & (exponent >= 0.0), 0.0, g * result * log(base));
}
// x ** e for a number e: e x^(e-1) in as few passes as e allows.
Tensor pow_number_gradient(const Tensor& g, const Tensor& self, double e) {
  if (e == 0.0) return zeros_like(g);
  if (e == 1.0) return g;
  if (e == 2.0) return g * self * 2.0;
  return g * (pow(self, e - 1.0) * e);
}
std::vector<Tensor> pow_derivative(const BackwardArgs& a) {
  const Tensor& g = a.grad_outputs[0];
  if (constant(a.input(1)))
    return {pow_number_gradient(g, a.input(0), a.input(1).item<double>()), Tensor()};
  return {pow_self_gradient(g, a.input(0), a.input(1)),
          pow_exponent_gradient(g, a.input(0), a.input(1), a.outputs[0])};
}
std::vector<Tensor> pow_scalar_exponent_derivative(const BackwardArgs& a) {
  const Tensor& g = a.grad_outputs[0];
  return {pow_number_gradient(g, a.input(0), a.inputs[1].to_scalar().to<double>())};
}
std::vector<Tensor> pow_scalar_base_derivative(const BackwardArgs& a) {
  const Tensor& g = a.grad_outputs[0];
  const double base = a.inputs[0].to_scalar().to<double>();
  const Tensor& result = a.outputs[0];
  if (base == 0.0) return {where(a.input(1) >= 0.0, 0.0, g * result * std::log(base))};
  return {g * result * std::log(base)};
}
std::vector<Tensor> atan2_derivative(const BackwardArgs& a) {
  const Tensor& g = a.grad_outputs[0];
  const Tensor& y = a.input(0);
  const Tensor& x = a.input(1);
  const Tensor scale = g / (y * y + x * x);
  return {scale * x, scale * -y};
}
// maximum/minimum: the gradient goes to the chosen operand and is split evenly between tied
// ones (PyTorch's convention); a NaN operand passes it to both.
DerivativeFn extremum_derivative(bool is_max) {
  return [is_max](const BackwardArgs& a) -> std::vector<Tensor> {
    const Tensor& g = a.grad_outputs[0];
    const Tensor& self = a.input(0);
    const Tensor& other = a.input(1);
    const Tensor split = where(self == other, g * 0.5, g);
    const Tensor self_loses = is_max ? self < other : self > other;
    const Tensor other_loses = is_max ? self > other : self < other;
    if (constant(other)) return {split.masked_fill(self_loses, 0.0), Tensor()};
    return {split.masked_fill(self_loses, 0.0), split.masked_fill(other_loses, 0.0)};
  };
}

// ---- decompositions (run after the plans' checks) ----

// rsub(self, other, alpha) = other - alpha * self.
std::vector<Tensor> rsub_decomposition(const Stack& args) {
  return {sub(args[1].to_tensor(), args[0].to_tensor(), args[2].to_scalar())};
}
std::vector<Tensor> floor_divide_decomposition(const Stack& args) {
  return {div(args[0].to_tensor(), args[1].to_tensor(), "floor")};
}
// The Scalar forms of pow are pow.Tensor_Tensor with the number as a wrapped scalar.
std::vector<Tensor> pow_scalar_exponent_decomposition(const Stack& args) {
  const Tensor& self = args[0].to_tensor();
  return {pow(self, wrapped_scalar(args[1].to_scalar(), self.device()))};
}
std::vector<Tensor> pow_scalar_base_decomposition(const Stack& args) {
  const Tensor& exponent = args[1].to_tensor();
  return {pow(wrapped_scalar(args[0].to_scalar(), exponent.device()), exponent)};
}

}  // namespace

KILN_REGISTER_OPS(binary_arithmetic) {
  declare_binary({"add(Tensor self, Tensor other, *, Scalar alpha=1) -> Tensor", add_plan, true,
                  true, true,
                  [] {
                    return concat({arithmetic_samples(), arithmetic_samples({Scalar(2)}),
                                   binary_samples(kBool)});
                  },
                  add_derivative, DerivativeReads::Nothing});
  declare_binary({"sub(Tensor self, Tensor other, *, Scalar alpha=1) -> Tensor", sub_plan, true,
                  true, true,
                  [] {
                    return concat({arithmetic_samples(), arithmetic_samples({Scalar(-3)})});
                  },
                  sub_derivative, DerivativeReads::Nothing});
  declare_binary({"rsub(Tensor self, Tensor other, *, Scalar alpha=1) -> Tensor", rsub_plan, false,
                  false, true,
                  [] {
                    return concat({arithmetic_samples(), arithmetic_samples({Scalar(2)})});
                  },
                  rsub_derivative, DerivativeReads::Nothing, rsub_decomposition});
  declare_binary({"mul(Tensor self, Tensor other) -> Tensor", mul_plan, true, true, true,
                  [] {
                    return concat({arithmetic_samples(), binary_samples(kBool)});
                  },
                  mul_derivative});
  declare_binary({"div(Tensor self, Tensor other, *, str? rounding_mode=None) -> Tensor", div_plan,
                  true, true, true,
                  [] {
                    return concat({division_samples(kFloat32), division_samples(kInt64),
                                   division_samples(kFloat32, {"trunc"}),
                                   division_samples(kFloat32, {"floor"}),
                                   division_samples(kInt32, {"trunc"}),
                                   division_samples(kInt64, {"floor"})});
                  },
                  div_derivative});
  declare_binary({"floor_divide(Tensor self, Tensor other) -> Tensor", floor_divide_plan, true,
                  true, false,
                  [] {
                    return concat({division_samples(kFloat32), division_samples(kInt64)});
                  },
                  nullptr, DerivativeReads::Inputs, floor_divide_decomposition});
  declare_binary({"remainder(Tensor self, Tensor other) -> Tensor", remainder_plan, true, true,
                  true,
                  [] {
                    return concat({division_samples(kFloat32), division_samples(kInt32)});
                  },
                  rounded_remainder_derivative("floor")});
  declare_binary({"fmod(Tensor self, Tensor other) -> Tensor", fmod_plan, true, true, true,
                  [] {
                    return concat({division_samples(kFloat32), division_samples(kInt64)});
                  },
                  rounded_remainder_derivative("trunc")});
  // aten's pow.Tensor_Tensor; the Tensor/Scalar forms below share its plan.
  declare_binary(
      {"pow(Tensor self, Tensor exponent) -> Tensor", pow_plan, true, true, true,
       [] {
         std::vector<Sample> numbers;
         for (double e : {2.0, 3.5, 0.0}) {
           numbers.push_back({{make_sample({3, 4}, kFloat32, 0.5, 3.0, 43), wrapped_scalar(e)},
                              fmt::format("wrapped exponent {}", e)});
         }
         numbers.push_back({{make_sample({3, 4}, kFloat64, -3.0, 3.0, 44), wrapped_scalar(2)},
                            "signed ** wrapped int 2"});
         return concat(
             {binary_samples(kFloat32, 0.5, 3.0), binary_samples(kInt64, 0.0, 4.0), numbers});
       },
       pow_derivative, DerivativeReads::InputsAndOutputs});
  declare_binary({"pow.Tensor_Scalar(Tensor self, Scalar exponent) -> Tensor",
                  pow_scalar_exponent_plan, true, false, true,
                  [] {
                    return std::vector<Sample>{
                        {{make_sample({3, 4}, kFloat32, 0.5, 3.0), Scalar(2.5)}, "float ** 2.5"},
                        {{make_sample({3, 4}, kInt64, -3, 3), Scalar(3)}, "int ** 3"},
                        {{make_sample({3, 4}, kInt32, 0, 3), Scalar(0.5)}, "int ** 0.5"},
                        {{make_sample({3, 4}, kFloat32, -3.0, 3.0), Scalar(3)}, "signed ** 3"},
                        {{make_sample({3, 4}, kFloat32, 0.5, 3.0), Scalar(-1.5)}, "float ** -1.5"},
                        {{make_sample({3, 4}, kFloat32), Scalar(0)}, "float ** 0"}};
                  },
                  pow_scalar_exponent_derivative, DerivativeReads::Inputs,
                  pow_scalar_exponent_decomposition});
  declare_binary({"pow.Scalar(Scalar self, Tensor exponent) -> Tensor", pow_scalar_base_plan, false,
                  false, true,
                  [] {
                    return std::vector<Sample>{
                        {{Scalar(2.0), make_sample({3, 4}, kFloat32)}, "2.0 ** float"},
                        {{Scalar(3), make_sample({3, 4}, kInt64, 0, 4)}, "3 ** int"},
                        {{Scalar(0.5), make_sample({3, 4}, kFloat64)}, "0.5 ** float64"}};
                  },
                  pow_scalar_base_derivative, DerivativeReads::InputsAndOutputs,
                  pow_scalar_base_decomposition});
  declare_binary({"atan2(Tensor self, Tensor other) -> Tensor", atan2_plan, true, true, true,
                  [] {
                    return concat({arithmetic_samples(), binary_samples(kInt32)});
                  },
                  atan2_derivative});
  declare_binary({"maximum(Tensor self, Tensor other) -> Tensor", maximum_plan, false, true, true,
                  [] {
                    return concat({arithmetic_samples(), binary_samples(kBool), tie_samples()});
                  },
                  extremum_derivative(true)});
  declare_binary({"minimum(Tensor self, Tensor other) -> Tensor", minimum_plan, false, true, true,
                  [] {
                    return concat({arithmetic_samples(), binary_samples(kBool), tie_samples()});
                  },
                  extremum_derivative(false)});
}

}  // namespace kiln::ops

namespace kiln {
namespace {
using ops::op_named;
Tensor wrap(const Scalar& s, const Tensor& like) { return wrapped_scalar(s, like.device()); }
std::optional<std::string> mode_arg(std::optional<std::string_view> m) {
  return m ? std::optional<std::string>(std::string(*m)) : std::nullopt;
}
}  // namespace

Tensor add(const Tensor& self, const Tensor& other, const Scalar& alpha,
           const kiln::SourceLocation& loc) {
  static const auto& o = op_named("add");
  return ops::call1(o, {self, other, alpha}, &loc);
}
Tensor add(const Tensor& self, const Scalar& other, const Scalar& alpha,
           const kiln::SourceLocation& loc) {
  return add(self, wrap(other, self), alpha, loc);
}
Tensor sub(const Tensor& self, const Tensor& other, const Scalar& alpha,
           const kiln::SourceLocation& loc) {
  static const auto& o = op_named("sub");
  return ops::call1(o, {self, other, alpha}, &loc);
}
Tensor sub(const Tensor& self, const Scalar& other, const Scalar& alpha,
           const kiln::SourceLocation& loc) {
  return sub(self, wrap(other, self), alpha, loc);
}
Tensor rsub(const Tensor& self, const Scalar& other, const Scalar& alpha,
            const kiln::SourceLocation& loc) {
  static const auto& o = op_named("rsub");
  return ops::call1(o, {self, wrap(other, self), alpha}, &loc);
}
Tensor div(const Tensor& self, const Tensor& other, std::optional<std::string_view> rounding_mode,
           const kiln::SourceLocation& loc) {
  ops::CallSiteScope call_site(&loc);
  static const auto& o = op_named("div");
  return ops::call1(o, {self, other, mode_arg(rounding_mode)}, &loc);
}
Tensor div(const Tensor& self, const Scalar& other, std::optional<std::string_view> rounding_mode,
           const kiln::SourceLocation& loc) {
  return div(self, wrap(other, self), rounding_mode, loc);
}
Tensor pow(const Scalar& self, const Tensor& exponent, const kiln::SourceLocation& loc) {
  static const auto& o = op_named("pow.Scalar");
  return ops::call1(o, {self, exponent}, &loc);
}

// The two-argument ops (declared with KILN_BINARY_OPS in binary.h); Scalar operands are
// wrapped numbers.
#define KILN_DEFINE_BINARY(name)                                                          \
  Tensor name(const Tensor& self, const Tensor& other, const kiln::SourceLocation& loc) { \
    static const auto& o = op_named(#name);                                               \
    return ops::call1(o, {self, other}, &loc);                                            \
  }                                                                                       \
  Tensor name(const Tensor& self, const Scalar& other, const kiln::SourceLocation& loc) { \
    return name(self, wrap(other, self), loc);                                            \
  }
KILN_BINARY_OPS(KILN_DEFINE_BINARY)
#undef KILN_DEFINE_BINARY

}  // namespace kiln

namespace kiln::ops {
cpu::KernelDispatch<BinaryKernel> binary_kernels;
cpu::KernelDispatch<TernaryKernel> ternary_kernels;
cpu::KernelDispatch<ClampScalarKernel> clamp_scalar_kernels;
}  // namespace kiln::ops
