#include "models/pooling.h"

#include <kiln/ops/pool.h>

#include <fmt/format.h>

namespace kiln::models::detail {

Tensor MaxPool2d::forward(const Tensor& input) {
  return max_pool2d(input, {kernel_size, kernel_size}, {stride, stride}, {padding, padding});
}

std::string MaxPool2d::extra_repr() const {
  return fmt::format("kernel_size={}, stride={}, padding={}, dilation=1, ceil_mode=False",
                     kernel_size, stride, padding);
}

Tensor AdaptiveAvgPool2d::forward(const Tensor& input) {
  return adaptive_avg_pool2d(input, output_size);
}

std::string AdaptiveAvgPool2d::extra_repr() const {
  return "output_size=" + nn::py_tuple(output_size);
}

}  // namespace kiln::models::detail
