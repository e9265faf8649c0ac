#pragma once
// torch.optim.AdamW: Adam with decoupled weight decay (p *= 1 - lr * weight_decay before the
// Adam update, instead of adding weight_decay * p to the gradient).
#include <kiln/optim/adam.h>

namespace kiln::optim {

struct AdamWOptions {
  double lr = 1e-3;
  std::vector<double> betas = {0.9, 0.999};
  double eps = 1e-8;
  double weight_decay = 1e-2;
  bool amsgrad = false;
  bool maximize = false;

  OptionMap to_map() const;
  void update_from(const OptionMap& map, const char* who);
  void validate(const char* who) const;
};

class AdamW : public detail::OptimizerWithOptions<AdamWOptions, AdamParamState> {
 public:
  AdamW(std::vector<Tensor> params, AdamWOptions defaults = {})
      : OptimizerWithOptions(std::move(params), defaults, "AdamW") {}
  AdamW(std::vector<ParamGroup<AdamWOptions>> groups, AdamWOptions defaults = {})
      : OptimizerWithOptions(std::move(groups), defaults, "AdamW") {}

  void step() override;

  bool has_momentum() const override { return true; }
  bool momentum_is_beta1() const override { return true; }
  double momentum(size_t group) const override { return options(group).betas[0]; }
  void set_momentum(size_t group, double m) override { options(group).betas[0] = m; }
};

}  // namespace kiln::optim
