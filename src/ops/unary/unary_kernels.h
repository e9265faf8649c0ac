#pragma once
// The per-capability kernel behind every elementwise unary op (src/ops/unary/unary.kernel.cpp),
// and the shared meta/impl helpers the unary op declarations use (src/ops/unary/unary_ops.cpp).
#include "ops/cpu/capability.h"
#include "ops/iterator/tensor_iterator.h"

#include <kiln/ops/registry.h>

namespace kiln::ops {

// The function a unary kernel computes. Parameterized ones read UnaryParams.
enum class UnaryOpId {
  Neg,
  Abs,
  Sign,
  Exp,
  Exp2,
  Expm1,
  Log,
  Log2,
  Log10,
  Log1p,
  Sqrt,
  Rsqrt,
  Sin,
  Cos,
  Tan,
  Asin,
  Acos,
  Atan,
  Sinh,
  Cosh,
  Tanh,
  Asinh,
  Acosh,
  Atanh,
  Erf,
  Erfc,
  Erfinv,
  Sigmoid,
  Reciprocal,
  Square,
  Floor,
  Ceil,
  Round,
  Trunc,
  Frac,
  Relu,
  Silu,
  Mish,
  Hardsigmoid,
  Hardswish,
  GeluErf,
  GeluTanh,
  Hardtanh,       // a = min_val, b = max_val (relu6 is hardtanh(0, 6))
  LeakyRelu,      // a = negative_slope
  Elu,            // a = alpha, b = scale, c = input_scale (selu is elu with fixed constants)
  Softplus,       // a = beta, b = threshold
  Logit,          // a = eps (negative: no clamping)
  RoundDecimals,  // a = decimals
  NanToNum,       // a = nan, b = posinf, c = neginf replacements
  BitwiseNot,
  // Ops with a bool result: the kernel's input keeps its dtype.
  LogicalNot,
  IsNan,
  IsInf,
  IsFinite,
};

struct UnaryParams {
  double a = 0, b = 0, c = 0;
};

// Computes op from iter's input (operand 1) into its output (operand 0). For every op but the
// bool-result ones, both operands have the compute dtype; for those the output is bool.
using UnaryKernel = void(TensorIterator& iter, UnaryOpId op, const UnaryParams& params);
extern cpu::KernelDispatch<UnaryKernel> unary_kernels;

// How an op's result dtype follows its input's, as in PyTorch.
enum class UnaryDTypeRule {
  FloatPromote,    // exp, sin, ...: floating stays, integral and bool compute in float32
  FloatOnly,       // gelu, silu, frac, ...: floating only (TypeError otherwise)
  Keep,            // sign, nan_to_num: any dtype, kept
  KeepNoBool,      // neg, abs, relu, floor, ...: numeric dtypes kept, bool is a TypeError
  Square,          // like KeepNoBool, but bool squares to int64 (pow(bool, 2) in PyTorch)
  IntegralOrBool,  // bitwise_not
  BoolResult,      // isnan, logical_not, ...: any input, bool output
};

// The result dtype for an input dtype; raises kiln::TypeError naming op for unsupported ones.
DType unary_result_dtype(DType input, UnaryDTypeRule rule, const char* op);
// One output with self's sizes and layout, dtype by rule.
std::vector<TensorMeta> unary_meta(const Tensor& self, UnaryDTypeRule rule, const char* op);
// Runs the kernel for op writing out (any dtype the result can be cast to).
void run_unary(const Tensor& out, const Tensor& self, UnaryDTypeRule rule, UnaryOpId id,
               const UnaryParams& params, const char* op);
// The derivative formula of a differentiable unary op (unary_derivatives.cpp); fn null if none.
struct UnaryDerivativeDecl {
  DerivativeFn fn;
  DerivativeReads reads = DerivativeReads::Inputs;
};
UnaryDerivativeDecl unary_derivative(std::string_view name);

}  // namespace kiln::ops
