// Adam's options, state and step; the update itself is in adam_update.h (shared with AdamW).
#include <kiln/optim/adam.h>

#include "optim/adam_update.h"

namespace kiln::optim {

OptionMap AdamOptions::to_map() const { return detail::adam_options_to_map(*this); }
void AdamOptions::update_from(const OptionMap& map, const char* who) {
  detail::adam_options_update_from(*this, map, who);
}
void AdamOptions::validate(const char* who) const { detail::adam_options_validate(*this, who); }

std::map<std::string, Tensor> AdamParamState::to_map() const {
  if (!exp_avg.defined()) return {};
  std::map<std::string, Tensor> m{
      {"step", detail::step_tensor(step)}, {"exp_avg", exp_avg}, {"exp_avg_sq", exp_avg_sq}};
  if (max_exp_avg_sq.defined()) m.emplace("max_exp_avg_sq", max_exp_avg_sq);
  return m;
}

AdamParamState AdamParamState::from_map(const std::map<std::string, Tensor>& map,
                                        const Tensor& param, const char* who) {
  AdamParamState s;
  s.step = detail::read_step(map, who);
  s.exp_avg = detail::read_state_tensor(map, "exp_avg", param, who);
  s.exp_avg_sq = detail::read_state_tensor(map, "exp_avg_sq", param, who);
  s.max_exp_avg_sq = detail::read_state_tensor(map, "max_exp_avg_sq", param, who);
  KILN_CHECK(s.exp_avg.defined() == s.exp_avg_sq.defined(),
             "{}.load_state_dict: a parameter's state has {} but not {}", who,
             s.exp_avg.defined() ? "exp_avg" : "exp_avg_sq",
             s.exp_avg.defined() ? "exp_avg_sq" : "exp_avg");
  return s;
}

namespace detail {
void maximum_into(Tensor& a, const Tensor& b) {
  static const auto& op = ops::OpRegistry::instance().get("maximum.out");
  ops::call(op, {a, b, a});
}
}  // namespace detail

void Adam::step() {
  detail::adam_step(params_, options_, state_, /*decoupled_weight_decay=*/false);
}

}  // namespace kiln::optim
