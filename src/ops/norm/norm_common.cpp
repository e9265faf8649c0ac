#include "ops/norm/norm_common.h"

#include "ops/norm/norm_kernels.h"

#include <kiln/ops/creation.h>

namespace kiln::ops {

cpu::KernelDispatch<RowNormKernel> row_norm_kernels;
cpu::KernelDispatch<ChannelMomentsKernel> channel_moments_kernels;
cpu::KernelDispatch<ChannelAffineKernel> channel_affine_kernels;

namespace norm {

bool is_mixed(const Tensor& input, std::initializer_list<Tensor> params) {
  if (!is_reduced_float(input.dtype())) return false;
  for (const Tensor& p : params) {
    if (p.defined() && p.dtype() == DType::Float32) return true;
  }
  return false;
}

void check_floating(const Tensor& input, const char* op) {
  KILN_CHECK_T(TypeError, is_floating_point(input.dtype()),
               "{}: expected a floating point input, but got {}", op, dtype_name(input.dtype()));
}

Tensor contiguous_as(const Tensor& param, DType dtype) {
  if (!param.defined()) return param;
  return (param.dtype() == dtype ? param : param.to(dtype)).contiguous();
}

SymDimVector sym(IntList sizes) {
  SymDimVector out;
  for (int64_t s : sizes) out.push_back(SymInt(s));
  return out;
}

bool channels_last(const Tensor& input) {
  return input.dim() == 4 && input.suggest_memory_format() == MemoryFormat::ChannelsLast;
}

void assign(const Tensor& dst, const std::vector<double>& values) {
  Tensor(dst).copy_(from_vector(values, {static_cast<int64_t>(values.size())}, DType::Float64));
}

}  // namespace norm
}  // namespace kiln::ops
