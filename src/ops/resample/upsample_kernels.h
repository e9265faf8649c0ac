#pragma once
// Per-capability kernel behind upsample_linear1d / upsample_bilinear2d
// (src/ops/resample/upsample.kernel.cpp).
#include "ops/cpu/capability.h"

#include <kiln/core/tensor.h>

#include <vector>

namespace kiln::ops {

// For each output position along one dim: the two input positions it blends and their weights
// (computed in the op's math type, float for float32/16-bit inputs, so the kernel's casts are
// exact).
struct LinearTable {
  std::vector<int64_t> index0, index1;
  std::vector<double> lambda0, lambda1;
};

// out (N, C, OH, OW) from in (N, C, IH, IW), both dense in the same layout: contiguous, or
// channels-last when channels_last. With blend_h false the H dim is 1 on both sides and only W
// is interpolated (upsample_linear1d).
using LinearUpsampleKernel = void(const Tensor& out, const Tensor& in, const LinearTable& h,
                                  const LinearTable& w, bool blend_h, bool channels_last);
extern cpu::KernelDispatch<LinearUpsampleKernel> linear_upsample_kernels;

}  // namespace kiln::ops
