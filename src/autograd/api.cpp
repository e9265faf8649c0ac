// torch.autograd.backward / grad, and Tensor's autograd methods.
#include "autograd/autograd_meta.h"
#include "autograd/engine.h"
#include "autograd/functions.h"
#include "ops/current_dispatch_mode.h"

#include <kiln/autograd/autograd.h>
#include "ops/view/view_utils.h"

#include <kiln/core/error.h>
#include <kiln/ops/creation.h>

#include <initializer_list>
#include <optional>

namespace kiln::autograd {
namespace {

using ops::view_detail::shape_str;

// The starting gradients: given ones checked against their outputs, ones for single elements.
std::vector<Tensor> root_grads(TensorList outputs, TensorList given, const char* api) {
  KILN_CHECK(given.empty() || given.size() == outputs.size(), "{}: got {} tensors and {} gradients",
             api, outputs.size(), given.size());
  std::vector<Tensor> grads;
  for (size_t i = 0; i < outputs.size(); ++i) {
    const Tensor& out = outputs[i];
    KILN_CHECK(out.requires_grad(),
               "{}: element {} of tensors does not require grad and does not have a grad_fn", api,
               i);
    Tensor g = given.empty() ? Tensor() : given[i];
    if (!g.defined()) {
      KILN_CHECK(out.sym_numel() == 1,
                 "{}: grad can be implicitly created only for scalar outputs (output {} has "
                 "shape {})",
                 api, i, shape_str(out.sym_sizes()));
      g = ones_like(out);
    } else {
      KILN_CHECK(g.sym_sizes() == out.sym_sizes(),
                 "{}: Mismatch in shape: grad_output[{}] has a shape of {} and output[{}] has a "
                 "shape of {}.",
                 api, i, shape_str(g.sym_sizes()), i, shape_str(out.sym_sizes()));
    }
    grads.push_back(std::move(g));
  }
  return grads;
}

// A backward pass requested while a compiled function is being traced (capture's mode stands in
// for autograd) is a graph break: the tensors involved are computed first (their proxies
// materialize), then the engine runs on real tensors with the mode stepped aside.
class EngineOutsideCapture {
 public:
  EngineOutsideCapture(std::initializer_list<TensorList> lists) {
    ops::DispatchMode* mode = ops::current_dispatch_mode();
    if (mode == nullptr || !mode->replaces_autograd()) return;
    for (TensorList list : lists) {
      for (const Tensor& t : list) {
        if (t.defined()) t.impl()->materialize("a backward pass");
      }
    }
    outside_.emplace(nullptr);
  }

 private:
  std::optional<ops::DispatchModeGuard> outside_;
};

std::vector<Edge> root_edges(TensorList outputs) {
  std::vector<Edge> edges;
  for (const Tensor& t : outputs) edges.push_back(gradient_edge(t));
  return edges;
}

}  // namespace

void backward(TensorList tensors, TensorList grad_tensors, std::optional<bool> retain_graph,
              bool create_graph, TensorList inputs) {
  EngineOutsideCapture outside({tensors, grad_tensors, inputs});
  std::vector<Tensor> grads = root_grads(tensors, grad_tensors, "backward");
  const bool keep_graph = retain_graph.value_or(create_graph);
  std::vector<Edge> captures;
  for (const Tensor& t : inputs) {
    KILN_CHECK(t.requires_grad(), "backward: an input tensor does not require grad");
    captures.push_back(gradient_edge(t));
  }
  std::vector<Tensor> captured =
      run_backward(root_edges(tensors), grads, keep_graph, create_graph, captures,
                   /*accumulate=*/true);
  // Non-leaf inputs: their gradient accumulates into their .grad, as PyTorch does.
  for (size_t i = 0; i < inputs.size(); ++i) {
    if (inputs[i].is_leaf() || !captured[i].defined()) continue;
    AutogradMeta& m = meta_of(inputs[i]);
    m.grad = m.grad.defined() ? m.grad + captured[i] : captured[i].detach().clone();
  }
}

std::vector<Tensor> grad(TensorList outputs, TensorList inputs, TensorList grad_outputs,
                         std::optional<bool> retain_graph, bool create_graph, bool allow_unused) {
  EngineOutsideCapture outside({outputs, inputs, grad_outputs});
  std::vector<Tensor> grads = root_grads(outputs, grad_outputs, "grad");
  std::vector<Edge> captures;
  for (size_t i = 0; i < inputs.size(); ++i) {
    KILN_CHECK(inputs[i].requires_grad(), "grad: input {} does not require grad", i);
    captures.push_back(gradient_edge(inputs[i]));
  }
  std::vector<Tensor> result =
      run_backward(root_edges(outputs), grads, retain_graph.value_or(create_graph), create_graph,
                   captures, /*accumulate=*/false);
  for (size_t i = 0; i < result.size(); ++i) {
    KILN_CHECK(result[i].defined() || allow_unused,
               "grad: One of the differentiated Tensors (input {}) appears to not have been used "
               "in the graph. Set allow_unused=true if this is the desired behavior.",
               i);
    if (result[i].defined() && !create_graph) result[i] = result[i].detach();
  }
  return result;
}

}  // namespace kiln::autograd

namespace kiln {

using autograd::AutogradMeta;
using autograd::meta_if;
using autograd::meta_of;

bool Tensor::is_leaf() const {
  AutogradMeta* m = meta_if(*this);
  return m == nullptr || m->grad_fn == nullptr;
}

const Tensor& Tensor::grad() const {
  static const Tensor undefined;
  AutogradMeta* m = meta_if(*this);
  return m ? m->grad : undefined;
}

Tensor& Tensor::mutable_grad() { return meta_of(*this).grad; }

std::shared_ptr<autograd::Node> Tensor::grad_fn() const {
  AutogradMeta* m = meta_if(*this);
  return m ? m->grad_fn : nullptr;
}

uint32_t Tensor::output_nr() const {
  AutogradMeta* m = meta_if(*this);
  return m ? m->output_nr : 0;
}

void Tensor::backward(const Tensor& gradient, std::optional<bool> retain_graph, bool create_graph,
                      TensorList inputs) const {
  std::vector<Tensor> grads;
  if (gradient.defined()) grads.push_back(gradient);
  autograd::backward(TensorList(*this), grads, retain_graph, create_graph, inputs);
}

void Tensor::retain_grad() const {
  KILN_CHECK(requires_grad(),
             "retain_grad: can't retain_grad on Tensor that has requires_grad=False");
  if (is_leaf()) return;  // leaves keep their gradient anyway
  AutogradMeta& m = meta_of(*this);
  if (m.retains_grad) return;
  m.retains_grad = true;
  // The hook holds the tensor's impl weakly: the graph must not keep the tensor alive.
  std::weak_ptr<TensorImpl> weak = impl_ptr();
  m.retain_grad_hook = m.grad_fn->add_pre_hook(
      m.output_nr,
      [weak](const Tensor& g) {
        if (auto impl = weak.lock()) {
          Tensor self(impl);
          AutogradMeta& meta = meta_of(self);
          meta.grad = meta.grad.defined() ? meta.grad + g : g.detach().clone();
        }
        return Tensor();
      },
      /*run_last=*/true);
}

bool Tensor::retains_grad() const {
  AutogradMeta* m = meta_if(*this);
  return m != nullptr && m->retains_grad;
}

size_t Tensor::register_hook(std::function<Tensor(const Tensor&)> hook) const {
  KILN_CHECK(requires_grad(),
             "register_hook: cannot register a hook on a tensor that doesn't require gradient");
  AutogradMeta& m = meta_of(*this);
  if (m.grad_fn) return m.grad_fn->add_pre_hook(m.output_nr, std::move(hook));
  const size_t handle = autograd::next_hook_handle();
  m.leaf_hooks.push_back(autograd::TensorHook{handle, std::move(hook)});
  return handle;
}

void Tensor::remove_hook(size_t handle) const {
  AutogradMeta* m = meta_if(*this);
  if (m == nullptr) return;
  if (m->grad_fn && m->grad_fn->remove_pre_hook(handle)) return;
  std::erase_if(m->leaf_hooks, [&](const autograd::TensorHook& h) { return h.handle == handle; });
}

}  // namespace kiln
