#pragma once
// Activation functions as modules (torch.nn.modules.activation). Modules with `inplace` write the
// result into their input and return it.
#include <kiln/nn/module.h>

#include <optional>
#include <string>

namespace kiln::nn {

// An elementwise activation with an optional in-place flag.
class InplaceActivation : public Module {
 public:
  Tensor forward(const Tensor& input) override;
  bool inplace;

 protected:
  InplaceActivation(std::string type_name, bool inplace_)
      : Module(std::move(type_name)), inplace(inplace_) {}
  virtual Tensor compute(const Tensor& input) const = 0;
  std::string inplace_repr() const { return inplace ? "inplace=True" : ""; }
};

class ReLU : public InplaceActivation {
 public:
  explicit ReLU(bool inplace = false) : InplaceActivation("ReLU", inplace) {}
  // In place through relu_ (no extra copy), as ResNet's ReLU(inplace=True) runs.
  Tensor forward(const Tensor& input) override;
  std::string extra_repr() const override { return inplace_repr(); }

 protected:
  Tensor compute(const Tensor& input) const override;
};

// clamp(x, min_val, max_val).
class Hardtanh : public InplaceActivation {
 public:
  explicit Hardtanh(double min_val = -1.0, double max_val = 1.0, bool inplace = false);
  std::string extra_repr() const override;
  double min_val, max_val;

 protected:
  Hardtanh(std::string type_name, double min_val, double max_val, bool inplace);
  Tensor compute(const Tensor& input) const override;
};

// min(max(x, 0), 6).
class ReLU6 : public Hardtanh {
 public:
  explicit ReLU6(bool inplace = false) : Hardtanh("ReLU6", 0.0, 6.0, inplace) {}
  std::string extra_repr() const override { return inplace_repr(); }
};

class LeakyReLU : public InplaceActivation {
 public:
  explicit LeakyReLU(double negative_slope = 0.01, bool inplace = false)
      : InplaceActivation("LeakyReLU", inplace), negative_slope(negative_slope) {}
  std::string extra_repr() const override;
  double negative_slope;

 protected:
  Tensor compute(const Tensor& input) const override;
};

class ELU : public InplaceActivation {
 public:
  explicit ELU(double alpha = 1.0, bool inplace = false)
      : InplaceActivation("ELU", inplace), alpha(alpha) {}
  std::string extra_repr() const override;
  double alpha;

 protected:
  Tensor compute(const Tensor& input) const override;
};

// x * sigmoid(x).
class SiLU : public InplaceActivation {
 public:
  explicit SiLU(bool inplace = false) : InplaceActivation("SiLU", inplace) {}
  std::string extra_repr() const override { return inplace_repr(); }

 protected:
  Tensor compute(const Tensor& input) const override;
};

// x * tanh(softplus(x)).
class Mish : public InplaceActivation {
 public:
  explicit Mish(bool inplace = false) : InplaceActivation("Mish", inplace) {}
  std::string extra_repr() const override { return inplace_repr(); }

 protected:
  Tensor compute(const Tensor& input) const override;
};

class Hardswish : public InplaceActivation {
 public:
  explicit Hardswish(bool inplace = false) : InplaceActivation("Hardswish", inplace) {}
  std::string extra_repr() const override { return inplace_repr(); }

 protected:
  Tensor compute(const Tensor& input) const override;
};

class Hardsigmoid : public InplaceActivation {
 public:
  explicit Hardsigmoid(bool inplace = false) : InplaceActivation("Hardsigmoid", inplace) {}
  std::string extra_repr() const override { return inplace_repr(); }

 protected:
  Tensor compute(const Tensor& input) const override;
};

// approximate: "none" (erf) or "tanh".
class GELU : public Module {
 public:
  explicit GELU(std::string approximate = "none");
  Tensor forward(const Tensor& input) override;
  std::string extra_repr() const override { return "approximate='" + approximate + "'"; }
  std::string approximate;
};

class Tanh : public Module {
 public:
  Tanh() : Module("Tanh") {}
  Tensor forward(const Tensor& input) override;
};

class Sigmoid : public Module {
 public:
  Sigmoid() : Module("Sigmoid") {}
  Tensor forward(const Tensor& input) override;
};

// log(1 + exp(beta x)) / beta, linear above threshold.
class Softplus : public Module {
 public:
  explicit Softplus(double beta = 1.0, double threshold = 20.0)
      : Module("Softplus"), beta(beta), threshold(threshold) {}
  Tensor forward(const Tensor& input) override;
  std::string extra_repr() const override;
  double beta, threshold;
};

// dim nullopt: PyTorch's legacy choice (0 for 0-, 1- and 3-D input, else 1).
class Softmax : public Module {
 public:
  explicit Softmax(std::optional<int64_t> dim = std::nullopt) : Module("Softmax"), dim(dim) {}
  Tensor forward(const Tensor& input) override;
  std::string extra_repr() const override;
  std::optional<int64_t> dim;
};

class LogSoftmax : public Module {
 public:
  explicit LogSoftmax(std::optional<int64_t> dim = std::nullopt) : Module("LogSoftmax"), dim(dim) {}
  Tensor forward(const Tensor& input) override;
  std::string extra_repr() const override;
  std::optional<int64_t> dim;
};

}  // namespace kiln::nn
