#pragma once
// The derivative of the fused attention op (flash_attention_derivative.cpp).
#include <kiln/ops/registry.h>

#include <vector>

namespace kiln::ops::attention {

std::vector<Tensor> flash_attention_derivative(const BackwardArgs& a);

}  // namespace kiln::ops::attention
