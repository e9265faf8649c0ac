#pragma once
// convolution_backward (aten's op): the gradients of convolution, and convolution's derivative
// formula, which calls it.
#include "ops/conv/conv_params.h"

#include <array>
#include <vector>

namespace kiln::ops::conv {

// convolution's derivative: convolution_backward for the arguments that require grad.
std::vector<Tensor> convolution_derivative(const BackwardArgs& a);

// The gradients written as convolutions (grad_input a transposed convolution of grad_output by
// the weight, grad_weight a convolution of the input by grad_output with batch and channels
// swapped, grad_bias a sum); undefined where mask is false. convolution_backward's decomposition,
// through which it is differentiated, and its kernel for what oneDNN does not take.
std::vector<Tensor> backward_by_convolutions(const Tensor& grad_output, const Tensor& input,
                                             const Tensor& weight, const ConvParams& p,
                                             std::array<bool, 3> mask);

std::vector<Sample> convolution_backward_samples();

}  // namespace kiln::ops::conv
