#pragma once
// 2-d pooling layers (torch.nn.MaxPool2d, AvgPool2d, AdaptiveAvgPool2d, AdaptiveMaxPool2d) over
// (N, C, H, W) or (C, H, W) input. Sizes given as one number apply to both dims and print as one
// number, as in PyTorch; an empty stride (the default) means the kernel size:
// MaxPool2d(3, 2, 1) is ResNet's stem pooling.
#include <kiln/nn/module.h>

#include <optional>
#include <vector>

namespace kiln::nn {

class MaxPool2d : public Module {
 public:
  explicit MaxPool2d(IntList kernel_size, IntList stride = {}, IntList padding = 0,
                     IntList dilation = 1, bool ceil_mode = false);
  Tensor forward(const Tensor& input) override;
  // (output, indices), indices h * W + w within each plane (return_indices=True).
  std::tuple<Tensor, Tensor> forward_with_indices(const Tensor& input);
  std::string extra_repr() const override;

  std::vector<int64_t> kernel_size, stride, padding, dilation;
  bool ceil_mode;
};

class AvgPool2d : public Module {
 public:
  explicit AvgPool2d(IntList kernel_size, IntList stride = {}, IntList padding = 0,
                     bool ceil_mode = false, bool count_include_pad = true,
                     std::optional<int64_t> divisor_override = std::nullopt);
  Tensor forward(const Tensor& input) override;
  std::string extra_repr() const override;

  std::vector<int64_t> kernel_size, stride, padding;
  bool ceil_mode, count_include_pad;
  std::optional<int64_t> divisor_override;
};

class AdaptiveAvgPool2d : public Module {
 public:
  explicit AdaptiveAvgPool2d(IntList output_size);
  Tensor forward(const Tensor& input) override;
  std::string extra_repr() const override;
  std::vector<int64_t> output_size;
};

class AdaptiveMaxPool2d : public Module {
 public:
  explicit AdaptiveMaxPool2d(IntList output_size);
  Tensor forward(const Tensor& input) override;
  std::string extra_repr() const override;
  std::vector<int64_t> output_size;
};

}  // namespace kiln::nn
