#pragma once
// The Adam update shared by Adam and AdamW (torch.optim.adam's single-tensor path):
//   step += 1
//   p *= 1 - lr * wd                       (AdamW: decoupled)   |  g += wd * p   (Adam)
//   m = beta1 * m + (1 - beta1) * g
//   v = beta2 * v + (1 - beta2) * g * g
//   vmax = max(vmax, v)                    (amsgrad; the denominator then uses vmax)
//   p -= lr / (1 - beta1^step) * m / (sqrt(v) / sqrt(1 - beta2^step) + eps)
// with g negated when maximizing. The only temporary is the denominator (and the decayed
// gradient for Adam with weight decay), as in PyTorch.
#include "optim/device_updates.h"

#include <kiln/autograd/grad_mode.h>
#include <kiln/core/error.h>
#include <kiln/ops/binary.h>
#include <kiln/ops/creation.h>
#include <kiln/ops/registry.h>
#include <kiln/optim/adam.h>

#include <cmath>

namespace kiln::optim::detail {

// torch.maximum(a, b, out=a) without a temporary.
void maximum_into(Tensor& a, const Tensor& b);

template <class Options>
OptionMap adam_options_to_map(const Options& o) {
  return {{"lr", o.lr},           {"betas", o.betas},
          {"eps", o.eps},         {"weight_decay", o.weight_decay},
          {"amsgrad", o.amsgrad}, {"maximize", o.maximize}};
}

template <class Options>
void adam_options_update_from(Options& o, const OptionMap& map, const char* who) {
  read_option(map, "lr", o.lr, who);
  read_option(map, "betas", o.betas, who);
  read_option(map, "eps", o.eps, who);
  read_option(map, "weight_decay", o.weight_decay, who);
  read_option(map, "amsgrad", o.amsgrad, who);
  read_option(map, "maximize", o.maximize, who);
}

template <class Options>
void adam_options_validate(const Options& o, const char* who) {
  KILN_CHECK(o.lr >= 0, "{}: Invalid learning rate: {}", who, o.lr);
  KILN_CHECK(o.eps >= 0, "{}: Invalid epsilon value: {}", who, o.eps);
  KILN_CHECK(o.betas.size() == 2, "{}: betas should hold two values, got {}", who, o.betas.size());
  KILN_CHECK(o.betas[0] >= 0 && o.betas[0] < 1, "{}: Invalid beta parameter at index 0: {}", who,
             o.betas[0]);
  KILN_CHECK(o.betas[1] >= 0 && o.betas[1] < 1, "{}: Invalid beta parameter at index 1: {}", who,
             o.betas[1]);
  KILN_CHECK(o.weight_decay >= 0, "{}: Invalid weight_decay value: {}", who, o.weight_decay);
}

// The whole update in one pass (added to `pending`, run at the end of the step: adam_kernel.h on
// the CPU) where every tensor is dense float32 and no running maximum is kept; false (nothing
// done) otherwise.
bool fused_adam_step(Tensor& param, const Tensor& grad, AdamParamState& state, double lr,
                     const std::vector<double>& betas, double eps, double weight_decay,
                     bool amsgrad, bool maximize, bool decoupled_weight_decay,
                     PendingUpdates& pending);

template <class Options>
bool fused_adam_step(Tensor& p, const Tensor& grad, AdamParamState& s, const Options& o,
                     bool decoupled_weight_decay, PendingUpdates& pending) {
  return fused_adam_step(p, grad, s, o.lr, o.betas, o.eps, o.weight_decay, o.amsgrad, o.maximize,
                         decoupled_weight_decay, pending);
}

template <class Options>
void adam_step(std::vector<std::vector<Tensor>>& params, const std::vector<Options>& options,
               std::vector<std::vector<AdamParamState>>& state, bool decoupled_weight_decay) {
  autograd::NoGradGuard no_grad;
  PendingUpdates pending;  // the one-pass updates, per device, after the loop
  for (size_t g = 0; g < params.size(); ++g) {
    const Options& o = options[g];
    const double beta1 = o.betas[0], beta2 = o.betas[1];
    for (size_t i = 0; i < params[g].size(); ++i) {
      Tensor& p = params[g][i];
      const Tensor& grad = p.grad();
      if (!grad.defined()) continue;
      AdamParamState& s = state[g][i];
      if (!s.exp_avg.defined()) {
        s.exp_avg = zeros_like(p);
        s.exp_avg_sq = zeros_like(p);
        if (o.amsgrad) s.max_exp_avg_sq = zeros_like(p);
      }
      if (o.amsgrad && !s.max_exp_avg_sq.defined()) s.max_exp_avg_sq = zeros_like(p);
      s.step += 1;
      if (fused_adam_step(p, grad, s, o, decoupled_weight_decay, pending)) continue;

      // d_sign * d is the gradient the moments see.
      Tensor d = grad;
      double d_sign = o.maximize ? -1.0 : 1.0;
      if (o.weight_decay != 0) {
        if (decoupled_weight_decay) {
          p.mul_(1 - o.lr * o.weight_decay);
        } else {
          d = o.maximize ? grad.neg().add_(p, o.weight_decay) : grad.add(p, o.weight_decay);
          d_sign = 1.0;
        }
      }
      if (d_sign > 0) {
        s.exp_avg.lerp_(d, 1 - beta1);
      } else {
        s.exp_avg.mul_(beta1).add_(d, -(1 - beta1));
      }
      s.exp_avg_sq.mul_(beta2).addcmul_(d, d, 1 - beta2);

      const double bias_correction1 = 1 - std::pow(beta1, s.step);
      const double bias_correction2 = 1 - std::pow(beta2, s.step);
      const double step_size = o.lr / bias_correction1;
      const double bias_correction2_sqrt = std::sqrt(bias_correction2);
      const Tensor* second = &s.exp_avg_sq;
      if (o.amsgrad) {
        maximum_into(s.max_exp_avg_sq, s.exp_avg_sq);
        second = &s.max_exp_avg_sq;
      }
      Tensor denom = second->sqrt();
      denom.div_(bias_correction2_sqrt).add_(o.eps);
      p.addcdiv_(s.exp_avg, denom, -step_size);
    }
  }
  pending.run();
}

}  // namespace kiln::optim::detail
