#include <kiln/amp/grad_scaler.h>
#include <kiln/autograd/autograd.h>
#include <kiln/core/error.h>
#include <kiln/ops/reduction.h>
#include <kiln/ops/unary.h>

#include <cmath>

namespace kiln {

GradScaler::GradScaler(Options options) : options_(options), scale_(options.init_scale) {
  KILN_CHECK(options_.init_scale > 0 && std::isfinite(options_.init_scale),
             "GradScaler: expected a positive finite init_scale, got {}", options_.init_scale);
  KILN_CHECK(options_.growth_factor > 1, "GradScaler: expected growth_factor > 1, got {}",
             options_.growth_factor);
  KILN_CHECK(options_.backoff_factor > 0 && options_.backoff_factor < 1,
             "GradScaler: expected 0 < backoff_factor < 1, got {}", options_.backoff_factor);
  KILN_CHECK(options_.growth_interval > 0, "GradScaler: expected growth_interval > 0, got {}",
             options_.growth_interval);
}

Tensor GradScaler::scale(const Tensor& outputs) const {
  if (!options_.enabled) return outputs;
  return outputs * scale_;
}

void GradScaler::unscale_(optim::Optimizer& optimizer) {
  if (!options_.enabled) return;
  KILN_CHECK(!found_inf_.count(&optimizer),
             "GradScaler.unscale_: already called for this optimizer since the last update()");
  autograd::NoGradGuard no_grad;
  const double inverse = 1.0 / scale_;
  // One flag per device, read once below: a single synchronization per step on a GPU.
  std::map<std::string, Tensor> any_non_finite;
  for (size_t g = 0; g < optimizer.num_param_groups(); ++g) {
    for (const Tensor& p : optimizer.params(g)) {
      if (!p.grad().defined()) continue;
      Tensor grad = p.grad();
      const Tensor bad = grad.isfinite().logical_not().any();
      Tensor& flag = any_non_finite[grad.device().str()];
      flag = flag.defined() ? flag.logical_or(bad) : bad;
      grad.mul_(inverse);
    }
  }
  bool found = false;
  for (const auto& [device, flag] : any_non_finite) found = found || flag.item<bool>();
  found_inf_[&optimizer] = found;
}

bool GradScaler::step(optim::Optimizer& optimizer) {
  if (!options_.enabled) {
    optimizer.step();
    return true;
  }
  if (!found_inf_.count(&optimizer)) unscale_(optimizer);
  if (found_inf_.at(&optimizer)) return false;
  optimizer.step();
  return true;
}

void GradScaler::update() {
  if (!options_.enabled) return;
  KILN_CHECK(!found_inf_.empty(),
             "GradScaler.update: no unscale_() or step() since the last update() (as PyTorch, "
             "update() follows a step)");
  bool found = false;
  for (const auto& [optimizer, inf] : found_inf_) found = found || inf;
  if (found) {
    scale_ *= options_.backoff_factor;
    growth_tracker_ = 0;
  } else if (++growth_tracker_ == options_.growth_interval) {
    scale_ *= options_.growth_factor;
    growth_tracker_ = 0;
  }
  found_inf_.clear();
}

}  // namespace kiln
