// SGD's update, as torch.optim.SGD's single-tensor path:
//   d = g (+ weight_decay * p);  d = -d if maximize
//   buf = d on the first step, else momentum * buf + (1 - dampening) * d
//   p -= lr * (nesterov ? d + momentum * buf : buf)      (p -= lr * d without momentum)
// The sign of maximize is folded into the scalar factors where no weight decay forces a
// temporary, so the common paths run in place without allocating.
#include "optim/device_updates.h"
#include "optim/one_pass_update.h"
#include "optim/sgd_kernel.h"

#include <kiln/autograd/grad_mode.h>
#include <kiln/core/error.h>
#include <kiln/optim/sgd.h>

namespace kiln::optim {

namespace detail {
cpu::KernelDispatch<SGDUpdateKernel> sgd_update_kernels;
}  // namespace detail

namespace {

// The momentum update (an existing buffer) in one pass where one_pass_device allows (added to
// `pending`, run at the end of the step); false (nothing done) otherwise.
bool fused_momentum_step(Tensor& p, const Tensor& grad, Tensor& buf, const SGDOptions& o,
                         detail::PendingUpdates& pending) {
  const std::optional<Device> device = detail::one_pass_device({p, grad, buf});
  if (!device) return false;
  detail::SGDUpdateArgs a;
  a.param = p.data_ptr<float>();
  a.grad = grad.data_ptr<float>();
  a.momentum_buffer = buf.data_ptr<float>();
  a.n = p.numel();
  // The scalars as step()'s elementwise ops see them: converted to float.
  double d_sign = o.maximize ? -1.0 : 1.0;
  if (o.weight_decay != 0) {
    a.decay_grad = true;
    a.negate_grad = o.maximize;
    a.grad_decay = static_cast<float>(o.weight_decay);
    d_sign = 1.0;
  }
  a.momentum = static_cast<float>(o.momentum);
  a.buf_scale = static_cast<float>(d_sign * (1 - o.dampening));
  a.nesterov = o.nesterov;
  a.grad_step = static_cast<float>(-o.lr * d_sign);
  a.buf_step = static_cast<float>(o.nesterov ? -o.lr * o.momentum : -o.lr);
  pending.add(*device, a);
  p.impl()->bump_version();
  buf.impl()->bump_version();
  return true;
}

}  // namespace

OptionMap SGDOptions::to_map() const {
  return {{"lr", lr},
          {"momentum", momentum},
          {"dampening", dampening},
          {"weight_decay", weight_decay},
          {"nesterov", nesterov},
          {"maximize", maximize}};
}

void SGDOptions::update_from(const OptionMap& map, const char* who) {
  detail::read_option(map, "lr", lr, who);
  detail::read_option(map, "momentum", momentum, who);
  detail::read_option(map, "dampening", dampening, who);
  detail::read_option(map, "weight_decay", weight_decay, who);
  detail::read_option(map, "nesterov", nesterov, who);
  detail::read_option(map, "maximize", maximize, who);
}

void SGDOptions::validate(const char* who) const {
  KILN_CHECK(lr >= 0, "{}: Invalid learning rate: {}", who, lr);
  KILN_CHECK(momentum >= 0, "{}: Invalid momentum value: {}", who, momentum);
  KILN_CHECK(weight_decay >= 0, "{}: Invalid weight_decay value: {}", who, weight_decay);
  KILN_CHECK(!nesterov || (momentum > 0 && dampening == 0),
             "{}: Nesterov momentum requires a momentum and zero dampening (momentum {}, "
             "dampening {})",
             who, momentum, dampening);
}

std::map<std::string, Tensor> SGDParamState::to_map() const {
  if (!momentum_buffer.defined()) return {};
  return {{"momentum_buffer", momentum_buffer}};
}

SGDParamState SGDParamState::from_map(const std::map<std::string, Tensor>& map, const Tensor& param,
                                      const char* who) {
  return {detail::read_state_tensor(map, "momentum_buffer", param, who)};
}

void SGD::step() {
  autograd::NoGradGuard no_grad;
  detail::PendingUpdates pending;  // the one-pass updates, per device, after the loop
  for (size_t g = 0; g < params_.size(); ++g) {
    const SGDOptions& o = options_[g];
    for (size_t i = 0; i < params_[g].size(); ++i) {
      Tensor& p = params_[g][i];
      const Tensor& grad = p.grad();
      if (!grad.defined()) continue;
      Tensor& buf = state_[g][i].momentum_buffer;
      // Before any temporary: the one-pass update decays the gradient itself.
      if (o.momentum != 0 && buf.defined() && fused_momentum_step(p, grad, buf, o, pending)) {
        continue;
      }
      // d_sign * d is the (weight-decayed, maximize-negated) gradient.
      Tensor d = grad;
      double d_sign = o.maximize ? -1.0 : 1.0;
      if (o.weight_decay != 0) {
        d = o.maximize ? grad.neg().add_(p, o.weight_decay) : grad.add(p, o.weight_decay);
        d_sign = 1.0;
      }
      if (o.momentum == 0) {
        p.add_(d, -o.lr * d_sign);
        continue;
      }
      if (!buf.defined()) {
        buf = d_sign > 0 ? d.clone() : d.neg();
      } else {
        buf.mul_(o.momentum).add_(d, d_sign * (1 - o.dampening));
      }
      if (o.nesterov) {
        // p -= lr * (d + momentum * buf), as two in-place updates instead of a temporary.
        p.add_(d, -o.lr * d_sign).add_(buf, -o.lr * o.momentum);
      } else {
        p.add_(buf, -o.lr);
      }
    }
  }
  pending.run();
}

}  // namespace kiln::optim
