#include "symbolic/symbol_binding.h"

#include <kiln/core/error.h>

namespace kiln::symbolic {

namespace {

constexpr int64_t kUnbound = -1;

}  // namespace

SymbolBinding::SymbolBinding(const std::vector<std::vector<SymExpr>>& input_sizes,
                             size_t num_symbols, std::string who)
    : num_symbols_(num_symbols), who_(std::move(who)) {
  for (size_t i = 0; i < input_sizes.size(); ++i) {
    for (size_t d = 0; d < input_sizes[i].size(); ++d) {
      const SymExpr& e = input_sizes[i][d];
      if (e.is_constant()) continue;
      // A bare symbol binds; an expression (which would need solving) is checked after binding.
      if (e.kind() == SymExpr::Kind::Symbol) {
        sources_.push_back(Source{i, d, e.value()});
      } else {
        checks_.push_back(Check{i, d, e});
      }
    }
  }
}

int64_t SymbolBinding::value_of(const SymExpr& e, std::span<const int64_t> values) const {
  for (int64_t id : free_symbols(e)) {
    KILN_CHECK(
        id < static_cast<int64_t>(values.size()) && values[static_cast<size_t>(id)] != kUnbound,
        "{}: the size {} reads s{}, which no input dimension binds", who_, e.str(), id);
  }
  return evaluate(e, values);
}

std::vector<int64_t> SymbolBinding::bind(std::span<const Tensor> in) const {
  std::vector<int64_t> values(num_symbols_, kUnbound);
  const auto size_at = [&](size_t input, size_t dim, const std::string& what) {
    KILN_CHECK(
        input < in.size() && in[input].defined() && static_cast<size_t>(in[input].dim()) > dim,
        "{}: input {} lacks dimension {} ({})", who_, input, dim, what);
    return in[input].sym_sizes()[dim].expect_int();
  };
  for (const Source& s : sources_) {
    const int64_t size = size_at(s.input, s.dim, "symbol s" + std::to_string(s.symbol));
    KILN_CHECK(static_cast<size_t>(s.symbol) < values.size(),
               "{}: symbol s{} is outside the environment's {} symbols", who_, s.symbol,
               values.size());
    int64_t& value = values[static_cast<size_t>(s.symbol)];
    // A symbol read by several dimensions (duck sizing) needs them equal; the guards say so.
    KILN_CHECK(value == kUnbound || value == size,
               "{}: symbol s{} is {} in one input and {} in input {} dim {}", who_, s.symbol, value,
               size, s.input, s.dim);
    value = size;
  }
  for (const Check& c : checks_) {
    const int64_t size = size_at(c.input, c.dim, "size " + c.size.str());
    const int64_t want = value_of(c.size, values);
    KILN_CHECK(size == want, "{}: input {} dim {} is {}, but {} is {} here", who_, c.input, c.dim,
               size, c.size.str(), want);
  }
  return values;
}

}  // namespace kiln::symbolic
