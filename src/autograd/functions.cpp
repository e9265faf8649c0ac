#include "autograd/functions.h"

#include "autograd/autograd_meta.h"

#include <kiln/autograd/grad_mode.h>
#include <kiln/core/error.h>
#include <kiln/ops/creation.h>
#include <kiln/ops/sym_size_ops.h>

#include <cctype>

namespace kiln::autograd {

using ops::IValue;

OpNode::OpNode(const ops::OpDef& op, const ops::Stack& args, std::vector<Edge> edges,
               bool save_self)
    : Node(std::move(edges)), op_(op), args_(args), save_self_(save_self) {
  const bool reads_inputs = (static_cast<uint8_t>(op.derivative_reads) &
                             static_cast<uint8_t>(ops::DerivativeReads::Inputs)) != 0;
  slots_.resize(args.size());
  for (size_t i = 0; i < args.size(); ++i) {
    const bool skip = i == 0 && !save_self;
    if (args[i].is_tensor()) {
      slots_[i].first = static_cast<int64_t>(saved_inputs_.size());
      saved_inputs_.emplace_back(skip ? Tensor() : args[i].to_tensor(), /*is_output=*/false,
                                 reads_inputs);
      args_[i] = IValue(Tensor());
    } else if (args[i].is_tensor_list()) {
      const auto& list = args[i].to_tensor_list();
      slots_[i].first = static_cast<int64_t>(saved_inputs_.size());
      slots_[i].list_size = static_cast<int64_t>(list.size());
      for (const Tensor& t : list) saved_inputs_.emplace_back(t, /*is_output=*/false, reads_inputs);
      args_[i] = IValue(std::vector<Tensor>());
    }
  }
}

void OpNode::save_outputs(const std::vector<Tensor>& outputs) {
  // Outputs are kept only when the formula reads them; a mutating op's output is the overwritten
  // argument, which its formula must not read either.
  const bool reads_outputs = (static_cast<uint8_t>(op_.derivative_reads) &
                              static_cast<uint8_t>(ops::DerivativeReads::Outputs)) != 0;
  for (size_t i = 0; i < outputs.size(); ++i) {
    const bool read =
        reads_outputs && save_self_ && (i >= 32 || ((op_.derivative_output_mask >> i) & 1u) != 0);
    saved_outputs_.emplace_back(read ? outputs[i] : Tensor(), /*is_output=*/true,
                                /*check_version=*/true);
  }
}

std::string OpNode::name() const {
  // "_softmax" -> "SoftmaxBackward0", "index_put_" -> "IndexPutBackward0".
  std::string n;
  bool upper = true;
  for (char c : op_.name()) {
    if (c == '_') {
      upper = true;
      continue;
    }
    n += upper ? static_cast<char>(std::toupper(static_cast<unsigned char>(c))) : c;
    upper = false;
  }
  return n + "Backward0";
}

std::vector<Tensor> OpNode::apply(std::vector<Tensor>&& grads) {
  const std::string node_name = name();
  KILN_CHECK(!released_,
             "Trying to backward through the graph a second time (or directly access saved "
             "tensors after they have already been freed): {} released its saved tensors after "
             "the first backward. Specify retain_graph=true on the first backward() or grad() "
             "call if you need to backward through the graph a second time.",
             node_name);
  ops::Stack inputs = args_;
  for (size_t i = 0; i < slots_.size(); ++i) {
    const ArgSlot& s = slots_[i];
    if (s.first < 0) continue;
    if (s.list_size < 0) {
      inputs[i] = IValue(saved_inputs_[static_cast<size_t>(s.first)].unpack(node_name));
    } else {
      std::vector<Tensor> list;
      for (int64_t j = 0; j < s.list_size; ++j) {
        list.push_back(saved_inputs_[static_cast<size_t>(s.first + j)].unpack(node_name));
      }
      inputs[i] = IValue(std::move(list));
    }
  }
  std::vector<Tensor> outputs;
  outputs.reserve(saved_outputs_.size());
  for (const SavedVariable& v : saved_outputs_) outputs.push_back(v.unpack(node_name));
  // Formulas see a gradient for every output: zeros where none flowed.
  std::vector<bool> flowed(grads.size(), true);
  for (size_t i = 0; i < grads.size(); ++i) {
    if (!grads[i].defined()) {
      flowed[i] = false;
      const InputMetadata& m = input_metadata()[i];
      grads[i] = full_symint(m.sym_sizes(), 0, TensorOptions(m.dtype).device(m.device));
    }
  }
  std::vector<bool> needs_grad(num_outputs());
  for (size_t i = 0; i < needs_grad.size(); ++i) needs_grad[i] = next_edge(i).is_valid();
  std::vector<Tensor> result =
      op_.derivative(ops::BackwardArgs{inputs, outputs, grads, &flowed, &needs_grad});
  KILN_CHECK(result.size() == num_outputs(),
             "the derivative of '{}' returned {} gradients for {} tensor arguments",
             op_.full_name(), result.size(), num_outputs());
  return result;
}

void OpNode::release_variables() {
  for (SavedVariable& v : saved_inputs_) v.reset();
  for (SavedVariable& v : saved_outputs_) v.reset();
  released_ = true;
}

AccumulateGrad::AccumulateGrad(Tensor leaf) : leaf_(std::move(leaf)) {
  add_input_metadata(leaf_);
  // Accumulators run as soon as they are ready.
  set_sequence_nr(UINT64_MAX);
}

namespace {
// PyTorch's gradient layout contract: a leaf's .grad has the leaf's strides when the leaf is
// dense, else is contiguous (so that p.grad().view(...) works wherever p.view(...) does).
bool obeys_layout_contract(const Tensor& g, const Tensor& leaf) {
  if (!leaf.impl()->is_non_overlapping_and_dense()) return g.is_contiguous();
  return IntList(g.strides()) == IntList(leaf.strides()) || leaf.numel() <= 1;
}

// How many tensors may share g's storage when g owns it: g itself, and the root of its chain of
// views when g is a view that covers all of it and nothing else holds that root (a transposed
// product, a reshaped sum: the usual gradients of linear layers' weights and biases).
long expected_storage_holders(const Tensor& g) {
  const std::shared_ptr<TensorImpl>& root = g.impl()->view_base();
  if (root == nullptr) return 1;
  const bool covers_all =
      static_cast<size_t>(g.numel()) * itemsize(g.dtype()) == g.storage()->nbytes();
  const bool root_unheld = root.use_count() == 1 && root->storage() == g.storage();
  return covers_all && root_unheld ? 2 : 1;
}

// Whether g can become a leaf's .grad without a copy: no other tensor or view shares it, it has
// no history, and it is laid out as the contract asks.
bool owned_solely(const Tensor& g, const Tensor& leaf) {
  return g.use_count() == 1 && g.storage().use_count() == expected_storage_holders(g) &&
         !g.requires_grad() && !g.impl()->is_wrapped_number() && g.storage_offset() == 0 &&
         obeys_layout_contract(g, leaf);
}

// A copy of g laid out as the contract asks.
Tensor copy_for_leaf(const Tensor& g, const Tensor& leaf) {
  Tensor out = leaf.impl()->is_non_overlapping_and_dense()
                   ? empty_strided(leaf.sizes(), leaf.strides(), g.options())
                   : empty(leaf.sizes(), g.options());
  out.copy_(g.detach());
  return out;
}
}  // namespace

std::vector<Tensor> AccumulateGrad::apply(std::vector<Tensor>&& grads) {
  Tensor g = std::move(grads[0]);
  if (!g.defined()) return {};
  AutogradMeta& m = meta_of(leaf_);
  for (const TensorHook& h : m.leaf_hooks) {
    Tensor replaced = h.fn(g);
    if (replaced.defined()) g = std::move(replaced);
  }
  const bool keep_history = engine_creates_graph();
  if (!m.grad.defined()) {
    // A fresh tensor: the incoming gradient may alias a user's tensor or a saved value, so it
    // is copied unless nothing else holds it (the common case: stealing saves a copy of every
    // parameter's gradient per step).
    if (keep_history) {
      m.grad = g;
    } else {
      m.grad = owned_solely(g, leaf_) ? g : copy_for_leaf(g, leaf_);
    }
  } else if (keep_history || m.grad.requires_grad()) {
    m.grad = m.grad + g;
  } else {
    NoGradGuard no_grad;
    m.grad.add_(g);
  }
  return {};
}

GraphRoot::GraphRoot(std::vector<Edge> roots, std::vector<Tensor> grads)
    : Node(std::move(roots)), grads_(std::move(grads)) {
  set_sequence_nr(UINT64_MAX);
}

}  // namespace kiln::autograd
