#pragma once
// The per-capability flash attention kernel (src/ops/attention/flash_attention.kernel.cpp).
#include "ops/cpu/capability.h"
#include "ops/random/philox.h"

#include <kiln/core/tensor.h>

namespace kiln::ops {

// One attention problem on 4-D strided tensors of dtype float32 or float64 (T below):
//   out [B, Hq, L, Ev] (T), lse [B, Hq, L] (T), q [B, Hq, L, E], k [B, Hk, S, E], v [B, Hv, S, Ev]
//   (batch dims already broadcast, possibly with stride 0), mask undefined or [B, Hq, L, S] of
//   bool or T (broadcast by stride 0).
struct FlashAttentionArgs {
  Tensor out, lse, q, k, v, mask;
  double scale = 1.0;
  bool is_causal = false;
  double dropout_p = 0.0;
  // Element (b, h, i, j) of the attention weights is dropped when the 32-bit word number
  // ((b * Hq + h) * L + i) * S + j of this stream (philox.h's mapping, one word each) is below
  // dropout_p * 2^32.
  random_detail::PhiloxStream dropout_stream;
};

// Writes out and lse, in parallel over kiln's thread pool.
using FlashAttentionKernel = void(const FlashAttentionArgs& args);
extern cpu::KernelDispatch<FlashAttentionKernel> flash_attention_kernels;

}  // namespace kiln::ops
