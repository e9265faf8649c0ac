#pragma once
// The optimizer base, as torch.optim.Optimizer: parameters in groups, each group with its own
// options; step() updates the parameters in place from their .grad; state_dict() gives the
// per-parameter state and the groups' options in PyTorch's structure.
#include <kiln/core/tensor.h>

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <variant>
#include <vector>

namespace kiln::optim {

// One option of a param group as PyTorch's state_dict lists it: a flag, a number, or a tuple of
// numbers (Adam's betas).
using OptionValue = std::variant<bool, double, std::vector<double>>;
using OptionMap = std::map<std::string, OptionValue>;

// A param group in a state dict: its options, and its parameters as indices into the
// concatenation of every group's parameters (PyTorch's "params": [0, 1, ...]).
struct ParamGroupState {
  OptionMap options;
  std::vector<int64_t> params;
};

// torch.optim.Optimizer.state_dict(): {"state": {index: {"exp_avg": ..., "step": ...}},
// "param_groups": [...]}. Parameters without state (never stepped, no grad) have no entry.
// The tensors share memory with the optimizer's live state, as in PyTorch; load_state_dict
// copies them.
struct OptimizerState {
  std::map<int64_t, std::map<std::string, Tensor>> state;
  std::vector<ParamGroupState> param_groups;
};

// A group of parameters with its own options; the optimizer's defaults when options are absent.
template <class Options>
struct ParamGroup {
  std::vector<Tensor> params;
  std::optional<Options> options;
};

class Optimizer {
 public:
  virtual ~Optimizer() = default;
  Optimizer(const Optimizer&) = delete;
  Optimizer& operator=(const Optimizer&) = delete;

  // One update of every parameter that has a gradient (parameters whose grad is undefined are
  // skipped), under no_grad, in place.
  virtual void step() = 0;
  // Clears every parameter's gradient: undefined (set_to_none) or zero-filled.
  void zero_grad(bool set_to_none = true);

  size_t num_param_groups() const { return params_.size(); }
  const std::vector<Tensor>& params(size_t group) const;
  // Every parameter, group by group.
  std::vector<Tensor> parameters() const;

  // The learning rate of a group, which LR schedulers read and set.
  virtual double lr(size_t group) const = 0;
  virtual void set_lr(size_t group, double lr) = 0;
  // The momentum OneCycleLR cycles: SGD's and RMSprop's `momentum`, Adam's `betas[0]`.
  virtual bool has_momentum() const { return false; }
  virtual double momentum(size_t group) const;
  virtual void set_momentum(size_t group, double momentum);
  // The state's first moment is named "betas" (Adam) rather than "momentum".
  virtual bool momentum_is_beta1() const { return false; }

  virtual OptimizerState state_dict() const = 0;
  // Replaces the state and the groups' options with saved ones; the saved groups must have the
  // same number of parameters as this optimizer's. On error nothing changes.
  virtual void load_state_dict(const OptimizerState& state) = 0;

 protected:
  explicit Optimizer(const char* name) : name_(name) {}
  // Checks the parameters (defined, floating point, leaves, in no other group) and adds a group.
  void add_params(std::vector<Tensor> params);
  // PyTorch's "optimizer got an empty parameter list".
  void check_not_empty() const;
  const char* name_;
  std::vector<std::vector<Tensor>> params_;
};

namespace detail {

// Reads a saved option into `value` if present; raises kiln::Error if it has another type.
void read_option(const OptionMap& map, const std::string& key, double& value, const char* who);
void read_option(const OptionMap& map, const std::string& key, bool& value, const char* who);
void read_option(const OptionMap& map, const std::string& key, std::vector<double>& value,
                 const char* who);
// A saved state tensor for `param`: checked to have its shape, copied and cast to its dtype.
// Undefined if absent.
Tensor read_state_tensor(const std::map<std::string, Tensor>& map, const std::string& key,
                         const Tensor& param, const char* who);
// A saved "step" (a 0-dim tensor, as in PyTorch); 0 if absent.
double read_step(const std::map<std::string, Tensor>& map, const char* who);
// PyTorch stores step as a float32 0-dim tensor.
Tensor step_tensor(double step);
// PyTorch's errors for a state dict that does not fit this optimizer's groups.
void check_state_fits(const OptimizerState& state, const std::vector<std::vector<Tensor>>& params,
                      const char* who);

// The part every optimizer shares: options per group, a typed state per parameter, and the
// conversions to and from a state dict. Options provide to_map(), update_from(map, who) and
// validate(who); ParamState provides to_map() and from_map(map, param, who).
template <class Options, class ParamState>
class OptimizerWithOptions : public Optimizer {
 public:
  const Options& defaults() const { return defaults_; }
  Options& options(size_t group) { return options_.at(group); }
  const Options& options(size_t group) const { return options_.at(group); }

  // torch.optim.Optimizer.add_param_group.
  void add_param_group(ParamGroup<Options> group) {
    Options o = group.options.value_or(defaults_);
    o.validate(name_);
    add_params(std::move(group.params));
    options_.push_back(o);
    state_.emplace_back(params_.back().size());
  }

  double lr(size_t group) const override { return options_.at(group).lr; }
  void set_lr(size_t group, double lr) override { options_.at(group).lr = lr; }

  OptimizerState state_dict() const override {
    OptimizerState s;
    int64_t index = 0;
    for (size_t g = 0; g < params_.size(); ++g) {
      ParamGroupState group{options_[g].to_map(), {}};
      for (size_t i = 0; i < params_[g].size(); ++i, ++index) {
        group.params.push_back(index);
        auto m = state_[g][i].to_map();
        if (!m.empty()) s.state.emplace(index, std::move(m));
      }
      s.param_groups.push_back(std::move(group));
    }
    return s;
  }

  void load_state_dict(const OptimizerState& s) override {
    check_state_fits(s, params_, name_);
    // Built aside and swapped in, so that a bad entry leaves the optimizer as it was.
    std::vector<Options> options = options_;
    std::vector<std::vector<ParamState>> state(params_.size());
    for (size_t g = 0; g < params_.size(); ++g) {
      options[g].update_from(s.param_groups[g].options, name_);
      options[g].validate(name_);
      for (size_t i = 0; i < params_[g].size(); ++i) {
        auto it = s.state.find(s.param_groups[g].params[i]);
        state[g].push_back(it == s.state.end()
                               ? ParamState()
                               : ParamState::from_map(it->second, params_[g][i], name_));
      }
    }
    options_ = std::move(options);
    state_ = std::move(state);
  }

 protected:
  OptimizerWithOptions(std::vector<ParamGroup<Options>> groups, Options defaults, const char* name)
      : Optimizer(name), defaults_(defaults) {
    defaults_.validate(name_);
    for (auto& g : groups) add_param_group(std::move(g));
    check_not_empty();
  }
  OptimizerWithOptions(std::vector<Tensor> params, Options defaults, const char* name)
      : Optimizer(name), defaults_(defaults) {
    defaults_.validate(name_);
    add_param_group({std::move(params), std::nullopt});
    check_not_empty();
  }

  Options defaults_;
  std::vector<Options> options_;
  std::vector<std::vector<ParamState>> state_;  // [group][param]
};

}  // namespace detail
}  // namespace kiln::optim
