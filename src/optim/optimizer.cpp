// The optimizer base: parameter bookkeeping, zero_grad, and the state-dict helpers every
// optimizer shares.
#include <kiln/autograd/grad_mode.h>
#include <kiln/core/error.h>
#include <kiln/ops/creation.h>
#include <kiln/optim/optimizer.h>

#include <unordered_set>

namespace kiln::optim {

const std::vector<Tensor>& Optimizer::params(size_t group) const {
  KILN_CHECK(group < params_.size(), "{}: param group {} out of range ({} groups)", name_, group,
             params_.size());
  return params_[group];
}

std::vector<Tensor> Optimizer::parameters() const {
  std::vector<Tensor> all;
  for (const auto& g : params_) all.insert(all.end(), g.begin(), g.end());
  return all;
}

double Optimizer::momentum(size_t) const {
  throw_error(fmt::format("{}: the optimizer has no momentum option", name_));
}
void Optimizer::set_momentum(size_t, double) {
  throw_error(fmt::format("{}: the optimizer has no momentum option", name_));
}

void Optimizer::add_params(std::vector<Tensor> params) {
  std::unordered_set<const TensorImpl*> seen;
  for (const auto& g : params_)
    for (const auto& p : g) seen.insert(p.impl());
  for (size_t i = 0; i < params.size(); ++i) {
    const Tensor& p = params[i];
    KILN_CHECK(p.defined(), "{}: parameter {} of the new group is an undefined tensor", name_, i);
    KILN_CHECK(p.is_floating_point(),
               "{}: can only optimize floating point tensors, but parameter {} has dtype {}", name_,
               i, dtype_name(p.dtype()));
    KILN_CHECK(p.is_leaf(), "{}: can't optimize a non-leaf Tensor (parameter {})", name_, i);
    KILN_CHECK(seen.insert(p.impl()).second,
               "{}: some parameters appear in more than one parameter group (parameter {})", name_,
               i);
  }
  params_.push_back(std::move(params));
}

void Optimizer::check_not_empty() const {
  size_t n = 0;
  for (const auto& g : params_) n += g.size();
  KILN_CHECK(n > 0, "{}: optimizer got an empty parameter list", name_);
}

void Optimizer::zero_grad(bool set_to_none) {
  autograd::NoGradGuard no_grad;
  for (auto& group : params_) {
    for (auto& p : group) {
      if (!p.grad().defined()) continue;
      Tensor& g = p.mutable_grad();
      if (set_to_none) {
        g = Tensor();
      } else {
        if (g.grad_fn()) g = g.detach();  // a grad made with create_graph: drop its history
        g.zero_();
      }
    }
  }
}

namespace detail {

namespace {
template <class T>
const T& option_as(const OptionValue& v, const std::string& key, const char* who,
                   const char* expected) {
  const T* p = std::get_if<T>(&v);
  KILN_CHECK(p != nullptr, "{}.load_state_dict: option '{}' should be {}", who, key, expected);
  return *p;
}
}  // namespace

void read_option(const OptionMap& map, const std::string& key, double& value, const char* who) {
  auto it = map.find(key);
  if (it != map.end()) value = option_as<double>(it->second, key, who, "a number");
}
void read_option(const OptionMap& map, const std::string& key, bool& value, const char* who) {
  auto it = map.find(key);
  if (it != map.end()) value = option_as<bool>(it->second, key, who, "a bool");
}
void read_option(const OptionMap& map, const std::string& key, std::vector<double>& value,
                 const char* who) {
  auto it = map.find(key);
  if (it == map.end()) return;
  const auto& v = option_as<std::vector<double>>(it->second, key, who, "a tuple of numbers");
  KILN_CHECK(v.size() == value.size(),
             "{}.load_state_dict: option '{}' should have {} values, got {}", who, key,
             value.size(), v.size());
  value = v;
}

Tensor read_state_tensor(const std::map<std::string, Tensor>& map, const std::string& key,
                         const Tensor& param, const char* who) {
  auto it = map.find(key);
  if (it == map.end() || !it->second.defined()) return Tensor();
  const Tensor& t = it->second;
  KILN_CHECK(IntList(t.sizes()) == param.sizes(),
             "{}.load_state_dict: state '{}' has shape [{}] but its parameter has shape [{}]", who,
             key, fmt::join(t.sizes(), ", "), fmt::join(param.sizes(), ", "));
  autograd::NoGradGuard no_grad;
  // A copy on the parameter's device, in its dtype (as PyTorch's load_state_dict casts state):
  // the optimizer updates its state in place and must not write into the caller's dict.
  return t.to(TensorOptions(param.dtype()).device(param.device()), /*copy=*/true).contiguous();
}

double read_step(const std::map<std::string, Tensor>& map, const char* who) {
  auto it = map.find("step");
  if (it == map.end() || !it->second.defined()) return 0;
  KILN_CHECK(it->second.numel() == 1,
             "{}.load_state_dict: state 'step' should hold one number, got {}", who,
             it->second.numel());
  return it->second.item<double>();
}

Tensor step_tensor(double step) { return scalar_tensor(step, TensorOptions(kFloat32)); }

void check_state_fits(const OptimizerState& state, const std::vector<std::vector<Tensor>>& params,
                      const char* who) {
  KILN_CHECK(state.param_groups.size() == params.size(),
             "{}.load_state_dict: loaded state dict has a different number of parameter groups "
             "({} vs {})",
             who, state.param_groups.size(), params.size());
  for (size_t g = 0; g < params.size(); ++g) {
    KILN_CHECK(
        state.param_groups[g].params.size() == params[g].size(),
        "{}.load_state_dict: loaded state dict contains a parameter group that doesn't match "
        "the size of optimizer's group (group {}: {} vs {} parameters)",
        who, g, state.param_groups[g].params.size(), params[g].size());
  }
}

}  // namespace detail
}  // namespace kiln::optim
