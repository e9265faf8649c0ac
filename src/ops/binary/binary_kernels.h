#pragma once
// Per-capability kernels behind the elementwise binary and ternary ops
// (src/ops/binary/binary.kernel.cpp). The iterator has already converted inputs to the compute
// dtype; operand 0 is the output (the compute dtype, or bool for comparisons and logical ops).
#include "ops/cpu/capability.h"
#include "ops/iterator/tensor_iterator.h"

#include <optional>

namespace kiln::ops {

enum class BinaryOp {
  Add,  // a + alpha * b (sub is add with -alpha)
  Mul,
  Div,        // true division (floating compute dtype)
  DivTrunc,   // rounding_mode="trunc"
  DivFloor,   // rounding_mode="floor", floor_divide
  Remainder,  // sign follows the divisor (Python's %)
  Fmod,       // sign follows the dividend (C's fmod)
  Pow,
  Atan2,
  Maximum,  // NaN-propagating
  Minimum,
  Lerp,  // a + alpha * (b - a), alpha is the weight
  BitwiseAnd,
  BitwiseOr,
  BitwiseXor,
  LeftShift,
  RightShift,
  // Bool output:
  Eq,
  Ne,
  Lt,
  Le,
  Gt,
  Ge,
  LogicalAnd,
  LogicalOr,
  LogicalXor,
};

enum class TernaryOp {
  Where,    // cond (converted to the compute dtype) != 0 ? a : b
  Clamp,    // min(max(a, lo), hi), NaN in any operand gives NaN
  Lerp,     // a + w * (b - a)
  Addcmul,  // a + alpha * t1 * t2
  Addcdiv,  // a + alpha * t1 / t2
};

constexpr bool returns_bool(BinaryOp op) { return op >= BinaryOp::Eq; }

using BinaryKernel = void(TensorIterator& iter, BinaryOp op, const Scalar& alpha);
using TernaryKernel = void(TensorIterator& iter, TernaryOp op, const Scalar& alpha);
// clamp with Scalar bounds: a one-input iterator; absent bounds are not applied.
using ClampScalarKernel = void(TensorIterator& iter, const std::optional<Scalar>& lo,
                               const std::optional<Scalar>& hi);
extern cpu::KernelDispatch<BinaryKernel> binary_kernels;
extern cpu::KernelDispatch<TernaryKernel> ternary_kernels;
extern cpu::KernelDispatch<ClampScalarKernel> clamp_scalar_kernels;

}  // namespace kiln::ops
