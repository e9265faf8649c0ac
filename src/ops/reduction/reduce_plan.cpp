// Builds a ReducePlan: splits the input's dims into kept and reduced ones, orders each group
// fastest first and merges dims that are contiguous with each other.
#include "ops/reduction/reduce_kernels.h"

#include <algorithm>
#include <numeric>

namespace kiln::ops {

cpu::KernelDispatch<ReduceKernel> reduce_kernels;
cpu::KernelDispatch<ScanKernel> scan_kernels;

int64_t ReducePlan::num_outputs() const {
  int64_t n = 1;
  for (int64_t s : out_sizes) n *= s;
  return n;
}

int64_t ReducePlan::reduce_size() const {
  int64_t n = 1;
  for (int64_t s : red_sizes) n *= s;
  return n;
}

namespace {

struct PlanDim {
  int64_t size, in_stride, out_stride[2];
};

// Merges neighbours (fastest first) whose strides continue each other in every operand.
void coalesce(std::vector<PlanDim>& dims, int nstrides) {
  std::vector<PlanDim> merged;
  for (const PlanDim& d : dims) {
    if (!merged.empty()) {
      PlanDim& p = merged.back();
      bool ok = p.in_stride * p.size == d.in_stride;
      for (int i = 0; i < nstrides; ++i) ok &= p.out_stride[i] * p.size == d.out_stride[i];
      if (ok) {
        p.size *= d.size;
        continue;
      }
    }
    merged.push_back(d);
  }
  dims = std::move(merged);
}

}  // namespace

ReducePlan make_reduce_plan(const Tensor& in, const std::vector<Tensor>& outs,
                            const std::vector<bool>& reduced, bool keepdim, bool logical_order) {
  ReducePlan plan;
  plan.in = static_cast<const char*>(in.data_ptr());
  plan.in_dtype = in.dtype();
  const int64_t nd = in.dim();
  const int nouts = static_cast<int>(outs.size());
  for (int i = 0; i < nouts; ++i) {
    if (outs[i].defined()) plan.out[i] = static_cast<char*>(outs[i].data_ptr());
  }

  std::vector<PlanDim> kept, red;
  int64_t k = 0;  // dim of a non-keepdim output
  for (int64_t d = 0; d < nd; ++d) {
    PlanDim pd{in.size(d), in.stride(d), {0, 0}};
    const bool is_red = reduced[static_cast<size_t>(d)];
    if (!is_red || keepdim) {
      const int64_t od = keepdim ? d : k++;
      for (int i = 0; i < nouts; ++i) {
        pd.out_stride[i] = is_red || !outs[i].defined() ? 0 : outs[i].stride(od);
      }
    }
    if (pd.size == 1) continue;
    (is_red ? red : kept).push_back(pd);
  }
  // Row-major order reversed is fastest first for a contiguous tensor; a stable sort by stride
  // then follows the actual layout.
  std::reverse(kept.begin(), kept.end());
  std::reverse(red.begin(), red.end());
  auto by_stride = [](const PlanDim& a, const PlanDim& b) { return a.in_stride < b.in_stride; };
  std::stable_sort(kept.begin(), kept.end(), by_stride);
  if (!logical_order) std::stable_sort(red.begin(), red.end(), by_stride);
  coalesce(kept, nouts);
  coalesce(red, 0);
  for (const PlanDim& d : kept) {
    plan.out_sizes.push_back(d.size);
    plan.out_in_strides.push_back(d.in_stride);
    for (int i = 0; i < 2; ++i) plan.out_strides[i].push_back(d.out_stride[i]);
  }
  for (const PlanDim& d : red) {
    plan.red_sizes.push_back(d.size);
    plan.red_strides.push_back(d.in_stride);
  }
  return plan;
}

}  // namespace kiln::ops
