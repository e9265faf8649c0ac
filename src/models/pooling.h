#pragma once
// Pooling modules the models need, private to src/models until kiln::nn has its own: they print
// and name themselves as torch.nn.MaxPool2d / AdaptiveAvgPool2d and hold no parameters.
#include <kiln/nn/module.h>

#include <vector>

namespace kiln::models::detail {

class MaxPool2d : public nn::Module {
 public:
  MaxPool2d(int64_t kernel_size, int64_t stride, int64_t padding)
      : nn::Module("MaxPool2d"), kernel_size(kernel_size), stride(stride), padding(padding) {}
  Tensor forward(const Tensor& input) override;
  std::string extra_repr() const override;
  int64_t kernel_size, stride, padding;
};

class AdaptiveAvgPool2d : public nn::Module {
 public:
  explicit AdaptiveAvgPool2d(std::vector<int64_t> output_size)
      : nn::Module("AdaptiveAvgPool2d"), output_size(std::move(output_size)) {}
  Tensor forward(const Tensor& input) override;
  std::string extra_repr() const override;
  std::vector<int64_t> output_size;
};

}  // namespace kiln::models::detail
