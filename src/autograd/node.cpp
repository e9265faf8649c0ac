// Node bookkeeping, and a destructor that frees long chains iteratively: a graph of 100,000 ops
// would otherwise release its nodes by nested destructor calls and overflow the stack.
#include "autograd/autograd_meta.h"

#include <kiln/core/error.h>

#include <atomic>

namespace kiln::autograd {
namespace {

std::atomic<uint64_t> next_sequence_nr{0};

// Nodes whose last owner is a node being destroyed wait here, so that the outermost destructor
// releases them one at a time instead of recursing.
thread_local std::vector<std::shared_ptr<Node>>* pending_release = nullptr;

}  // namespace

Node::Node(std::vector<Edge> next_edges)
    : next_edges_(std::move(next_edges)), sequence_nr_(next_sequence_nr.fetch_add(1)) {}

Node::~Node() {
  std::vector<std::shared_ptr<Node>> local;
  const bool outermost = pending_release == nullptr;
  if (outermost) pending_release = &local;
  for (Edge& e : next_edges_) {
    if (e.function) pending_release->push_back(std::move(e.function));
  }
  next_edges_.clear();
  if (outermost) {
    while (!local.empty()) {
      std::shared_ptr<Node> n = std::move(local.back());
      local.pop_back();
      n.reset();  // may push more nodes onto local
    }
    pending_release = nullptr;
  }
}

uint32_t Node::add_input_metadata(const Tensor& t) {
  InputMetadata m;
  for (const SymInt& s : t.sym_sizes()) {
    m.sizes.push_back(s.raw());
    if (s.is_symbolic()) m.symbols.push_back(s);
  }
  m.dtype = t.dtype();
  m.device = t.device();
  input_metadata_.push_back(std::move(m));
  return static_cast<uint32_t>(input_metadata_.size() - 1);
}

size_t Node::add_pre_hook(uint32_t input_nr, GradHook hook, bool run_last) {
  const size_t handle = next_hook_handle();
  (run_last ? last_hooks_ : pre_hooks_).push_back(PreHook{handle, input_nr, std::move(hook)});
  return handle;
}

bool Node::remove_pre_hook(size_t handle) {
  auto matches = [handle](const PreHook& h) { return h.handle == handle; };
  return std::erase_if(pre_hooks_, matches) + std::erase_if(last_hooks_, matches) > 0;
}

void Node::run_pre_hooks(std::vector<Tensor>& grads) const {
  for (const auto* hooks : {&pre_hooks_, &last_hooks_}) {
    for (const PreHook& h : *hooks) {
      Tensor& g = grads[h.input_nr];
      if (!g.defined()) continue;
      Tensor replaced = h.fn(g);
      if (replaced.defined()) g = std::move(replaced);
    }
  }
}

size_t next_hook_handle() {
  static std::atomic<size_t> next{1};
  return next.fetch_add(1);
}

Edge gradient_edge(const Tensor& t) {
  if (!t.defined()) return {};
  if (AutogradMeta* m = meta_if(t); m != nullptr && m->grad_fn) return {m->grad_fn, m->output_nr};
  if (t.requires_grad()) return {grad_accumulator(t), 0};
  return {};
}

}  // namespace kiln::autograd
