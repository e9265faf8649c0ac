// interpret: runs a graph node by node with eager kernels (torch.fx's Interpreter). Ops go through
// ops::call, so autograd records them as in eager code. Each value's tensor is dropped after its
// last reader, so peak memory follows the graph's live ranges rather than its length.
#include "graph/interpret_symbolic.h"

#include <kiln/graph/graph.h>

#include <algorithm>
#include <unordered_map>

namespace kiln::graph {

namespace {

void check_input(const Node& node, size_t index, const Tensor& t) {
  const ValueMeta& m = node.outputs[0];
  KILN_CHECK(t.defined(), "interpret: input {} (%{}, {}) is undefined; expected {}", index,
             node.name, node.label, m.str());
  auto describe = [&t] { return ValueMeta::of(t).str(); };
  KILN_CHECK(t.dtype() == m.dtype, "interpret: input {} (%{}, {}) has dtype {}, expected {}", index,
             node.name, node.label, dtype_name(t.dtype()), dtype_name(m.dtype));
  KILN_CHECK(t.device() == m.device, "interpret: input {} (%{}, {}) is on {}, expected {}", index,
             node.name, node.label, t.device().str(), m.device.str());
  SymIntList sizes = t.sym_sizes();
  bool same_rank = sizes.size() == m.sizes.size();
  KILN_CHECK(same_rank, "interpret: input {} (%{}, {}) is {}, expected {} ({} dims, not {})", index,
             node.name, node.label, describe(), m.str(), m.sizes.size(), sizes.size());
  for (size_t d = 0; d < sizes.size(); ++d) {
    // A symbolic dimension in the graph accepts any size (its guards were checked by capture).
    if (m.sizes[d].is_symbolic() || sizes[d].is_symbolic()) continue;
    KILN_CHECK(sizes[d].raw() == m.sizes[d].raw(),
               "interpret: input {} (%{}, {}) is {}, expected {} (dim {} is {}, not {})", index,
               node.name, node.label, describe(), m.str(), d, m.sizes[d].raw(), sizes[d].raw());
  }
}

std::string where(const Node& node) {
  std::string s = fmt::format("node %{} ({})", node.name, node.op->full_name());
  if (node.loc.known()) s += " at " + node.loc.str();
  return s;
}

// Rethrows an op's error with the node that raised it, keeping kiln's error types.
[[noreturn]] void rethrow_with_node(const Node& node) {
  try {
    throw;
  } catch (const IndexError& e) {
    throw IndexError(where(node) + ": " + e.what());
  } catch (const TypeError& e) {
    throw TypeError(where(node) + ": " + e.what());
  } catch (const Error& e) {
    throw Error(where(node) + ": " + e.what());
  }
}

}  // namespace

void concretize(ops::Stack& args, const SizeOf& size_of) {
  for (ops::IValue& v : args) {
    if (const auto* s = std::get_if<SymInt>(&v.variant()); s && s->is_symbolic()) {
      v = ops::IValue(SymInt(size_of(*s)));
    } else if (const auto* l = std::get_if<std::vector<SymInt>>(&v.variant())) {
      if (std::none_of(l->begin(), l->end(), [](const SymInt& x) { return x.is_symbolic(); })) {
        continue;
      }
      std::vector<SymInt> values;
      values.reserve(l->size());
      for (const SymInt& x : *l) values.emplace_back(x.is_symbolic() ? size_of(x) : x.raw());
      v = ops::IValue(std::move(values));
    }
  }
}

std::vector<Tensor> interpret(const Graph& graph, std::span<const Tensor> inputs) {
  return interpret(graph, inputs, SizeOf());
}

std::vector<Tensor> interpret(const Graph& graph, std::span<const Tensor> inputs,
                              const SizeOf& size_of) {
  const auto& nodes = graph.nodes();
  std::unordered_map<const Node*, size_t> position;
  position.reserve(nodes.size());
  for (const auto& n : nodes) position.emplace(n.get(), position.size());

  // values[i][k]: output k of node i while it is live; remaining[i][k]: readers still to run.
  std::vector<std::vector<Tensor>> values(nodes.size());
  std::vector<std::vector<size_t>> remaining(nodes.size());
  for (size_t i = 0; i < nodes.size(); ++i) remaining[i].assign(nodes[i]->outputs.size(), 0);
  auto slot = [&position](Value v) {
    auto it = position.find(v.node);
    KILN_CHECK(it != position.end(), "interpret: a value refers to a node outside the graph");
    return std::pair<size_t, size_t>(it->second, static_cast<size_t>(v.output));
  };
  constexpr size_t kGraphOutput = static_cast<size_t>(1) << 62;  // never reaches zero
  for (const auto& n : nodes) {
    for (const TensorUse& u : n->uses) {
      auto [i, k] = slot(u.value);
      ++remaining[i][k];
    }
  }
  for (const Value& v : graph.outputs()) {
    auto [i, k] = slot(v);
    remaining[i][k] += kGraphOutput;
  }

  size_t num_inputs = graph.num_inputs();
  KILN_CHECK(inputs.size() == num_inputs, "interpret: the graph takes {} inputs, got {}",
             num_inputs, inputs.size());
  size_t next_input = 0;
  for (size_t i = 0; i < nodes.size(); ++i) {
    const Node& node = *nodes[i];
    if (node.kind == NodeKind::Input) {
      check_input(node, next_input, inputs[next_input]);
      values[i] = {inputs[next_input++]};
    } else {
      auto value_of = [&values, &slot, &node](Value v) -> Tensor {
        auto [j, k] = slot(v);
        KILN_CHECK(k < values[j].size() && values[j][k].defined(),
                   "interpret: %{} reads output {} of %{}, which has not run before it", node.name,
                   k, v.node->name);
        return values[j][k];
      };
      std::vector<Tensor> results;
      try {
        ops::Stack args = node.bind(value_of);
        if (size_of) concretize(args, size_of);
        results = ops::call(*node.op, args);
      } catch (const Error&) {
        rethrow_with_node(node);
      }
      KILN_CHECK(results.size() == node.outputs.size(),
                 "interpret: {} returned {} tensors, the graph expects {}", where(node),
                 results.size(), node.outputs.size());
      values[i] = std::move(results);
      for (const TensorUse& u : node.uses) {
        auto [j, k] = slot(u.value);
        if (--remaining[j][k] == 0) values[j][k] = Tensor();
      }
    }
    for (size_t k = 0; k < values[i].size(); ++k) {
      if (remaining[i][k] == 0) values[i][k] = Tensor();
    }
  }

  std::vector<Tensor> outputs;
  outputs.reserve(graph.outputs().size());
  for (const Value& v : graph.outputs()) {
    auto [i, k] = slot(v);
    outputs.push_back(values[i][k]);
  }
  return outputs;
}

}  // namespace kiln::graph
