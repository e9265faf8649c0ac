#pragma once
// Per-capability elementwise loss kernels (src/ops/loss/loss.kernel.cpp), over an iterator
// (out; input, target) computing in float32 or float64.
#include "ops/cpu/capability.h"
#include "ops/iterator/tensor_iterator.h"

namespace kiln::ops {

enum class PointwiseLoss {
  Mse,                 // d^2 with d = input - target
  SmoothL1,            // 0.5 d^2 / beta where |d| < beta, else |d| - 0.5 beta (param = beta)
  Huber,               // 0.5 d^2 where |d| < delta, else delta (|d| - 0.5 delta) (param = delta)
  BinaryCrossEntropy,  // (t - 1) max(log1p(-x), -100) - t max(log(x), -100)
};

using PointwiseLossKernel = void(TensorIterator& iter, PointwiseLoss kind, double param);
extern cpu::KernelDispatch<PointwiseLossKernel> pointwise_loss_kernels;

}  // namespace kiln::ops
