// The backward engine. It counts, for every node below the roots, how many edges lead into it,
// then runs a node once all of them have delivered their gradient (summing gradients that meet
// at one input). Nodes that are ready run latest-created first. Everything is iterative: a chain
// of 100,000 nodes needs no deeper stack than a chain of ten.
#include "autograd/engine.h"

#include "autograd/autograd_meta.h"
#include "autograd/backward_callbacks.h"
#include "autograd/functions.h"

#include <kiln/autograd/grad_mode.h>
#include "ops/view/view_utils.h"

#include <kiln/core/error.h>
#include <kiln/ops/reduction.h>
#include <kiln/ops/sym_size_ops.h>

#include <queue>
#include <unordered_map>
#include <unordered_set>

namespace kiln::autograd {
namespace {

thread_local bool creating_graph = false;

class CreateGraphScope {
 public:
  explicit CreateGraphScope(bool on) : previous_(creating_graph), grad_(GradMode::is_enabled()) {
    creating_graph = on;
    GradMode::set_enabled(on);
  }
  ~CreateGraphScope() {
    creating_graph = previous_;
    GradMode::set_enabled(grad_);
  }
  CreateGraphScope(const CreateGraphScope&) = delete;
  CreateGraphScope& operator=(const CreateGraphScope&) = delete;

 private:
  bool previous_;
  bool grad_;
};

using ops::view_detail::shape_str;

// Whether a tensor of shape `from` broadcasts to `to` (so a gradient of shape `to` sums back).
bool expandable_to(SymIntList from, SymIntList to) {
  if (from.size() > to.size()) return false;
  const size_t lead = to.size() - from.size();
  for (size_t i = 0; i < from.size(); ++i) {
    if (from[i] != 1 && from[i] != to[lead + i]) return false;
  }
  return true;
}

// Sums a broadcast gradient back to the shape of the tensor it belongs to.
Tensor sum_to(const Tensor& g, SymIntList shape) {
  const size_t lead = static_cast<size_t>(g.dim()) - shape.size();
  std::vector<int64_t> dims;
  for (size_t i = 0; i < static_cast<size_t>(g.dim()); ++i) {
    if (i < lead || (shape[i - lead] == 1 && g.sym_size(static_cast<int64_t>(i)) != 1)) {
      dims.push_back(static_cast<int64_t>(i));
    }
  }
  Tensor r = dims.empty() ? g : g.sum(dims, /*keepdim=*/true);
  return reshape_symint(r, shape);
}

Tensor validate(Tensor g, const Node::InputMetadata& m, const Node& producer, size_t index) {
  const SymIntList want = m.sym_sizes();
  // Plain sizes on both sides (eager's case) compare as integers, without SymInt's calls.
  const bool plain = m.symbols.empty() && !g.impl()->has_symbolic_sizes_strides();
  if (plain ? IntList(m.sizes) != g.sizes() : g.sym_sizes() != want) {
    KILN_CHECK(expandable_to(want, g.sym_sizes()),
               "Function {} returned an invalid gradient at index {} - got {} but expected shape "
               "compatible with {}",
               producer.name(), index, shape_str(g.sym_sizes()), shape_str(want));
    g = sum_to(g, want);
  }
  if (g.dtype() != m.dtype) g = g.to(m.dtype);
  // A gradient goes back to its input's device (x.to(cuda)'s backward hands x a CPU gradient),
  // as PyTorch's engine moves it.
  if (g.device() != m.device) g = g.to(m.device);
  return g;
}

struct ByLatest {
  bool operator()(const std::shared_ptr<Node>& a, const std::shared_ptr<Node>& b) const {
    return a->sequence_nr() < b->sequence_nr();
  }
};

}  // namespace

bool engine_creates_graph() { return creating_graph; }

std::vector<Tensor> run_backward(const std::vector<Edge>& roots, const std::vector<Tensor>& grads,
                                 bool keep_graph, bool create_graph,
                                 const std::vector<Edge>& captures, bool accumulate) {
  auto root = std::make_shared<GraphRoot>(roots, grads);

  // Dependencies: how many edges lead into each node reachable from the root.
  std::unordered_map<Node*, int> dependencies;
  {
    std::unordered_set<Node*> seen{root.get()};
    std::vector<Node*> stack{root.get()};
    while (!stack.empty()) {
      Node* n = stack.back();
      stack.pop_back();
      for (const Edge& e : n->next_edges()) {
        if (!e.function) continue;
        ++dependencies[e.function.get()];
        if (seen.insert(e.function.get()).second) stack.push_back(e.function.get());
      }
    }
  }

  // Captured edges: the node and input slot whose gradient grad() returns.
  std::unordered_map<Node*, std::vector<std::pair<uint32_t, size_t>>> capture_at;
  for (size_t i = 0; i < captures.size(); ++i) {
    if (captures[i].function)
      capture_at[captures[i].function.get()].push_back({captures[i].input_nr, i});
  }
  // With captures, only nodes with a path to a captured node need to run. A topological order
  // (parents first) swept in reverse settles that in one pass.
  std::unordered_set<Node*> must_run;
  if (!captures.empty()) {
    std::vector<Node*> topological{root.get()};
    std::unordered_map<Node*, int> remaining = dependencies;
    for (size_t i = 0; i < topological.size(); ++i) {
      for (const Edge& e : topological[i]->next_edges()) {
        if (e.function && --remaining[e.function.get()] == 0) {
          topological.push_back(e.function.get());
        }
      }
    }
    for (auto it = topological.rbegin(); it != topological.rend(); ++it) {
      for (const Edge& e : (*it)->next_edges()) {
        Node* c = e.function.get();
        if (c != nullptr && (capture_at.count(c) || must_run.count(c))) {
          must_run.insert(*it);
          break;
        }
      }
    }
  }
  auto should_apply = [&](Node* n) {
    if (captures.empty()) return true;
    if (must_run.count(n)) return true;
    // A captured accumulator runs only for backward(inputs=...), which accumulates.
    return accumulate && capture_at.count(n) && dynamic_cast<AccumulateGrad*>(n) != nullptr;
  };

  CreateGraphScope scope(create_graph);
  BackwardCallbacks callbacks;  // what queue_callback adds during this pass
  std::vector<Tensor> captured(captures.size());
  std::unordered_map<Node*, std::vector<Tensor>> buffers;
  std::priority_queue<std::shared_ptr<Node>, std::vector<std::shared_ptr<Node>>, ByLatest> ready;
  ready.push(root);
  while (!ready.empty()) {
    std::shared_ptr<Node> node = ready.top();
    ready.pop();
    std::vector<Tensor> inputs;
    if (auto it = buffers.find(node.get()); it != buffers.end()) {
      inputs = std::move(it->second);
      buffers.erase(it);
    }
    inputs.resize(node->num_inputs());
    node->run_pre_hooks(inputs);
    if (auto it = capture_at.find(node.get()); it != capture_at.end()) {
      for (auto [input_nr, index] : it->second) captured[index] = inputs[input_nr];
    }
    std::vector<Tensor> outputs;
    const bool apply = should_apply(node.get());
    if (apply) {
      outputs = node->apply(std::move(inputs));
      if (!keep_graph) node->release_variables();
    }
    outputs.resize(node->num_outputs());
    for (size_t i = 0; i < node->num_outputs(); ++i) {
      const Edge& e = node->next_edge(i);
      if (!e.function) continue;
      Node* child = e.function.get();
      if (outputs[i].defined()) {
        Tensor g = validate(std::move(outputs[i]), child->input_metadata()[e.input_nr], *node, i);
        std::vector<Tensor>& buf = buffers[child];
        buf.resize(child->num_inputs());
        Tensor& slot = buf[e.input_nr];
        slot = slot.defined() ? slot + g : std::move(g);
      }
      if (--dependencies[child] == 0) ready.push(e.function);
    }
  }
  callbacks.run();
  return captured;
}

}  // namespace kiln::autograd
