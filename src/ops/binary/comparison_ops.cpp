// Comparisons (eq, ne, lt, le, gt, ge), logical_and/or/xor and the bitwise ops and shifts.
// Comparisons compare in the promoted dtype and return bool.
#include "ops/binary/binary_samples.h"
#include "ops/binary/elementwise_common.h"

#include <kiln/ops/binary.h>

namespace kiln::ops {
namespace {

BinaryPlan bool_result(BinaryOp kind, const Stack& args) {
  const Tensor& a = args[0].to_tensor();
  const Tensor& b = args[1].to_tensor();
  return {kind, a, b, result_type(a, b), DType::Bool};
}

template <BinaryOp kind>
BinaryPlan comparison_plan(const Stack& args) {
  return bool_result(kind, args);
}

// Bitwise ops take integral and bool tensors; shifts take integral ones only.
template <BinaryOp kind>
BinaryPlan bitwise_plan(const Stack& args) {
  const Tensor& a = args[0].to_tensor();
  const Tensor& b = args[1].to_tensor();
  DType d = result_type(a, b);
  constexpr bool shift = kind == BinaryOp::LeftShift || kind == BinaryOp::RightShift;
  if (!is_integral(d, /*include_bool=*/!shift)) {
    unsupported(kind == BinaryOp::BitwiseAnd   ? "bitwise_and"
                : kind == BinaryOp::BitwiseOr  ? "bitwise_or"
                : kind == BinaryOp::BitwiseXor ? "bitwise_xor"
                : kind == BinaryOp::LeftShift  ? "bitwise_left_shift"
                                               : "bitwise_right_shift",
                d);
  }
  return {kind, a, b, d, d};
}

std::vector<Sample> comparison_samples() {
  std::vector<Sample> s =
      concat({promoting_samples(kFloat32, -2, 2, Scalar(0.5), kInt64),
              promoting_samples(kInt32, -3, 3, Scalar(1), kInt64), binary_samples(kBool)});
  // Equal elements, so eq/le/ge see true results.
  Tensor t = make_sample({4, 5}, kFloat32, -2, 2, 41);
  s.push_back({{t, t}, "identical operands"});
  return s;
}

std::vector<Sample> bitwise_samples() {
  return concat({promoting_samples(kInt32, -50, 50, Scalar(6), kInt64),
                 binary_samples(kUInt8, 0, 255), binary_samples(kBool)});
}

std::vector<Sample> shift_samples() {
  return concat(
      {binary_samples(kInt32, 0, 8), binary_samples(kInt64, 0, 40), binary_samples(kUInt8, 0, 8)});
}

struct Named {
  const char* schema;
  PlanFn plan;
  DecompositionFn decomposition = nullptr;
};

// logical_and/or/xor: the bitwise op on the operands' truth values (x != 0; NaN is true).
DecompositionFn logical_decomposition(BinaryOp kind) {
  return [kind](const Stack& args) -> std::vector<Tensor> {
    const Tensor a = args[0].to_tensor() != Scalar(0);
    const Tensor b = args[1].to_tensor() != Scalar(0);
    if (kind == BinaryOp::LogicalAnd) return {a & b};
    if (kind == BinaryOp::LogicalOr) return {a | b};
    return {a ^ b};
  };
}

}  // namespace

KILN_REGISTER_OPS(binary_comparison) {
  for (const Named& n : {
           Named{"eq(Tensor self, Tensor other) -> Tensor", comparison_plan<BinaryOp::Eq>},
           Named{"ne(Tensor self, Tensor other) -> Tensor", comparison_plan<BinaryOp::Ne>},
           Named{"lt(Tensor self, Tensor other) -> Tensor", comparison_plan<BinaryOp::Lt>},
           Named{"le(Tensor self, Tensor other) -> Tensor", comparison_plan<BinaryOp::Le>},
           Named{"gt(Tensor self, Tensor other) -> Tensor", comparison_plan<BinaryOp::Gt>},
           Named{"ge(Tensor self, Tensor other) -> Tensor", comparison_plan<BinaryOp::Ge>},
           Named{"logical_and(Tensor self, Tensor other) -> Tensor",
                 comparison_plan<BinaryOp::LogicalAnd>,
                 logical_decomposition(BinaryOp::LogicalAnd)},
           Named{"logical_or(Tensor self, Tensor other) -> Tensor",
                 comparison_plan<BinaryOp::LogicalOr>, logical_decomposition(BinaryOp::LogicalOr)},
           Named{"logical_xor(Tensor self, Tensor other) -> Tensor",
                 comparison_plan<BinaryOp::LogicalXor>,
                 logical_decomposition(BinaryOp::LogicalXor)},
       }) {
    declare_binary({n.schema, n.plan, true, true, false, comparison_samples, nullptr,
                    DerivativeReads::Inputs, n.decomposition});
  }
  for (const Named& n : {
           Named{"bitwise_and(Tensor self, Tensor other) -> Tensor",
                 bitwise_plan<BinaryOp::BitwiseAnd>},
           Named{"bitwise_or(Tensor self, Tensor other) -> Tensor",
                 bitwise_plan<BinaryOp::BitwiseOr>},
           Named{"bitwise_xor(Tensor self, Tensor other) -> Tensor",
                 bitwise_plan<BinaryOp::BitwiseXor>},
       }) {
    declare_binary({n.schema, n.plan, true, true, false, bitwise_samples});
  }
  for (const Named& n : {
           Named{"bitwise_left_shift(Tensor self, Tensor other) -> Tensor",
                 bitwise_plan<BinaryOp::LeftShift>},
           Named{"bitwise_right_shift(Tensor self, Tensor other) -> Tensor",
                 bitwise_plan<BinaryOp::RightShift>},
       }) {
    declare_binary({n.schema, n.plan, true, true, false, shift_samples});
  }
}

}  // namespace kiln::ops
