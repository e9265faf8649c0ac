#include "capture/symbolic_interpreter.h"

#include "graph/interpret_symbolic.h"

#include <kiln/core/error.h>
#include <kiln/symbolic/sym_node.h>

#include <memory>
#include <vector>

namespace kiln::capture {

namespace {

// Input `input`'s dimension `dim` is symbol `symbol`.
struct SymbolSource {
  size_t input;
  size_t dim;
  int64_t symbol;
};

}  // namespace

CompiledGraph symbolic_interpreter(const graph::Graph& graph) {
  auto shared = std::make_shared<const graph::Graph>(graph.clone());
  std::vector<SymbolSource> sources;
  size_t num_symbols = 0;
  const std::vector<graph::Node*> inputs = shared->inputs();
  for (size_t i = 0; i < inputs.size(); ++i) {
    const SymDimVector& sizes = inputs[i]->outputs[0].sizes;
    for (size_t d = 0; d < sizes.size(); ++d) {
      if (!sizes[d].is_symbolic()) continue;
      const symbolic::SymExpr e = symbolic::expr_of(sizes[d]);
      // Inputs are traced with create_symbol's results: bare symbols (an expression would need
      // solving for its symbols).
      KILN_CHECK(e.kind() == symbolic::SymExpr::Kind::Symbol,
                 "symbolic_interpreter: input {} (%{}) has size {} in dim {}; expected a symbol", i,
                 inputs[i]->name, e.str(), d);
      sources.push_back(SymbolSource{i, d, e.value()});
      const auto* node = symbolic::sym_node_of(sizes[d]);
      num_symbols = std::max(num_symbols, node->env()->symbols().size());
    }
  }
  return [shared, sources = std::move(sources), num_symbols](std::span<const Tensor> in) {
    constexpr int64_t kUnbound = -1;
    std::vector<int64_t> values(num_symbols, kUnbound);
    for (const SymbolSource& s : sources) {
      KILN_CHECK(s.input < in.size() && in[s.input].defined() &&
                     static_cast<size_t>(in[s.input].dim()) > s.dim,
                 "symbolic_interpreter: input {} lacks dimension {} (symbol s{})", s.input, s.dim,
                 s.symbol);
      const int64_t size = in[s.input].sym_sizes()[s.dim].expect_int();
      int64_t& value = values[static_cast<size_t>(s.symbol)];
      // A symbol read by several dimensions (duck sizing) needs them equal; the guards say so.
      KILN_CHECK(value == kUnbound || value == size,
                 "symbolic_interpreter: symbol s{} is {} in one input and {} in input {} dim {}",
                 s.symbol, value, size, s.input, s.dim);
      value = size;
    }
    graph::SizeOf size_of = [&values](const SymInt& s) {
      const symbolic::SymExpr e = symbolic::expr_of(s);
      for (int64_t id : symbolic::free_symbols(e)) {
        KILN_CHECK(
            id < static_cast<int64_t>(values.size()) && values[static_cast<size_t>(id)] != kUnbound,
            "symbolic_interpreter: the size {} reads s{}, which no input dimension binds", e.str(),
            id);
      }
      return symbolic::evaluate(e, values);
    };
    return graph::interpret(*shared, in, size_of);
  };
}

}  // namespace kiln::capture
