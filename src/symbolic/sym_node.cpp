#include <kiln/core/error.h>
#include <kiln/symbolic/sym_node.h>

namespace kiln::symbolic {

SymInt SymNode::make(std::shared_ptr<ShapeEnv> env, SymExpr expr) {
  KILN_CHECK(env != nullptr, "SymNode::make: expected a ShapeEnv for {}", expr.str());
  KILN_INTERNAL_ASSERT(!expr.is_constant());
  // The node is owned by the SymInts that reference it (intrusive count; the last one deletes).
  return SymInt::from_node(new SymNode(std::move(env), std::move(expr)));  // NOLINT
}

const SymNode* sym_node_of(const SymInt& s) {
  if (!s.is_symbolic()) return nullptr;
  return dynamic_cast<const SymNode*>(s.node());
}

SymExpr expr_of(const SymInt& s) {
  if (!s.is_symbolic()) return s.raw();
  const SymNode* node = sym_node_of(s);
  KILN_CHECK(node != nullptr,
             "expected a SymInt made by a ShapeEnv, got {} (another kind of symbolic node)",
             s.str());
  return node->expr();
}

SymExpr SymNode::operand(const SymInt& other) const {
  if (const SymNode* node = sym_node_of(other)) {
    KILN_CHECK(node->env_ == env_, "SymInt arithmetic: {} and {} come from two different ShapeEnvs",
               str(), other.str());
  }
  return expr_of(other);
}

std::optional<int64_t> SymNode::maybe_value() const { return env_->hint(expr_); }

SymInt SymNode::add(const SymInt& other) const { return env_->to_symint(expr_ + operand(other)); }
SymInt SymNode::sub(const SymInt& other) const { return env_->to_symint(expr_ - operand(other)); }
SymInt SymNode::mul(const SymInt& other) const { return env_->to_symint(expr_ * operand(other)); }
SymInt SymNode::floordiv(const SymInt& other) const {
  return env_->to_symint(symbolic::floordiv(expr_, operand(other)));
}
SymInt SymNode::mod(const SymInt& other) const {
  return env_->to_symint(symbolic::mod(expr_, operand(other)));
}
SymInt SymNode::neg() const { return env_->to_symint(-expr_); }
bool SymNode::guard_eq(const SymInt& other) const { return env_->guard_eq(expr_, operand(other)); }
bool SymNode::guard_lt(const SymInt& other) const { return env_->guard_lt(expr_, operand(other)); }
bool SymNode::guard_gt(const SymInt& other) const { return env_->guard_lt(operand(other), expr_); }

}  // namespace kiln::symbolic
