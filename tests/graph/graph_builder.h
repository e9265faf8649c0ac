#pragma once
// A small helper for graph tests: builds graphs by hand from registry ops, the way capture would.
// Each value keeps an example tensor; an op's output metadata comes from running the op eagerly on
// the examples (the tests check the printed metadata against hand-written strings).
#include <gtest/gtest.h>
#include <kiln/graph/graph.h>
#include <kiln/kiln.h>

#include <map>
#include <optional>
#include <string>
#include <utility>
#include <variant>
#include <vector>

namespace kiln::graph::testing {

inline const ops::OpDef& op_named(std::string_view name) {
  return ops::OpRegistry::instance().get(name);
}

// One argument of a call: a graph value, a list of graph values, or a constant.
struct Arg {
  std::variant<Value, std::vector<Value>, ops::IValue> v;
  Arg(Value value) : v(value) {}                            // NOLINT: implicit
  Arg(std::vector<Value> values) : v(std::move(values)) {}  // NOLINT
  template <typename T>
  requires std::is_constructible_v<ops::IValue, T> Arg(T&& c)  // NOLINT
      : v(ops::IValue(std::forward<T>(c))) {}
};

// A symbol printed by name; arithmetic builds named expressions (1 * s stays s).
class NamedSymbol : public SymNodeImpl {
 public:
  explicit NamedSymbol(std::string name) : name_(std::move(name)) {}
  static SymInt make(std::string name) {
    return SymInt::from_node(new NamedSymbol(std::move(name)));  // NOLINT: intrusively counted
  }
  std::string str() const override { return name_; }
  std::optional<int64_t> maybe_value() const override { return std::nullopt; }
  SymInt add(const SymInt& o) const override { return make(name_ + "+" + o.str()); }
  SymInt sub(const SymInt& o) const override { return make(name_ + "-" + o.str()); }
  SymInt mul(const SymInt& o) const override {
    if (!o.is_symbolic() && o.raw() == 1) return SymInt::from_node(this);
    return make(name_ + "*" + o.str());
  }
  SymInt floordiv(const SymInt& o) const override { return make(name_ + "//" + o.str()); }
  SymInt mod(const SymInt& o) const override { return make(name_ + "%" + o.str()); }
  SymInt neg() const override { return make("-" + name_); }
  bool guard_eq(const SymInt&) const override {
    ADD_FAILURE() << "graph code must not guard on a symbol";
    return false;
  }
  bool guard_lt(const SymInt&) const override {
    ADD_FAILURE() << "graph code must not guard on a symbol";
    return false;
  }
  bool guard_gt(const SymInt&) const override {
    ADD_FAILURE() << "graph code must not guard on a symbol";
    return false;
  }

 private:
  std::string name_;
};

class GraphBuilder {
 public:
  Graph graph;

  Value input(std::string label, const Tensor& example, InputRole role = InputRole::UserArg) {
    Node& n = graph.add_input(role, std::move(label), ValueMeta::of(example));
    examples_[key(n.out())] = example.detach().clone();
    return n.out();
  }

  // Appends a call of `op` (full name) with `args` (the stack's leading arguments; defaults fill
  // the rest) and returns its outputs.
  std::vector<Value> call(std::string_view op, std::vector<Arg> args, SourceLoc loc = {}) {
    const ops::OpDef& def = op_named(op);
    ops::Stack stack, example_stack;
    std::vector<TensorUse> uses;
    for (size_t i = 0; i < args.size(); ++i) {
      int arg = static_cast<int>(i);
      if (const Value* v = std::get_if<Value>(&args[i].v)) {
        uses.push_back(TensorUse{arg, -1, *v});
        stack.emplace_back(Tensor());
        example_stack.emplace_back(examples_.at(key(*v)));
      } else if (const auto* list = std::get_if<std::vector<Value>>(&args[i].v)) {
        std::vector<Tensor> examples;
        for (size_t e = 0; e < list->size(); ++e) {
          uses.push_back(TensorUse{arg, static_cast<int>(e), (*list)[e]});
          examples.push_back(examples_.at(key((*list)[e])));
        }
        stack.emplace_back(std::vector<Tensor>(list->size()));
        example_stack.emplace_back(std::move(examples));
      } else {
        stack.push_back(std::get<ops::IValue>(args[i].v));
        example_stack.push_back(std::get<ops::IValue>(args[i].v));
      }
    }
    for (size_t i = stack.size(); i < def.schema.arguments.size(); ++i) {
      stack.push_back(def.schema.arguments[i].default_value.value());
    }
    std::vector<Tensor> results = ops::call(def, example_stack);
    std::vector<ValueMeta> metas;
    for (const Tensor& r : results) metas.push_back(ValueMeta::of(r));
    Node& n = graph.add_op(def, std::move(stack), std::move(uses), std::move(metas), loc);
    std::vector<Value> outs;
    for (size_t k = 0; k < results.size(); ++k) {
      outs.push_back(n.out(static_cast<int>(k)));
      examples_[key(outs.back())] = results[k];
    }
    return outs;
  }
  Value call1(std::string_view op, std::vector<Arg> args, SourceLoc loc = {}) {
    return call(op, std::move(args), loc).at(0);
  }

 private:
  static std::pair<const Node*, int> key(Value v) { return {v.node, v.output}; }
  std::map<std::pair<const Node*, int>, Tensor> examples_;
};

}  // namespace kiln::graph::testing
