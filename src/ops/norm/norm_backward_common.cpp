#include "ops/norm/norm_backward_common.h"

#include "ops/norm/norm_backward_kernels.h"

namespace kiln::ops {

cpu::KernelDispatch<RowNormBackwardKernel> row_norm_backward_kernels;
cpu::KernelDispatch<ChannelGradSumsKernel> channel_grad_sums_kernels;
cpu::KernelDispatch<ChannelGradInputKernel> channel_grad_input_kernels;

namespace norm {

std::array<bool, 3> output_mask(const IValue& v) {
  const std::vector<int64_t> m = v.to_int_list();
  KILN_CHECK(m.size() == 3, "output_mask: expected 3 values, but got {}", m.size());
  return {m[0] != 0, m[1] != 0, m[2] != 0};
}

Outs allocate(const MaybeMetas& metas) {
  Outs out;
  for (const auto& m : metas) out.push_back(m ? empty_from_meta(*m) : Tensor());
  return out;
}

Outs meta_outputs(const MaybeMetas& metas) { return allocate(metas); }

TensorMeta channel_meta(int64_t C, DType dtype, Device device) {
  return TensorMeta::contiguous({C}, dtype, device);
}

std::vector<double> as_doubles(const Tensor& t, int64_t n, double fallback) {
  std::vector<double> out(static_cast<size_t>(n), fallback);
  if (!t.defined()) return out;
  const Tensor d = contiguous_as(t, DType::Float64);
  for (int64_t i = 0; i < n; ++i) out[static_cast<size_t>(i)] = d.data_ptr<double>()[i];
  return out;
}

}  // namespace norm
}  // namespace kiln::ops
