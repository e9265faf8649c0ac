#pragma once
// Per-capability kernels behind the normalization backward ops
// (src/ops/norm/norm_backward.kernel.cpp). Each reads the forward's saved statistics and makes
// one or two passes over grad_out and input.
#include "ops/cpu/capability.h"

#include <kiln/core/dtype.h>

#include <cstdint>

namespace kiln::ops {

// Layer norm over `rows` contiguous rows of `cols` elements, xhat = (x - mean) * rstd:
//   grad_input  = rstd * (g - mean(g) - xhat * mean(g * xhat)),  g = grad_out * weight
//   grad_weight = sum over rows of grad_out * xhat,  grad_bias = sum over rows of grad_out
// grad_out/input/grad_input have `dtype`; weight, mean, rstd, grad_weight and grad_bias have
// float32 when mixed, else `dtype`. Null outputs are not computed; a null weight reads as ones.
struct RowNormBackwardArgs {
  const void* grad_out = nullptr;
  const void* input = nullptr;
  const void* mean = nullptr;
  const void* rstd = nullptr;
  const void* weight = nullptr;
  void* grad_input = nullptr;
  void* grad_weight = nullptr;
  void* grad_bias = nullptr;
  int64_t rows = 0;
  int64_t cols = 0;
  DType dtype = DType::Float32;
  bool mixed = false;
};
using RowNormBackwardKernel = void(const RowNormBackwardArgs& args);

// Per-channel sums of grad_out and of grad_out * (input - center[c]), in float64, over grad_out
// and input laid out alike: (outer, channels, inner) planes or channels last (rows, channels).
struct ChannelGradSumsArgs {
  const void* grad_out = nullptr;
  const void* input = nullptr;
  DType dtype = DType::Float32;
  int64_t outer = 0;
  int64_t channels = 0;
  int64_t inner = 1;
  bool channels_last = false;
  const double* center = nullptr;  // `channels` values
  double* sum_dy = nullptr;        // outputs, `channels` values each
  double* sum_dy_xc = nullptr;
};
using ChannelGradSumsKernel = void(const ChannelGradSumsArgs& args);

// grad_input = grad_out * a[c] + input * b[c] + d[c] per channel, in the layouts above (input
// may be null when every b[c] is zero).
struct ChannelGradInputArgs {
  const void* grad_out = nullptr;
  const void* input = nullptr;
  void* grad_input = nullptr;
  DType dtype = DType::Float32;
  int64_t outer = 0;
  int64_t channels = 0;
  int64_t inner = 1;
  bool channels_last = false;
  const double* a = nullptr;
  const double* b = nullptr;
  const double* d = nullptr;
};
using ChannelGradInputKernel = void(const ChannelGradInputArgs& args);

extern cpu::KernelDispatch<RowNormBackwardKernel> row_norm_backward_kernels;
extern cpu::KernelDispatch<ChannelGradSumsKernel> channel_grad_sums_kernels;
extern cpu::KernelDispatch<ChannelGradInputKernel> channel_grad_input_kernels;

}  // namespace kiln::ops
