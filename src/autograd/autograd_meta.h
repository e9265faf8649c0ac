#pragma once
// What autograd keeps on a tensor (in TensorImpl's autograd slot): its gradient, the node that
// produced it, the accumulator of a leaf, and the hooks registered on it.
#include <kiln/autograd/node.h>
#include <kiln/core/tensor.h>

#include <memory>
#include <vector>

namespace kiln::autograd {

struct TensorHook {
  size_t handle;
  GradHook fn;
};

struct AutogradMeta final : AutogradMetaInterface {
  Tensor grad;
  std::shared_ptr<Node> grad_fn;
  std::weak_ptr<Node> grad_accumulator;  // leaves only; the accumulator owns the leaf
  uint32_t output_nr = 0;
  bool retains_grad = false;
  size_t retain_grad_hook = 0;
  std::vector<TensorHook> leaf_hooks;  // hooks of a leaf, run by its accumulator
};

// The tensor's meta, or null when autograd never touched it.
AutogradMeta* meta_if(const Tensor& t);
// The tensor's meta, created on first use.
AutogradMeta& meta_of(const Tensor& t);

// The accumulator node of a leaf that requires grad (created on first use, shared after).
std::shared_ptr<Node> grad_accumulator(const Tensor& leaf);

// Makes t an output of fn (slot output_nr): sets grad_fn and requires_grad.
void set_history(const Tensor& t, const std::shared_ptr<Node>& fn, uint32_t output_nr);

// Handles for hooks, unique per process.
size_t next_hook_handle();

}  // namespace kiln::autograd
