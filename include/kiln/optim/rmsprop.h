#pragma once
// torch.optim.RMSprop: divides the gradient by a running root mean square of past gradients,
// optionally centered (by the running mean) and with momentum.
#include <kiln/optim/optimizer.h>

namespace kiln::optim {

struct RMSpropOptions {
  double lr = 1e-2;
  double alpha = 0.99;
  double eps = 1e-8;
  double weight_decay = 0;
  double momentum = 0;
  bool centered = false;
  bool maximize = false;

  OptionMap to_map() const;
  void update_from(const OptionMap& map, const char* who);
  void validate(const char* who) const;
};

struct RMSpropParamState {
  double step = 0;
  Tensor square_avg;       // created by the first step
  Tensor momentum_buffer;  // when momentum > 0
  Tensor grad_avg;         // when centered

  std::map<std::string, Tensor> to_map() const;
  static RMSpropParamState from_map(const std::map<std::string, Tensor>& map, const Tensor& param,
                                    const char* who);
};

class RMSprop : public detail::OptimizerWithOptions<RMSpropOptions, RMSpropParamState> {
 public:
  RMSprop(std::vector<Tensor> params, RMSpropOptions defaults = {})
      : OptimizerWithOptions(std::move(params), defaults, "RMSprop") {}
  RMSprop(std::vector<ParamGroup<RMSpropOptions>> groups, RMSpropOptions defaults = {})
      : OptimizerWithOptions(std::move(groups), defaults, "RMSprop") {}

  void step() override;

  bool has_momentum() const override { return true; }
  double momentum(size_t group) const override { return options(group).momentum; }
  void set_momentum(size_t group, double m) override { options(group).momentum = m; }
};

}  // namespace kiln::optim
