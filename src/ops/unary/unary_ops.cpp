// Elementwise unary ops without parameters (exp, sin, relu, floor, isnan, ...): one table, one
// declaration loop. Parameterized activations live in activation_ops.cpp.
#include "ops/samples.h"
#include "ops/unary/unary_decompositions.h"
#include "ops/unary/unary_kernels.h"

#include <kiln/ops/registry.h>
#include <kiln/ops/unary.h>

namespace kiln::ops {

cpu::KernelDispatch<UnaryKernel> unary_kernels;

DType unary_result_dtype(DType input, UnaryDTypeRule rule, const char* op) {
  switch (rule) {
    case UnaryDTypeRule::FloatPromote:
      return is_floating_point(input) ? input : default_float_dtype();
    case UnaryDTypeRule::FloatOnly:
      KILN_CHECK_T(TypeError, is_floating_point(input),
                   "{}: expected a floating point tensor, got {}", op, dtype_name(input));
      return input;
    case UnaryDTypeRule::Keep:
      return input;
    case UnaryDTypeRule::KeepNoBool:
    case UnaryDTypeRule::Square:
      if (input == DType::Bool) {
        if (rule == UnaryDTypeRule::Square) return DType::Int64;
        KILN_CHECK_T(TypeError, std::string_view(op) != "neg",
                     "neg: negation on a bool tensor is not supported; to invert a mask, use "
                     "logical_not() or bitwise_not()");
        throw TypeError(fmt::format("{}: bool tensors are not supported", op));
      }
      return input;
    case UnaryDTypeRule::IntegralOrBool:
      KILN_CHECK_T(TypeError, is_integral(input, /*include_bool=*/true),
                   "{}: expected an integral or bool tensor, got {}", op, dtype_name(input));
      return input;
    case UnaryDTypeRule::BoolResult:
      return DType::Bool;
  }
  return input;
}

std::vector<TensorMeta> unary_meta(const Tensor& self, UnaryDTypeRule rule, const char* op) {
  TensorMeta m;
  m.sizes = self.sym_sizes().vec();
  m.strides = layout_following_strides(self.sym_sizes(), std::span<const Tensor>(&self, 1));
  m.dtype = unary_result_dtype(self.dtype(), rule, op);
  m.device = self.device();
  return {m};
}

void run_unary(const Tensor& out, const Tensor& self, UnaryDTypeRule rule, UnaryOpId id,
               const UnaryParams& params, const char* op) {
  if (out.numel() == 0) return;
  const DType result = unary_result_dtype(self.dtype(), rule, op);
  // Bool-result ops read the input in its own dtype; the rest compute in the result dtype.
  const DType compute = rule == UnaryDTypeRule::BoolResult ? self.dtype() : result;
  auto iter = TensorIteratorConfig()
                  .add_output(out)
                  .add_input(self)
                  .compute_dtype(compute)
                  .output_dtype(result)
                  .op_name(op)
                  .build();
  unary_kernels(iter, id, params);
}

namespace {

struct UnaryDecl {
  const char* name;
  UnaryOpId id;
  UnaryDTypeRule rule;
  bool inplace;  // PyTorch has "name_"
  bool out;      // PyTorch has "name.out"
  // Sample domain (valid inputs for the op).
  double low = -3.0, high = 3.0;
};

using R = UnaryDTypeRule;
using U = UnaryOpId;
constexpr UnaryDecl kUnaryOps[] = {
    {"neg", U::Neg, R::KeepNoBool, true, true},
    {"abs", U::Abs, R::KeepNoBool, true, true},
    {"sign", U::Sign, R::Keep, true, true},
    {"exp", U::Exp, R::FloatPromote, true, true},
    {"exp2", U::Exp2, R::FloatPromote, true, true},
    {"expm1", U::Expm1, R::FloatPromote, true, true},
    {"log", U::Log, R::FloatPromote, true, true, 0.1, 5.0},
    {"log2", U::Log2, R::FloatPromote, true, true, 0.1, 5.0},
    {"log10", U::Log10, R::FloatPromote, true, true, 0.1, 5.0},
    {"log1p", U::Log1p, R::FloatPromote, true, true, -0.9, 5.0},
    {"sqrt", U::Sqrt, R::FloatPromote, true, true, 0.0, 5.0},
    {"rsqrt", U::Rsqrt, R::FloatPromote, true, true, 0.1, 5.0},
    {"sin", U::Sin, R::FloatPromote, true, true},
    {"cos", U::Cos, R::FloatPromote, true, true},
    {"tan", U::Tan, R::FloatPromote, true, true, -1.4, 1.4},
    {"asin", U::Asin, R::FloatPromote, true, true, -0.95, 0.95},
    {"acos", U::Acos, R::FloatPromote, true, true, -0.95, 0.95},
    {"atan", U::Atan, R::FloatPromote, true, true},
    {"sinh", U::Sinh, R::FloatPromote, true, true},
    {"cosh", U::Cosh, R::FloatPromote, true, true},
    {"tanh", U::Tanh, R::FloatPromote, true, true},
    {"asinh", U::Asinh, R::FloatPromote, true, true},
    {"acosh", U::Acosh, R::FloatPromote, true, true, 1.0, 5.0},
    {"atanh", U::Atanh, R::FloatPromote, true, true, -0.9, 0.9},
    {"erf", U::Erf, R::FloatPromote, true, true},
    {"erfc", U::Erfc, R::FloatPromote, true, true},
    {"erfinv", U::Erfinv, R::FloatPromote, true, true, -0.9, 0.9},
    {"sigmoid", U::Sigmoid, R::FloatPromote, true, true},
    {"reciprocal", U::Reciprocal, R::FloatPromote, true, true, 0.2, 3.0},
    {"square", U::Square, R::Square, true, true},
    {"floor", U::Floor, R::KeepNoBool, true, true},
    {"ceil", U::Ceil, R::KeepNoBool, true, true},
    {"round", U::Round, R::KeepNoBool, true, true},
    {"trunc", U::Trunc, R::KeepNoBool, true, true},
    {"frac", U::Frac, R::FloatOnly, true, true},
    {"relu", U::Relu, R::KeepNoBool, true, true},
    {"silu", U::Silu, R::FloatOnly, true, true},
    {"mish", U::Mish, R::FloatOnly, true, true},
    {"hardsigmoid", U::Hardsigmoid, R::FloatOnly, true, true},
    {"hardswish", U::Hardswish, R::FloatOnly, true, true},
    {"bitwise_not", U::BitwiseNot, R::IntegralOrBool, true, true},
    {"logical_not", U::LogicalNot, R::BoolResult, true, true},
    {"isnan", U::IsNan, R::BoolResult, false, true},
    {"isinf", U::IsInf, R::BoolResult, false, true},
    {"isfinite", U::IsFinite, R::BoolResult, false, false},
};

// Float32 samples over the op's domain, plus int64/bool inputs where the op accepts them.
std::vector<Sample> samples_for(const UnaryDecl& d) {
  std::vector<Sample> s;
  if (d.rule != R::IntegralOrBool) s = unary_samples(kFloat32, d.low, d.high);
  if (d.rule != R::FloatOnly) {
    s.push_back({{make_sample({3, 4}, kInt64, d.low, d.high + 1.0, 5)}, "int64"});
  }
  if (d.rule == R::IntegralOrBool || d.rule == R::BoolResult || d.rule == R::Keep ||
      d.rule == R::FloatPromote || d.rule == R::Square) {
    s.push_back({{make_sample({3, 4}, kBool, 0, 1, 6)}, "bool"});
  }
  if (d.rule == R::IntegralOrBool) {
    s.push_back(
        {{make_noncontiguous_sample({3, 5}, kInt32, -100, 100, 7)}, "non-contiguous int32"});
    s.push_back({{make_sample({}, kUInt8, 0, 255, 8)}, "0-dim uint8"});
  }
  return s;
}

}  // namespace

KILN_REGISTER_OPS(unary_ops) {
  for (const UnaryDecl& d : kUnaryOps) {
    const std::string schema = std::string(d.name) + "(Tensor self) -> Tensor";
    OpBuilder b(schema);
    std::move(b)
        .meta([d](const Stack& args) { return unary_meta(args[0].to_tensor(), d.rule, d.name); })
        .cpu([d](const Stack& args, const std::vector<Tensor>& out) {
          run_unary(out[0], args[0].to_tensor(), d.rule, d.id, {}, d.name);
        })
        .samples([d] { return samples_for(d); });
    if (has_unary_decomposition(d.id)) {
      std::move(b).decomposition([d](const Stack& args) {
        const Tensor& self = args[0].to_tensor();
        const DType result = unary_result_dtype(self.dtype(), d.rule, d.name);
        return std::vector<Tensor>{unary_decomposition(self, d.id, {}, result)};
      });
    }
    if (d.inplace) std::move(b).inplace_variant();
    if (d.out) std::move(b).out_variant();
    if (d.rule == R::IntegralOrBool || d.rule == R::BoolResult) {
      std::move(b).not_differentiable();
    } else {
      UnaryDerivativeDecl derivative = unary_derivative(d.name);
      std::move(b).derivative(derivative.fn, derivative.reads);
    }
    declare(std::move(b));
  }
}

}  // namespace kiln::ops

namespace kiln {

#define KILN_DEFINE_UNARY(name)                                      \
  Tensor name(const Tensor& self, const kiln::SourceLocation& loc) { \
    static const auto& op = ops::OpRegistry::instance().get(#name);  \
    return ops::call1(op, {self}, &loc);                             \
  }
KILN_UNARY_OPS(KILN_DEFINE_UNARY)
#undef KILN_DEFINE_UNARY

}  // namespace kiln
