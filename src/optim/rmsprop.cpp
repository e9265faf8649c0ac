// RMSprop's update, as torch.optim.RMSprop's single-tensor path:
//   d = g (+ weight_decay * p);  d = -d if maximize
//   v = alpha * v + (1 - alpha) * d * d
//   centered: a = alpha * a + (1 - alpha) * d;  avg = sqrt(v - a * a) + eps
//   else:     avg = sqrt(v) + eps
//   momentum: buf = momentum * buf + d / avg;  p -= lr * buf
//   else:     p -= lr * d / avg
#include <kiln/autograd/grad_mode.h>
#include <kiln/core/error.h>
#include <kiln/ops/creation.h>
#include <kiln/optim/rmsprop.h>

namespace kiln::optim {

OptionMap RMSpropOptions::to_map() const {
  return {{"lr", lr},
          {"alpha", alpha},
          {"eps", eps},
          {"weight_decay", weight_decay},
          {"momentum", momentum},
          {"centered", centered},
          {"maximize", maximize}};
}

void RMSpropOptions::update_from(const OptionMap& map, const char* who) {
  detail::read_option(map, "lr", lr, who);
  detail::read_option(map, "alpha", alpha, who);
  detail::read_option(map, "eps", eps, who);
  detail::read_option(map, "weight_decay", weight_decay, who);
  detail::read_option(map, "momentum", momentum, who);
  detail::read_option(map, "centered", centered, who);
  detail::read_option(map, "maximize", maximize, who);
}

void RMSpropOptions::validate(const char* who) const {
  KILN_CHECK(lr >= 0, "{}: Invalid learning rate: {}", who, lr);
  KILN_CHECK(eps >= 0, "{}: Invalid epsilon value: {}", who, eps);
  KILN_CHECK(momentum >= 0, "{}: Invalid momentum value: {}", who, momentum);
  KILN_CHECK(weight_decay >= 0, "{}: Invalid weight_decay value: {}", who, weight_decay);
  KILN_CHECK(alpha >= 0, "{}: Invalid alpha value: {}", who, alpha);
}

std::map<std::string, Tensor> RMSpropParamState::to_map() const {
  if (!square_avg.defined()) return {};
  std::map<std::string, Tensor> m{{"step", detail::step_tensor(step)}, {"square_avg", square_avg}};
  if (momentum_buffer.defined()) m.emplace("momentum_buffer", momentum_buffer);
  if (grad_avg.defined()) m.emplace("grad_avg", grad_avg);
  return m;
}

RMSpropParamState RMSpropParamState::from_map(const std::map<std::string, Tensor>& map,
                                              const Tensor& param, const char* who) {
  RMSpropParamState s;
  s.step = detail::read_step(map, who);
  s.square_avg = detail::read_state_tensor(map, "square_avg", param, who);
  s.momentum_buffer = detail::read_state_tensor(map, "momentum_buffer", param, who);
  s.grad_avg = detail::read_state_tensor(map, "grad_avg", param, who);
  return s;
}

void RMSprop::step() {
  autograd::NoGradGuard no_grad;
  for (size_t g = 0; g < params_.size(); ++g) {
    const RMSpropOptions& o = options_[g];
    for (size_t i = 0; i < params_[g].size(); ++i) {
      Tensor& p = params_[g][i];
      const Tensor& grad = p.grad();
      if (!grad.defined()) continue;
      RMSpropParamState& s = state_[g][i];
      if (!s.square_avg.defined()) s.square_avg = zeros_like(p);
      if (o.momentum > 0 && !s.momentum_buffer.defined()) s.momentum_buffer = zeros_like(p);
      if (o.centered && !s.grad_avg.defined()) s.grad_avg = zeros_like(p);
      s.step += 1;

      // d_sign * d is the gradient; the sign is folded into scalars where d is used linearly.
      Tensor d = grad;
      double d_sign = o.maximize ? -1.0 : 1.0;
      if (o.weight_decay != 0) {
        d = o.maximize ? grad.neg().add_(p, o.weight_decay) : grad.add(p, o.weight_decay);
        d_sign = 1.0;
      }
      s.square_avg.mul_(o.alpha).addcmul_(d, d, 1 - o.alpha);
      Tensor avg;
      if (o.centered) {
        if (d_sign > 0) {
          s.grad_avg.lerp_(d, 1 - o.alpha);
        } else {
          s.grad_avg.mul_(o.alpha).add_(d, -(1 - o.alpha));
        }
        avg = s.square_avg.addcmul(s.grad_avg, s.grad_avg, -1).sqrt_();
      } else {
        avg = s.square_avg.sqrt();
      }
      avg.add_(o.eps);
      if (o.momentum > 0) {
        s.momentum_buffer.mul_(o.momentum).addcdiv_(d, avg, d_sign);
        p.add_(s.momentum_buffer, -o.lr);
      } else {
        p.addcdiv_(d, avg, -o.lr * d_sign);
      }
    }
  }
}

}  // namespace kiln::optim
