#include "aot/symbols_read.h"

#include <kiln/symbolic/sym_expr.h>
#include <kiln/symbolic/sym_node.h>

#include <variant>

namespace kiln::aot {

namespace {

void add_symbols(const SymInt& s, std::set<int64_t>& out) {
  if (!s.is_symbolic()) return;
  for (int64_t id : symbolic::free_symbols(symbolic::expr_of(s))) out.insert(id);
}

void add_symbols(const ops::IValue& v, std::set<int64_t>& out) {
  if (const auto* s = std::get_if<SymInt>(&v.variant())) add_symbols(*s, out);
  if (const auto* list = std::get_if<std::vector<SymInt>>(&v.variant())) {
    for (const SymInt& s : *list) add_symbols(s, out);
  }
}

}  // namespace

std::set<int64_t> symbols_read(const std::vector<const graph::Node*>& nodes) {
  std::set<int64_t> out;
  for (const graph::Node* n : nodes) {
    for (const graph::ValueMeta& m : n->outputs) {
      for (const SymInt& s : m.sizes) add_symbols(s, out);
      for (const SymInt& s : m.strides) add_symbols(s, out);
      add_symbols(m.storage_offset, out);
    }
    for (const ops::IValue& v : n->args) add_symbols(v, out);
  }
  return out;
}

std::set<int64_t> symbols_bound(const std::vector<graph::Value>& values) {
  std::set<int64_t> out;
  for (const graph::Value& v : values) {
    for (const SymInt& s : v.meta().sizes) {
      if (!s.is_symbolic()) continue;
      const symbolic::SymExpr e = symbolic::expr_of(s);
      if (e.kind() == symbolic::SymExpr::Kind::Symbol) out.insert(e.value());
    }
  }
  return out;
}

}  // namespace kiln::aot
