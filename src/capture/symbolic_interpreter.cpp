#include "capture/symbolic_interpreter.h"

#include "graph/interpret_symbolic.h"
#include "symbolic/symbol_binding.h"

#include <kiln/core/error.h>
#include <kiln/symbolic/sym_node.h>

#include <memory>
#include <vector>

namespace kiln::capture {

CompiledGraph symbolic_interpreter(const graph::Graph& graph) {
  auto shared = std::make_shared<const graph::Graph>(graph.clone());
  std::vector<std::vector<symbolic::SymExpr>> input_sizes;
  size_t num_symbols = 0;
  for (const graph::Node* input : shared->inputs()) {
    std::vector<symbolic::SymExpr> sizes;
    for (const SymInt& s : input->outputs[0].sizes) {
      sizes.push_back(symbolic::expr_of(s));
      if (const auto* node = symbolic::sym_node_of(s)) {
        num_symbols = std::max(num_symbols, node->env()->symbols().size());
      }
    }
    input_sizes.push_back(std::move(sizes));
  }
  auto binding = std::make_shared<const symbolic::SymbolBinding>(input_sizes, num_symbols,
                                                                 "symbolic_interpreter");
  return [shared, binding](std::span<const Tensor> in) {
    const std::vector<int64_t> values = binding->bind(in);
    graph::SizeOf size_of = [&](const SymInt& s) {
      return binding->value_of(symbolic::expr_of(s), values);
    };
    return graph::interpret(*shared, in, size_of);
  };
}

}  // namespace kiln::capture
