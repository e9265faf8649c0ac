// Adam(W)'s single-pass update (adam_kernel.h) behind adam_update.h's step.
#include "optim/adam_kernel.h"
#include "optim/adam_update.h"
#include "optim/device_updates.h"
#include "optim/one_pass_update.h"

#include <cmath>

namespace kiln::optim::detail {

cpu::KernelDispatch<AdamUpdateKernel> adam_update_kernels;

bool fused_adam_step(Tensor& param, const Tensor& grad, AdamParamState& state, double lr,
                     const std::vector<double>& betas, double eps, double weight_decay,
                     bool amsgrad, bool maximize, bool decoupled_weight_decay,
                     PendingUpdates& pending) {
  if (amsgrad) return false;
  const std::optional<Device> device =
      one_pass_device({param, grad, state.exp_avg, state.exp_avg_sq});
  if (!device) return false;
  const double beta1 = betas[0], beta2 = betas[1];
  AdamUpdateArgs a;
  a.param = param.data_ptr<float>();
  a.grad = grad.data_ptr<float>();
  a.exp_avg = state.exp_avg.data_ptr<float>();
  a.exp_avg_sq = state.exp_avg_sq.data_ptr<float>();
  a.n = param.numel();
  // The scalars as the elementwise ops see them: converted to float.
  bool grad_sign_positive = !maximize;
  if (weight_decay != 0) {
    if (decoupled_weight_decay) {
      a.decay_param = true;
      a.param_scale = static_cast<float>(1 - lr * weight_decay);
    } else {
      a.decay_grad = true;
      a.negate_grad = maximize;
      a.grad_decay = static_cast<float>(weight_decay);
      grad_sign_positive = true;
    }
  }
  a.lerp_form = grad_sign_positive;
  a.lerp_weight = static_cast<float>(1 - beta1);
  a.beta1 = static_cast<float>(beta1);
  a.first_scale = static_cast<float>(-(1 - beta1));
  a.beta2 = static_cast<float>(beta2);
  a.second_scale = static_cast<float>(1 - beta2);
  const double bias_correction1 = 1 - std::pow(beta1, state.step);
  const double bias_correction2 = 1 - std::pow(beta2, state.step);
  a.bias_correction2_sqrt = static_cast<float>(std::sqrt(bias_correction2));
  a.eps = static_cast<float>(eps);
  a.neg_step_size = static_cast<float>(-(lr / bias_correction1));
  pending.add(*device, a);
  param.impl()->bump_version();
  state.exp_avg.impl()->bump_version();
  state.exp_avg_sq.impl()->bump_version();
  return true;
}

}  // namespace kiln::optim::detail
