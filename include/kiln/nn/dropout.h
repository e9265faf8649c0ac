#pragma once
// Dropout layers (torch.nn.Dropout, Dropout2d): active in training mode only.
#include <kiln/nn/module.h>

namespace kiln::nn {

// Zeroes each element with probability p in training and scales the rest by 1 / (1 - p).
class Dropout : public Module {
 public:
  explicit Dropout(double p = 0.5, bool inplace = false);
  Tensor forward(const Tensor& input) override;
  std::string extra_repr() const override;

  double p;
  bool inplace;
};

// Zeroes whole channels of (N, C, H, W) or (C, H, W) input.
class Dropout2d : public Module {
 public:
  explicit Dropout2d(double p = 0.5, bool inplace = false);
  Tensor forward(const Tensor& input) override;
  std::string extra_repr() const override;

  double p;
  bool inplace;
};

}  // namespace kiln::nn
