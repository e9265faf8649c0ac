#include "ops/unary/unary_decompositions.h"

#include <kiln/ops/binary.h>
#include <kiln/ops/creation.h>
#include <kiln/ops/unary.h>

#include <cmath>
#include <limits>
#include <numbers>

namespace kiln::ops {
namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();

// The kernels compute 16-bit floats in float32.
DType opmath(DType d) { return d == DType::Float16 || d == DType::BFloat16 ? DType::Float32 : d; }

// min(max(x, lo), hi), NaN propagating as the kernels' clamp does (hi wins when lo > hi).
Tensor clamp_between(const Tensor& x, const Scalar& lo, const Scalar& hi) {
  return minimum(maximum(x, lo), hi);
}

// A bound or parameter as the kernel casts it to an integral dtype's values.
Scalar as_dtype_scalar(double v, DType d) {
  return is_floating_point(d) ? Scalar(v) : Scalar(static_cast<int64_t>(v));
}

// The bool-result predicates read self in its own dtype: integers are never NaN or infinite.
Tensor predicate(const Tensor& self, UnaryOpId id) {
  const bool floating = is_floating_point(self.dtype());
  switch (id) {
    case UnaryOpId::LogicalNot:
      return self == Scalar(0);  // NaN is truthy, as in PyTorch
    case UnaryOpId::IsNan:
      return floating ? self != self
                      : full(self.sizes(), false, TensorOptions(DType::Bool).device(self.device()));
    case UnaryOpId::IsInf:
      return floating ? abs(self) == kInf
                      : full(self.sizes(), false, TensorOptions(DType::Bool).device(self.device()));
    case UnaryOpId::IsFinite:
      return floating ? abs(self) < kInf
                      : full(self.sizes(), true, TensorOptions(DType::Bool).device(self.device()));
    default:
      KILN_FAIL("internal error: unary op {} is no predicate", static_cast<int>(id));
  }
}

// The function on x, already in the compute dtype.
Tensor compute(const Tensor& x, UnaryOpId id, const UnaryParams& p) {
  const DType d = x.dtype();
  switch (id) {
    case UnaryOpId::Sigmoid:
      return 1.0 / (exp(-x) + 1.0);
    case UnaryOpId::Reciprocal:
      return 1.0 / x;
    case UnaryOpId::Square:
      return x * x;
    case UnaryOpId::Frac:
      return x - trunc(x);
    case UnaryOpId::Relu:
      return where(x < Scalar(0), Scalar(0), x);  // NaN passes through
    case UnaryOpId::Silu:
      return x / (exp(-x) + 1.0);
    case UnaryOpId::Mish:
      return x * tanh(log1p(exp(x)));
    case UnaryOpId::Hardsigmoid:
      return clamp_between(x + 3.0, 0.0, 6.0) / 6.0;
    case UnaryOpId::Hardswish:
      return x * clamp_between(x + 3.0, 0.0, 6.0) / 6.0;
    case UnaryOpId::GeluErf:
      // x/2 (1 + erf(x / sqrt 2)), PyTorch's formula (erfc(-z) would avoid the cancellation
      // for z < 0, but its float32 form costs two exps where erf's costs one: compiled GELU ran
      // at twice eager's time; the cancellation costs at most an ulp of 1 times x/2).
      return x * 0.5 * (erf(x * (0.5 * std::numbers::sqrt2)) + 1.0);
    case UnaryOpId::GeluTanh: {
      const double beta = std::numbers::sqrt2 * std::numbers::inv_sqrtpi;  // sqrt(2 / pi)
      const Tensor inner = (x + x * x * x * 0.044715) * beta;
      return x * 0.5 * (tanh(inner) + 1.0);
    }
    case UnaryOpId::Hardtanh:
      return clamp_between(x, as_dtype_scalar(p.a, d), as_dtype_scalar(p.b, d));
    case UnaryOpId::LeakyRelu:
      return where(x > Scalar(0), x, x * p.a);
    case UnaryOpId::Elu:
      return where(x <= Scalar(0), expm1(x * p.c) * (p.a * p.b), x * p.b);
    case UnaryOpId::Softplus: {
      const Tensor bx = x * p.a;
      return where(bx > p.b, x, log1p(exp(bx)) / p.a);
    }
    case UnaryOpId::Logit: {
      const Tensor z = p.a < 0 ? x : clamp_between(x, p.a, 1 - p.a);
      return log(z / (1.0 - z));
    }
    case UnaryOpId::RoundDecimals: {
      const auto decimals = static_cast<int64_t>(p.a);
      const double ten_pow = std::pow(10.0, static_cast<double>(std::abs(decimals)));
      return decimals < 0 ? round(x / ten_pow) * ten_pow : round(x * ten_pow) / ten_pow;
    }
    case UnaryOpId::NanToNum: {
      if (!is_floating_point(d)) return x.to(d, /*copy=*/true);
      Tensor r = where(x != x, p.a, x);
      r = where(x == kInf, p.b, r);
      return where(x == -kInf, p.c, r);
    }
    default:
      KILN_FAIL("internal error: unary op {} has no decomposition", static_cast<int>(id));
  }
}

}  // namespace

bool has_unary_decomposition(UnaryOpId id) {
  switch (id) {
    case UnaryOpId::Sigmoid:
    case UnaryOpId::Reciprocal:
    case UnaryOpId::Square:
    case UnaryOpId::Frac:
    case UnaryOpId::Relu:
    case UnaryOpId::Silu:
    case UnaryOpId::Mish:
    case UnaryOpId::Hardsigmoid:
    case UnaryOpId::Hardswish:
    case UnaryOpId::GeluErf:
    case UnaryOpId::GeluTanh:
    case UnaryOpId::Hardtanh:
    case UnaryOpId::LeakyRelu:
    case UnaryOpId::Elu:
    case UnaryOpId::Softplus:
    case UnaryOpId::Logit:
    case UnaryOpId::RoundDecimals:
    case UnaryOpId::NanToNum:
    case UnaryOpId::LogicalNot:
    case UnaryOpId::IsNan:
    case UnaryOpId::IsInf:
    case UnaryOpId::IsFinite:
      return true;
    default:
      return false;
  }
}

Tensor unary_decomposition(const Tensor& self, UnaryOpId id, const UnaryParams& params,
                           DType result) {
  switch (id) {
    case UnaryOpId::LogicalNot:
    case UnaryOpId::IsNan:
    case UnaryOpId::IsInf:
    case UnaryOpId::IsFinite:
      return predicate(self, id);
    default:
      break;
  }
  const DType compute_dtype = opmath(result);
  return compute(self.to(compute_dtype), id, params).to(result);
}

}  // namespace kiln::ops
