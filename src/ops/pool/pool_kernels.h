#pragma once
// Per-capability kernels behind the 2-d pooling ops (src/ops/pool/pool.kernel.cpp).
#include "ops/cpu/capability.h"

#include <kiln/core/dtype.h>

#include <cstdint>

namespace kiln::ops {

enum class PoolKind { Max, Avg, AdaptiveMax, AdaptiveAvg };

// One 2-d pooling over a dense input, planes layout (N, C, H, W) or channels last (N, H, W, C);
// the output (and indices, for the max kinds) has the same layout.
struct Pool2dArgs {
  PoolKind kind = PoolKind::Max;
  const void* input = nullptr;
  void* out = nullptr;
  int64_t* indices = nullptr;  // max kinds: h * W + w of each maximum within its plane
  DType dtype = DType::Float32;
  bool channels_last = false;
  int64_t batch = 1, channels = 0, in_h = 0, in_w = 0, out_h = 0, out_w = 0;
  // Max and Avg windows (the adaptive kinds derive theirs from the sizes).
  int64_t kernel_h = 1, kernel_w = 1, stride_h = 1, stride_w = 1, pad_h = 0, pad_w = 0;
  int64_t dilation_h = 1, dilation_w = 1;
  bool count_include_pad = true;  // Avg
  int64_t divisor = 0;            // Avg: 0 means the window's own count
};
using Pool2dKernel = void(const Pool2dArgs& args);

extern cpu::KernelDispatch<Pool2dKernel> pool2d_kernels;
// The gradient of one 2-d pooling: `input` is grad_output (out_h x out_w), `out` grad_input
// (in_h x in_w), `indices` the forward's (max kinds); floating dtypes. Same layouts as forward.
extern cpu::KernelDispatch<Pool2dKernel> pool2d_backward_kernels;

}  // namespace kiln::ops
