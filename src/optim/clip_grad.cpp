// Gradient clipping, as torch.nn.utils.clip_grad: the same formula (coefficient
// max_norm / (total_norm + 1e-6) clamped to 1, always applied) in kiln ops, without reading the
// norm back to the host.
#include <kiln/autograd/grad_mode.h>
#include <kiln/core/error.h>
#include <kiln/ops/binary.h>
#include <kiln/ops/creation.h>
#include <kiln/ops/reduction.h>
#include <kiln/ops/shape.h>
#include <kiln/optim/clip_grad.h>

#include <cmath>

namespace kiln::optim {

Tensor clip_grad_norm_(const std::vector<Tensor>& parameters, double max_norm, double norm_type,
                       bool error_if_nonfinite) {
  autograd::NoGradGuard no_grad;
  std::vector<Tensor> grads;
  for (const auto& p : parameters)
    if (p.defined() && p.grad().defined()) grads.push_back(p.grad());
  if (grads.empty()) return scalar_tensor(0.0, TensorOptions(kFloat32));

  std::vector<Tensor> norms;
  norms.reserve(grads.size());
  for (const auto& g : grads) norms.push_back(norm(g, norm_type));
  DType dt = norms[0].dtype();
  for (const auto& n : norms) dt = promote_types(dt, n.dtype());
  for (auto& n : norms) n = n.to(dt);
  Tensor total_norm = norm(stack(norms), norm_type);

  if (error_if_nonfinite) {
    double v = total_norm.item<double>();
    KILN_CHECK(std::isfinite(v),
               "clip_grad_norm_: The total norm of order {} for gradients from `parameters` is "
               "non-finite, so it cannot be clipped. To disable this error and scale the gradients "
               "by the non-finite norm anyway, set `error_if_nonfinite=False`",
               norm_type);
  }
  Tensor clip_coef = (max_norm / (total_norm + 1e-6)).clamp_max(1.0);
  for (auto& g : grads) {
    Tensor grad = g;
    grad.mul_(clip_coef.to(grad.dtype()));
  }
  return total_norm;
}

void clip_grad_value_(const std::vector<Tensor>& parameters, double clip_value) {
  autograd::NoGradGuard no_grad;
  for (const auto& p : parameters) {
    if (!p.defined() || !p.grad().defined()) continue;
    Tensor grad = p.grad();
    grad.clamp_(-clip_value, clip_value);
  }
}

}  // namespace kiln::optim
