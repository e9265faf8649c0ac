#pragma once
// The reduction and scan kernels behind src/ops/reduction/reduce_ops.cpp, and the plan that
// describes a reduction's geometry to them (built once, outside the per-capability kernels).
#include "ops/cpu/capability.h"

#include <kiln/core/tensor.h>

#include <vector>

namespace kiln::ops {

enum class ReduceKind : uint8_t {
  Sum,
  Mean,
  Prod,
  Max,
  Min,
  ArgMax,  // out[1]: indices; out[0] (optional): values
  ArgMin,
  Var,  // out[0]: variance (or std); out[1] (optional): mean
  Norm,
  LogSumExp,
  Any,
  All,
};

// One reduction in element strides. Kept dims (one per output element) and reduced dims are
// each ordered fastest first and coalesced; size-1 dims are dropped.
struct ReducePlan {
  const char* in = nullptr;
  DType in_dtype = DType::Float32;
  char* out[2] = {nullptr, nullptr};
  DimVector out_sizes, out_in_strides, out_strides[2];
  DimVector red_sizes, red_strides;

  int64_t num_outputs() const;
  int64_t reduce_size() const;
};

struct ReduceParams {
  double correction = 1.0;  // Var: divisor is max(n - correction, 0)
  bool take_sqrt = false;   // Var: std instead of var
  double ord = 2.0;         // Norm: any value, inf, -inf or 0
};

// reduced[d] says whether input dim d is reduced; outs have the reduced shape (keepdim or not).
// logical_order keeps the reduced dims in row-major order, so that the linear index over them
// is the flattened index (argmax/argmin need it); otherwise they are ordered by stride.
ReducePlan make_reduce_plan(const Tensor& in, const std::vector<Tensor>& outs,
                            const std::vector<bool>& reduced, bool keepdim, bool logical_order);

// Compute dtypes: Sum/Mean/Prod: float32, float64, int64. Max/Min/ArgMax/ArgMin: any dtype.
// Var/Norm/LogSumExp: float32, float64 (outputs of the same dtype). Any/All: bool.
using ReduceKernel = void(ReduceKind kind, const ReducePlan& plan, const ReduceParams& params);
extern cpu::KernelDispatch<ReduceKernel> reduce_kernels;

// Inclusive scan along dim of contiguous `in` into contiguous `out` (same sizes, same dtype:
// float32, float64 or int64). Floats accumulate in double.
using ScanKernel = void(bool is_prod, const Tensor& out, const Tensor& in, int64_t dim);
extern cpu::KernelDispatch<ScanKernel> scan_kernels;

}  // namespace kiln::ops
