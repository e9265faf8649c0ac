#pragma once
// The fused activation backward kernels (activation_backward.kernel.cpp) behind the backward ops
// of activation_backward_ops.cpp: operand 0 is the gradient input, 1 grad_output, 2 self (or the
// forward's result), all in the compute dtype.
#include "ops/cpu/capability.h"
#include "ops/iterator/tensor_iterator.h"

namespace kiln::ops {

enum class ActivationBackward {
  GeluErf,    // gelu_backward(approximate='none')
  GeluTanh,   // gelu_backward(approximate='tanh')
  Threshold,  // threshold_backward: a is the threshold
  Hardtanh,   // hardtanh_backward: a = min_val, b = max_val
  Silu,       // silu_backward
  Sigmoid,    // sigmoid_backward (from the result)
  Tanh,       // tanh_backward (from the result)
  LeakyRelu,  // leaky_relu_backward: a = negative_slope
  Elu,        // elu_backward: a = alpha, b = scale, c = input_scale, flag = is_result
  Softplus,   // softplus_backward: a = beta, b = threshold
};

struct ActivationBackwardParams {
  double a = 0, b = 0, c = 0;
  bool flag = false;
};

using ActivationBackwardKernel = void(TensorIterator& iter, ActivationBackward op,
                                      const ActivationBackwardParams& params);
extern cpu::KernelDispatch<ActivationBackwardKernel> activation_backward_kernels;

}  // namespace kiln::ops
