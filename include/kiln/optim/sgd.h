#pragma once
// torch.optim.SGD: stochastic gradient descent with optional momentum (heavy-ball or Nesterov),
// dampening and L2 weight decay.
#include <kiln/optim/optimizer.h>

namespace kiln::optim {

struct SGDOptions {
  double lr = 1e-3;
  double momentum = 0;
  double dampening = 0;
  double weight_decay = 0;
  bool nesterov = false;
  bool maximize = false;

  OptionMap to_map() const;
  void update_from(const OptionMap& map, const char* who);
  void validate(const char* who) const;
};

struct SGDParamState {
  Tensor momentum_buffer;  // created by the first step when momentum != 0

  std::map<std::string, Tensor> to_map() const;
  static SGDParamState from_map(const std::map<std::string, Tensor>& map, const Tensor& param,
                                const char* who);
};

class SGD : public detail::OptimizerWithOptions<SGDOptions, SGDParamState> {
 public:
  SGD(std::vector<Tensor> params, SGDOptions defaults = {})
      : OptimizerWithOptions(std::move(params), defaults, "SGD") {}
  SGD(std::vector<ParamGroup<SGDOptions>> groups, SGDOptions defaults = {})
      : OptimizerWithOptions(std::move(groups), defaults, "SGD") {}

  void step() override;

  bool has_momentum() const override { return true; }
  double momentum(size_t group) const override { return options(group).momentum; }
  void set_momentum(size_t group, double m) override { options(group).momentum = m; }
};

}  // namespace kiln::optim
