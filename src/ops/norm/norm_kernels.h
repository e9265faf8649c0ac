#pragma once
// Per-capability kernels behind the normalization ops (src/ops/norm/norm.kernel.cpp).
#include "ops/cpu/capability.h"

#include <kiln/core/dtype.h>

#include <cstdint>

namespace kiln::ops {

// Normalizes each of `rows` contiguous rows of `cols` elements on its own:
//   layer norm: out = (x - mean) * rstd * weight + bias, rstd = 1 / sqrt(var + eps)
//   rms norm:   out = x * rstd * weight,                 rstd = 1 / sqrt(mean(x^2) + eps)
// weight/bias (cols elements) may be null; mean/rstd (rows elements) may be null.
struct RowNormArgs {
  const void* input = nullptr;
  void* out = nullptr;
  const void* weight = nullptr;
  const void* bias = nullptr;
  void* mean = nullptr;
  void* rstd = nullptr;
  int64_t rows = 0;
  int64_t cols = 0;
  double eps = 0;
  DType dtype = DType::Float32;  // input and out
  // float16/bfloat16 input with float32 weight/bias/stats (PyTorch's mixed type); otherwise
  // weight, bias and stats have the input's dtype.
  bool mixed = false;
  bool rms = false;
};
using RowNormKernel = void(const RowNormArgs& args);

// Mean and biased variance per channel of `input` (in float64), laid out either as
// (outer, channels, inner) contiguous planes or channels last (rows, channels).
struct ChannelMomentsArgs {
  const void* input = nullptr;
  DType dtype = DType::Float32;
  int64_t outer = 0;  // batch size N (planes layout) or rows N*H*W (channels last)
  int64_t channels = 0;
  int64_t inner = 1;  // H*W (planes layout); 1 for channels last
  bool channels_last = false;
  double* mean = nullptr;
  double* var = nullptr;
};
using ChannelMomentsKernel = void(const ChannelMomentsArgs& args);

// out = input * scale[c] + shift[c] per channel c, in the layouts of ChannelMomentsArgs (input and
// out may be the same memory).
struct ChannelAffineArgs {
  const void* input = nullptr;
  void* out = nullptr;
  DType dtype = DType::Float32;
  int64_t outer = 0;
  int64_t channels = 0;
  int64_t inner = 1;
  bool channels_last = false;
  const double* scale = nullptr;  // `channels` values
  const double* shift = nullptr;
};
using ChannelAffineKernel = void(const ChannelAffineArgs& args);

extern cpu::KernelDispatch<RowNormKernel> row_norm_kernels;
extern cpu::KernelDispatch<ChannelMomentsKernel> channel_moments_kernels;
extern cpu::KernelDispatch<ChannelAffineKernel> channel_affine_kernels;

}  // namespace kiln::ops
