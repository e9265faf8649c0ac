#pragma once
// Loss modules (torch.nn.CrossEntropyLoss, ...): forward(input, target) over the functional
// losses of <kiln/ops/loss.h>, with the same options. A class-weight tensor is registered as the
// buffer "weight" (and BCEWithLogitsLoss's pos_weight as "pos_weight"), as PyTorch does.
#include <kiln/nn/module.h>
#include <kiln/ops/loss.h>

namespace kiln::nn {

// The shared two-argument call: loss(input, target).
class Loss : public Module {
 public:
  virtual Tensor forward(const Tensor& input, const Tensor& target) = 0;
  using Module::forward;
  Tensor operator()(const Tensor& input, const Tensor& target) { return forward(input, target); }
  using Module::operator();

 protected:
  explicit Loss(std::string type_name) : Module(std::move(type_name)) {}
};

class CrossEntropyLoss : public Loss {
 public:
  explicit CrossEntropyLoss(CrossEntropyOptions options = {});
  Tensor forward(const Tensor& input, const Tensor& target) override;
  using Loss::forward;
  CrossEntropyOptions options;
};

class NLLLoss : public Loss {
 public:
  explicit NLLLoss(NllLossOptions options = {});
  Tensor forward(const Tensor& input, const Tensor& target) override;
  using Loss::forward;
  NllLossOptions options;
};

class MSELoss : public Loss {
 public:
  explicit MSELoss(ReductionArg reduction = {}) : Loss("MSELoss"), reduction(reduction) {}
  Tensor forward(const Tensor& input, const Tensor& target) override;
  using Loss::forward;
  ReductionArg reduction;
};

class L1Loss : public Loss {
 public:
  explicit L1Loss(ReductionArg reduction = {}) : Loss("L1Loss"), reduction(reduction) {}
  Tensor forward(const Tensor& input, const Tensor& target) override;
  using Loss::forward;
  ReductionArg reduction;
};

class SmoothL1Loss : public Loss {
 public:
  explicit SmoothL1Loss(SmoothL1LossOptions options = {})
      : Loss("SmoothL1Loss"), options(options) {}
  Tensor forward(const Tensor& input, const Tensor& target) override;
  using Loss::forward;
  SmoothL1LossOptions options;
};

class HuberLoss : public Loss {
 public:
  explicit HuberLoss(HuberLossOptions options = {}) : Loss("HuberLoss"), options(options) {}
  Tensor forward(const Tensor& input, const Tensor& target) override;
  using Loss::forward;
  HuberLossOptions options;
};

class BCELoss : public Loss {
 public:
  explicit BCELoss(BinaryCrossEntropyOptions options = {});
  Tensor forward(const Tensor& input, const Tensor& target) override;
  using Loss::forward;
  BinaryCrossEntropyOptions options;
};

class BCEWithLogitsLoss : public Loss {
 public:
  explicit BCEWithLogitsLoss(BinaryCrossEntropyWithLogitsOptions options = {});
  Tensor forward(const Tensor& input, const Tensor& target) override;
  using Loss::forward;
  BinaryCrossEntropyWithLogitsOptions options;
};

class KLDivLoss : public Loss {
 public:
  explicit KLDivLoss(KlDivOptions options = {}) : Loss("KLDivLoss"), options(options) {}
  Tensor forward(const Tensor& input, const Tensor& target) override;
  using Loss::forward;
  KlDivOptions options;
};

}  // namespace kiln::nn
