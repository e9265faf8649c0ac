#pragma once
// The per-capability kernel behind native_dropout (src/ops/dropout/dropout.kernel.cpp).
#include "ops/cpu/capability.h"
#include "ops/random/philox.h"

#include <kiln/core/dtype.h>

namespace kiln::ops {

// Element i of n contiguous elements is kept when a uniform in [0, 1) from the stream's word i
// (24 bits) is below 1 - p (as float32): mask[i] = kept, out[i] = in[i] * (kept ? 1 / (1 - p) : 0).
// The element-to-word mapping is philox.h's, so results do not depend on the thread count, and
// it is rand(float32)'s: the mask is rand(input.sizes()) < 1 - p with the same seed and offset.
using DropoutKernel = void(const void* in, void* out, bool* mask, DType dtype, int64_t n, double p,
                           random_detail::PhiloxStream stream);
extern cpu::KernelDispatch<DropoutKernel> dropout_kernels;

// Philox words native_dropout draws per element.
inline constexpr int kDropoutWords = 1;

}  // namespace kiln::ops
