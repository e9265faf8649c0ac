#pragma once
// The node kinds: OpNode runs a registry op's derivative formula; AccumulateGrad adds into a
// leaf's .grad; GraphRoot feeds the starting gradients of a backward pass.
#include "autograd/saved_variable.h"

#include <kiln/autograd/node.h>
#include <kiln/ops/registry.h>

#include <vector>

namespace kiln::autograd {

class OpNode final : public Node {
 public:
  // op: whose derivative runs; args: the call's arguments; outputs: its results. One edge per
  // tensor argument, list elements flattened, in argument order. save_self=false for ops that
  // overwrite their first argument (their derivative must not read it).
  OpNode(const ops::OpDef& op, const ops::Stack& args, std::vector<Edge> edges, bool save_self);
  // Records the forward outputs (after they got this node as grad_fn, so that a saved output
  // unpacks with its history for double backward). Call once, in output order.
  void save_outputs(const std::vector<Tensor>& outputs);

  std::string name() const override;
  std::vector<Tensor> apply(std::vector<Tensor>&& grads) override;
  void release_variables() override;

 private:
  // Where each argument's tensors sit in saved_inputs_: -1 for a non-tensor argument, else the
  // first index; lists take list_sizes_ consecutive entries.
  struct ArgSlot {
    int64_t first = -1;
    int64_t list_size = -1;  // -1: a single tensor
  };
  const ops::OpDef& op_;
  ops::Stack args_;  // non-tensor values kept as is; tensor slots emptied
  std::vector<ArgSlot> slots_;
  std::vector<SavedVariable> saved_inputs_;
  std::vector<SavedVariable> saved_outputs_;
  bool released_ = false;
  bool save_self_ = true;
};

class AccumulateGrad final : public Node {
 public:
  explicit AccumulateGrad(Tensor leaf);
  std::string name() const override { return "AccumulateGrad"; }
  std::vector<Tensor> apply(std::vector<Tensor>&& grads) override;
  const Tensor& leaf() const { return leaf_; }

 private:
  Tensor leaf_;
};

class GraphRoot final : public Node {
 public:
  GraphRoot(std::vector<Edge> roots, std::vector<Tensor> grads);
  std::string name() const override { return "GraphRoot"; }
  std::vector<Tensor> apply(std::vector<Tensor>&& /*grads*/) override { return grads_; }

 private:
  std::vector<Tensor> grads_;
};

// Whether backward() is running with create_graph (the accumulator then keeps history).
bool engine_creates_graph();

}  // namespace kiln::autograd
