#pragma once
// Shared pieces of the binary and ternary op declarations: output metadata for broadcasting
// elementwise ops, dtype checks with PyTorch's messages, and the iterator they run on.
#include "ops/binary/binary_kernels.h"

#include <kiln/ops/registry.h>

#include <initializer_list>
#include <string>

namespace kiln::ops {

// The output of an elementwise op over `inputs` (undefined ones skipped): the broadcast sizes,
// strides following a dense input's layout, on the device of the first tensor that is not a
// CPU scalar. Raises kiln::Error naming op when the sizes do not broadcast.
TensorMeta elementwise_meta(std::initializer_list<Tensor> inputs, DType dtype, const char* op);

// An iterator writing `out` from `inputs` converted to `compute` (the kernel's output type is
// `compute`, or bool for comparisons).
TensorIterator elementwise_iter(const Tensor& out, std::initializer_list<Tensor> inputs,
                                DType compute, DType kernel_out, const char* op);

// What a binary op computes for one call: the kernel, its operands in kernel order, the dtype the
// kernel computes in and the result dtype. Made by each op's plan function from its arguments,
// which also raises every dtype/value error, so meta and eager calls check alike.
struct BinaryPlan {
  BinaryOp kind;
  Tensor a, b;
  DType compute;
  DType result;
  Scalar alpha = 1;
};
using PlanFn = BinaryPlan (*)(const Stack& args);

// One binary op: schema, plan, which variants exist, and its op-info samples.
struct BinaryDecl {
  const char* schema;
  PlanFn plan;
  bool inplace = true;
  bool out = true;
  bool differentiable = true;
  SampleFn samples;
  DerivativeFn derivative = nullptr;  // kiln ops on BackwardArgs; broadcast gradients are summed
  DerivativeReads derivative_reads = DerivativeReads::Inputs;
  // In kiln ops, for ops that are no prims; runs after the plan's checks.
  DecompositionFn decomposition = nullptr;
};
void declare_binary(const BinaryDecl& decl);

// Runs a plan into a preallocated output.
void run_binary(const BinaryPlan& plan, const Tensor& out, const char* op);

// kiln::TypeError "<op>: not supported for dtype <dtype>" (PyTorch's NotImplementedError).
[[noreturn]] void unsupported(const char* op, DType dtype);

}  // namespace kiln::ops
