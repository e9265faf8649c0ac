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

// Input `input`'s dimension `dim` is an expression of symbols (an aot backward's saved values:
// s0*s1 rows): checked once the bare dimensions bound its symbols.
struct SizeCheck {
  size_t input;
  size_t dim;
  symbolic::SymExpr size;
};

}  // namespace

CompiledGraph symbolic_interpreter(const graph::Graph& graph) {
  auto shared = std::make_shared<const graph::Graph>(graph.clone());
  std::vector<SymbolSource> sources;
  std::vector<SizeCheck> checks;
  size_t num_symbols = 0;
  const std::vector<graph::Node*> inputs = shared->inputs();
  for (size_t i = 0; i < inputs.size(); ++i) {
    const SymDimVector& sizes = inputs[i]->outputs[0].sizes;
    for (size_t d = 0; d < sizes.size(); ++d) {
      if (!sizes[d].is_symbolic()) continue;
      const symbolic::SymExpr e = symbolic::expr_of(sizes[d]);
      const auto* node = symbolic::sym_node_of(sizes[d]);
      num_symbols = std::max(num_symbols, node->env()->symbols().size());
      // A bare symbol binds; an expression (which would need solving) is checked after binding.
      if (e.kind() == symbolic::SymExpr::Kind::Symbol) {
        sources.push_back(SymbolSource{i, d, e.value()});
      } else {
        checks.push_back(SizeCheck{i, d, e});
      }
    }
  }
  return [shared, sources = std::move(sources), checks = std::move(checks),
          num_symbols](std::span<const Tensor> in) {
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
    auto value_of = [&values](const symbolic::SymExpr& e) {
      for (int64_t id : symbolic::free_symbols(e)) {
        KILN_CHECK(
            id < static_cast<int64_t>(values.size()) && values[static_cast<size_t>(id)] != kUnbound,
            "symbolic_interpreter: the size {} reads s{}, which no input dimension binds", e.str(),
            id);
      }
      return symbolic::evaluate(e, values);
    };
    graph::SizeOf size_of = [&value_of](const SymInt& s) { return value_of(symbolic::expr_of(s)); };
    for (const SizeCheck& c : checks) {
      KILN_CHECK(c.input < in.size() && in[c.input].defined() &&
                     static_cast<size_t>(in[c.input].dim()) > c.dim,
                 "symbolic_interpreter: input {} lacks dimension {} (size {})", c.input, c.dim,
                 c.size.str());
      const int64_t size = in[c.input].sym_sizes()[c.dim].expect_int();
      const int64_t want = value_of(c.size);
      KILN_CHECK(size == want, "symbolic_interpreter: input {} dim {} is {}, but {} is {} here",
                 c.input, c.dim, size, c.size.str(), want);
    }
    return graph::interpret(*shared, in, size_of);
  };
}

}  // namespace kiln::capture
