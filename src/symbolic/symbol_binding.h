#pragma once
// Binding a graph's size symbols from the sizes of one call's inputs: an input dimension traced
// as a bare symbol gives that symbol its value (duck-sized dimensions must agree); a dimension
// traced as an expression of symbols (an aot backward's saved values: s0*s1 rows) is checked
// once the bare ones are bound. What a compiled symbolic graph does first on every call.
#include <kiln/core/tensor.h>
#include <kiln/symbolic/sym_expr.h>

#include <cstdint>
#include <span>
#include <string>
#include <vector>

namespace kiln::symbolic {

class SymbolBinding {
 public:
  SymbolBinding() = default;
  // input_sizes[i][d]: the size of input i's dimension d as traced; `num_symbols` of the
  // environment; `who` names the caller in error messages.
  SymbolBinding(const std::vector<std::vector<SymExpr>>& input_sizes, size_t num_symbols,
                std::string who);

  // The value of every symbol (by id) in this call; kiln::Error when an input lacks a traced
  // dimension, two dimensions of one symbol differ, or an expression dimension does not match.
  std::vector<int64_t> bind(std::span<const Tensor> inputs) const;
  // The value of `e` under `values`, checking that every symbol it reads was bound.
  int64_t value_of(const SymExpr& e, std::span<const int64_t> values) const;

  size_t num_symbols() const { return num_symbols_; }

 private:
  struct Source {
    size_t input, dim;
    int64_t symbol;
  };
  struct Check {
    size_t input, dim;
    SymExpr size;
  };
  std::vector<Source> sources_;
  std::vector<Check> checks_;
  size_t num_symbols_ = 0;
  std::string who_;
};

}  // namespace kiln::symbolic
