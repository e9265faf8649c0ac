#include "optim/sgd_kernel.h"

#include "ops/cpu/vec.h"
#include "optim/parallel_vectors.h"

namespace kiln::cpu::KILN_CAP_NAMESPACE {
namespace {

using optim::detail::SGDUpdateArgs;

// One element (V = float) or one vector of them (V = Vec<float>), as sgd.cpp's ops do it.
template <typename V>
void update(const SGDUpdateArgs& a, V& p, V g, V& buf) {
  V d = g;
  if (a.decay_grad) d = (a.negate_grad ? -g : g) + V(a.grad_decay) * p;
  buf = buf * V(a.momentum);
  buf = buf + V(a.buf_scale) * d;
  if (a.nesterov) p = p + V(a.grad_step) * d;
  p = p + V(a.buf_step) * buf;
}

void sgd_update_kernel(const SGDUpdateArgs& a) {
  using V = Vec<float>;
  optim::detail::parallel_vectors<V::size>(
      a.n,
      [&a](int64_t i) {
        V p = V::loadu(a.param + i), buf = V::loadu(a.momentum_buffer + i);
        update(a, p, V::loadu(a.grad + i), buf);
        p.storeu(a.param + i);
        buf.storeu(a.momentum_buffer + i);
      },
      [&a](int64_t i) { update(a, a.param[i], a.grad[i], a.momentum_buffer[i]); });
}

}  // namespace

KILN_REGISTER_KERNEL(optim::detail::sgd_update_kernels, &sgd_update_kernel);

}  // namespace kiln::cpu::KILN_CAP_NAMESPACE
