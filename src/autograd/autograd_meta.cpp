#include "autograd/autograd_meta.h"

#include "autograd/functions.h"

#include <mutex>

namespace kiln::autograd {

AutogradMeta* meta_if(const Tensor& t) {
  return static_cast<AutogradMeta*>(t.impl()->autograd_meta());
}

AutogradMeta& meta_of(const Tensor& t) {
  if (AutogradMeta* m = meta_if(t)) return *m;
  auto m = std::make_shared<AutogradMeta>();
  AutogradMeta& ref = *m;
  t.impl()->set_autograd_meta(std::move(m));
  return ref;
}

std::shared_ptr<Node> grad_accumulator(const Tensor& leaf) {
  // Two threads running backward over one leaf must share its accumulator.
  static std::mutex mutex;
  std::lock_guard<std::mutex> lock(mutex);
  AutogradMeta& m = meta_of(leaf);
  if (auto existing = m.grad_accumulator.lock()) return existing;
  // The accumulator holds the leaf through an alias sharing its TensorImpl (and so its meta).
  auto acc = std::make_shared<AccumulateGrad>(leaf);
  m.grad_accumulator = acc;
  return acc;
}

void set_history(const Tensor& t, const std::shared_ptr<Node>& fn, uint32_t output_nr) {
  AutogradMeta& m = meta_of(t);
  m.grad_fn = fn;
  m.output_nr = output_nr;
  t.impl()->set_requires_grad(true);
}

}  // namespace kiln::autograd
