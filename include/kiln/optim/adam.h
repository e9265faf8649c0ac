#pragma once
// torch.optim.Adam: adaptive moments with bias correction, optional L2 weight decay (added to the
// gradient) and AMSGrad.
#include <kiln/optim/optimizer.h>

namespace kiln::optim {

struct AdamOptions {
  double lr = 1e-3;
  std::vector<double> betas = {0.9, 0.999};
  double eps = 1e-8;
  double weight_decay = 0;
  bool amsgrad = false;
  bool maximize = false;

  OptionMap to_map() const;
  void update_from(const OptionMap& map, const char* who);
  void validate(const char* who) const;
};

// Shared by Adam and AdamW.
struct AdamParamState {
  double step = 0;
  Tensor exp_avg, exp_avg_sq, max_exp_avg_sq;  // created by the first step

  std::map<std::string, Tensor> to_map() const;
  static AdamParamState from_map(const std::map<std::string, Tensor>& map, const Tensor& param,
                                 const char* who);
};

class Adam : public detail::OptimizerWithOptions<AdamOptions, AdamParamState> {
 public:
  Adam(std::vector<Tensor> params, AdamOptions defaults = {})
      : OptimizerWithOptions(std::move(params), defaults, "Adam") {}
  Adam(std::vector<ParamGroup<AdamOptions>> groups, AdamOptions defaults = {})
      : OptimizerWithOptions(std::move(groups), defaults, "Adam") {}

  void step() override;

  bool has_momentum() const override { return true; }
  bool momentum_is_beta1() const override { return true; }
  double momentum(size_t group) const override { return options(group).betas[0]; }
  void set_momentum(size_t group, double m) override { options(group).betas[0] = m; }
};

}  // namespace kiln::optim
