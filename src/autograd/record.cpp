// Recording: the hook the op dispatcher calls for an op whose tensor arguments require grad. It
// runs the op below autograd and attaches a backward node to the results. Ops that overwrite
// their first argument get that argument's history rewritten; when the argument is a view, the
// tensor it views gets a CopySlices node, as in PyTorch, so gradients reach what was there
// before the write and what was written.
#include "autograd/autograd_meta.h"
#include "autograd/functions.h"

#include <kiln/autograd/grad_mode.h>
#include <kiln/core/error.h>
#include <kiln/ops/creation.h>
#include <kiln/ops/registry.h>
#include <kiln/ops/view.h>

namespace kiln::autograd {

using ops::IValue;
namespace {

// The tensor arguments, list elements flattened and None included (as undefined), in order: the
// derivative formulas return one gradient per entry.
std::vector<Tensor> tensor_arguments(const ops::OpDef& op, const ops::Stack& args) {
  std::vector<Tensor> out;
  for (size_t i = 0; i < args.size() && i < op.schema.arguments.size(); ++i) {
    const ops::ArgType type = op.schema.arguments[i].type;
    if (type == ops::ArgType::Tensor) {
      out.push_back(args[i].is_tensor() ? args[i].to_tensor() : Tensor());
    } else if (type == ops::ArgType::TensorList) {
      for (const Tensor& t : args[i].to_tensor_list()) out.push_back(t);
    }
  }
  return out;
}

std::vector<Edge> edges_of(const std::vector<Tensor>& tensors) {
  std::vector<Edge> edges;
  edges.reserve(tensors.size());
  for (const Tensor& t : tensors) edges.push_back(gradient_edge(t));
  return edges;
}

bool differentiable_dtype(DType d) { return is_floating_point(d); }

// Every differentiable op declares a derivative or a decomposition (the registry walk in
// tests/autograd enforces it); a declaration that breaks the rule is named here.
void check_derivative(const ops::OpDef& op) {
  KILN_CHECK(static_cast<bool>(op.derivative),
             "'{}' is declared differentiable but its registry entry has no derivative: declare "
             "one, or mark the op not_differentiable",
             op.full_name());
}

// An op without a formula of its own but with a decomposition (a backward op with a fast kernel,
// say) is differentiated through the decomposition: recorded, it runs as the ops it is written
// in. Only recorded calls take this path; plain calls keep the kernel.
bool differentiated_by_decomposition(const ops::OpDef& op) {
  return !op.derivative && static_cast<bool>(op.decomposition);
}

// Makes the outputs the node's (metadata, grad_fn) and saves those its formula reads.
void attach_outputs(const std::shared_ptr<OpNode>& node, const std::vector<Tensor>& outputs) {
  for (size_t i = 0; i < outputs.size(); ++i) {
    node->add_input_metadata(outputs[i]);
    if (differentiable_dtype(outputs[i].dtype())) {
      set_history(outputs[i], node, static_cast<uint32_t>(i));
    }
  }
  node->save_outputs(outputs);
}

std::vector<Tensor> record_functional(const ops::OpDef& op, ops::Stack& args) {
  if (differentiated_by_decomposition(op)) return op.decomposition(args);
  check_derivative(op);
  std::vector<Edge> edges = edges_of(tensor_arguments(op, args));
  std::vector<Tensor> outputs;
  {
    NoGradGuard no_grad;
    outputs = ops::call_below_autograd(op, args);
  }
  auto node = std::make_shared<OpNode>(op, args, std::move(edges), /*save_self=*/true);
  attach_outputs(node, outputs);
  return outputs;
}

// The gradient of a base tensor after an in-place op wrote through one of its views: the
// gradient outside the view goes to the base's earlier history; inside it, through the op's
// own node, to the view's old value (back into the same region) and to the op's other inputs.
class CopySlices final : public Node {
 public:
  CopySlices(const Tensor& base, Edge base_edge, const Tensor& view, std::shared_ptr<Node> fn)
      : fn_(std::move(fn)),
        base_sizes_(base.sizes().begin(), base.sizes().end()),
        base_strides_(base.strides().begin(), base.strides().end()),
        view_sizes_(view.sizes().begin(), view.sizes().end()),
        view_strides_(view.strides().begin(), view.strides().end()),
        view_offset_(view.storage_offset() - base.storage_offset()) {
    next_edges_.push_back(std::move(base_edge));
    for (size_t i = 1; i < fn_->num_outputs(); ++i) next_edges_.push_back(fn_->next_edge(i));
    add_input_metadata(base);
  }

  std::string name() const override { return "CopySlices"; }

  std::vector<Tensor> apply(std::vector<Tensor>&& grads) override {
    std::vector<Tensor> out(num_outputs());
    if (!grads[0].defined()) return out;
    // The gradient laid out like the base, so that the view's strides address it.
    Tensor result = empty_strided(base_sizes_, base_strides_, grads[0].options());
    result.copy_(grads[0]);
    Tensor slice = as_strided(result, view_sizes_, view_strides_, view_offset_);
    const Node::InputMetadata& m = fn_->input_metadata()[0];
    std::vector<Tensor> fn_grads = fn_->apply({slice.clone().to(m.dtype)});
    if (fn_grads[0].defined()) {
      slice.copy_(fn_grads[0]);
    } else {
      slice.zero_();
    }
    out[0] = result;
    for (size_t i = 1; i < fn_grads.size(); ++i) out[i] = std::move(fn_grads[i]);
    return out;
  }

  void release_variables() override { fn_->release_variables(); }

 private:
  std::shared_ptr<Node> fn_;
  DimVector base_sizes_, base_strides_, view_sizes_, view_strides_;
  int64_t view_offset_;
};

// An op that overwrites args[0] ("add_", "copy_", "fill_", ...).
std::vector<Tensor> record_mutation(const ops::OpDef& op, ops::Stack& args) {
  Tensor self = args[0].to_tensor();
  const std::shared_ptr<TensorImpl>& base_impl = self.impl()->view_base();
  KILN_CHECK(!(self.is_leaf() && self.requires_grad()),
             "{}: a leaf Variable that requires grad is being used in an in-place operation.",
             op.full_name());
  if (base_impl) {
    Tensor base(base_impl);
    KILN_CHECK(!(base.is_leaf() && base.requires_grad()),
               "{}: a view of a leaf Variable that requires grad is being used in an in-place "
               "operation.",
               op.full_name());
  }

  // The op's own node, taking the gradient of the new value of self to the gradients of the old
  // value and of the other inputs.
  std::shared_ptr<OpNode> node;
  Tensor new_value;
  if (op.variant == ops::Variant::InPlace) {
    // Computed by the functional twin on a copy of the old value, which the formula may read.
    const ops::OpDef& fn = *op.functional;
    check_derivative(fn);
    ops::Stack fargs = args;
    fargs[0] = IValue(self.detach().clone());
    // Edge 0 leads to self's history before the write.
    std::vector<Edge> edges = edges_of(tensor_arguments(fn, args));
    std::vector<Tensor> result;
    {
      NoGradGuard no_grad;
      result = ops::call_below_autograd(fn, fargs);
      self.copy_(result[0]);
    }
    node = std::make_shared<OpNode>(fn, fargs, std::move(edges), /*save_self=*/true);
    attach_outputs(node, result);
  } else {
    // copy_, fill_ and the random fills: their own formula, which never reads the old value.
    check_derivative(op);
    std::vector<Edge> edges = edges_of(tensor_arguments(op, args));
    std::vector<Tensor> result;
    {
      NoGradGuard no_grad;
      result = ops::call_below_autograd(op, args);
    }
    node = std::make_shared<OpNode>(op, args, std::move(edges), /*save_self=*/false);
    for (const Tensor& r : result) node->add_input_metadata(r);
    node->save_outputs(result);
  }

  if (!base_impl) {
    // Edge 0 already leads to self's old history.
    set_history(self, node, 0);
    return {self};
  }
  // Through a view: the node's edge 0 is replaced by the base's region bookkeeping.
  Tensor base(base_impl);
  KILN_CHECK(base.impl()->is_non_overlapping_and_dense(),
             "{}: in-place writes through a view need the viewed tensor to be dense (sizes {}, "
             "strides {})",
             op.full_name(), fmt::join(base.sizes(), ", "), fmt::join(base.strides(), ", "));
  auto copy_slices = std::make_shared<CopySlices>(base, gradient_edge(base), self, node);
  set_history(base, copy_slices, 0);
  // The view's new history: it is now a region of the base's new value.
  Tensor regenerated;
  {
    EnableGradGuard grad;
    regenerated = as_strided(base, self.sizes(), self.strides(), self.storage_offset());
  }
  AutogradMeta& rm = meta_of(regenerated);
  set_history(self, rm.grad_fn, rm.output_nr);
  return {self};
}

std::vector<Tensor> record(const ops::OpDef& op, ops::Stack& args) {
  if (op.variant == ops::Variant::Out) {
    KILN_FAIL(
        "{}: functions with out=... arguments don't support automatic differentiation, but one "
        "of the arguments requires grad.",
        op.full_name());
  }
  if (!op.differentiable) {
    NoGradGuard no_grad;
    return ops::call_below_autograd(op, args);
  }
  const bool mutates_self = !op.schema.arguments.empty() && op.schema.arguments[0].is_mutable;
  if (mutates_self) return record_mutation(op, args);
  return record_functional(op, args);
}

bool grad_mode_query() { return GradMode::is_enabled(); }

struct InstallHook {
  InstallHook() {
    ops::set_autograd_hook(&record);
    ops::set_grad_mode_query(&grad_mode_query);
  }
} install_hook;

}  // namespace
}  // namespace kiln::autograd
