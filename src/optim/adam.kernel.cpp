#include "optim/adam_kernel.h"

#include "ops/cpu/vec.h"
#include "optim/parallel_vectors.h"

#include <cmath>

namespace kiln::cpu::KILN_CAP_NAMESPACE {
namespace {

using optim::detail::AdamUpdateArgs;

// PyTorch's lerp (binary.kernel.cpp's formulas): the branch is chosen by |weight|, here uniform.
template <typename V>
V lerp_uniform(V a, V b, float w) {
  return std::abs(w) < 0.5F ? a + V(w) * (b - a) : b - (b - a) * (V(1.0F) - V(w));
}

inline float sqrt_of(float x) { return std::sqrt(x); }
inline Vec<float> sqrt_of(Vec<float> x) { return sqrt(x); }

// One element (V = float) or one vector of them (V = Vec<float>), as adam_update.h's ops do it.
template <typename V>
void update(const AdamUpdateArgs& a, V& p, V g, V& m, V& v) {
  if (a.decay_param) p = p * V(a.param_scale);
  V d = g;
  if (a.decay_grad) d = (a.negate_grad ? -g : g) + V(a.grad_decay) * p;
  if (a.lerp_form) {
    m = lerp_uniform(m, d, a.lerp_weight);
  } else {
    m = m * V(a.beta1);
    m = m + V(a.first_scale) * d;
  }
  v = v * V(a.beta2);
  v = v + V(a.second_scale) * d * d;
  const V denom = sqrt_of(v) / V(a.bias_correction2_sqrt) + V(a.eps);
  p = p + V(a.neg_step_size) * m / denom;
}

void adam_update_kernel(const AdamUpdateArgs& a) {
  using V = Vec<float>;
  optim::detail::parallel_vectors<V::size>(
      a.n,
      [&a](int64_t i) {
        V p = V::loadu(a.param + i), m = V::loadu(a.exp_avg + i), v = V::loadu(a.exp_avg_sq + i);
        update(a, p, V::loadu(a.grad + i), m, v);
        p.storeu(a.param + i);
        m.storeu(a.exp_avg + i);
        v.storeu(a.exp_avg_sq + i);
      },
      [&a](int64_t i) { update(a, a.param[i], a.grad[i], a.exp_avg[i], a.exp_avg_sq[i]); });
}

}  // namespace

KILN_REGISTER_KERNEL(optim::detail::adam_update_kernels, &adam_update_kernel);

}  // namespace kiln::cpu::KILN_CAP_NAMESPACE
