#pragma once
// Linear layers: Identity, Linear, Bilinear (torch.nn.modules.linear).
#include <kiln/nn/module.h>

namespace kiln::nn {

// Returns its input.
class Identity : public Module {
 public:
  Identity() : Module("Identity") {}
  Tensor forward(const Tensor& input) override { return input; }
};

// y = x W^T + b; weight (out_features, in_features), bias (out_features).
// Initialization as PyTorch: weight kaiming_uniform(a = sqrt(5)), i.e. U(-1/sqrt(in), 1/sqrt(in)),
// and bias U(-1/sqrt(in), 1/sqrt(in)).
class Linear : public Module {
 public:
  Linear(int64_t in_features, int64_t out_features, bool bias = true);
  void reset_parameters();
  Tensor forward(const Tensor& input) override;
  std::string extra_repr() const override;

  int64_t in_features, out_features;
  Tensor weight, bias;  // bias undefined when bias = false

 protected:
  Linear(std::string type_name, int64_t in_features, int64_t out_features, bool bias);
};

// MultiheadAttention's out_proj: a Linear under the name PyTorch prints for it.
class NonDynamicallyQuantizableLinear : public Linear {
 public:
  NonDynamicallyQuantizableLinear(int64_t in_features, int64_t out_features, bool bias = true)
      : Linear("NonDynamicallyQuantizableLinear", in_features, out_features, bias) {}
};

// y = x1^T W x2 + b; weight (out, in1, in2), bias (out); both U(-1/sqrt(in1), 1/sqrt(in1)).
class Bilinear : public Module {
 public:
  Bilinear(int64_t in1_features, int64_t in2_features, int64_t out_features, bool bias = true);
  void reset_parameters();
  Tensor forward(const Tensor& input1, const Tensor& input2);
  using Module::forward;
  std::string extra_repr() const override;

  int64_t in1_features, in2_features, out_features;
  Tensor weight, bias;
};

}  // namespace kiln::nn
