#pragma once
// SymNode: the SymNodeImpl behind a symbolic SymInt — an expression over a ShapeEnv's symbols.
// Arithmetic builds new expressions (a result that folds to a constant is a plain SymInt again);
// comparisons go through the environment, which decides them statically or records a guard.
#include <kiln/core/symint.h>
#include <kiln/symbolic/shape_env.h>
#include <kiln/symbolic/sym_expr.h>

#include <memory>

namespace kiln::symbolic {

class SymNode final : public SymNodeImpl {
 public:
  // A symbolic SymInt reading `expr` (not a constant) in `env`.
  static SymInt make(std::shared_ptr<ShapeEnv> env, SymExpr expr);

  const SymExpr& expr() const { return expr_; }
  const std::shared_ptr<ShapeEnv>& env() const { return env_; }

  std::string str() const override { return expr_.str(); }
  std::optional<int64_t> maybe_value() const override;
  SymInt add(const SymInt& other) const override;
  SymInt sub(const SymInt& other) const override;
  SymInt mul(const SymInt& other) const override;
  SymInt floordiv(const SymInt& other) const override;
  SymInt mod(const SymInt& other) const override;
  SymInt neg() const override;
  bool guard_eq(const SymInt& other) const override;
  bool guard_lt(const SymInt& other) const override;
  bool guard_gt(const SymInt& other) const override;

 private:
  SymNode(std::shared_ptr<ShapeEnv> env, SymExpr expr)
      : env_(std::move(env)), expr_(std::move(expr)) {}
  // The other operand's expression, checking that it belongs to this environment.
  SymExpr operand(const SymInt& other) const;

  // Shared, not borrowed: a SymInt may outlive the trace that made it (graph metadata keeps
  // symbolic sizes), and its environment must live as long as it does.
  std::shared_ptr<ShapeEnv> env_;
  SymExpr expr_;
};

// The expression of a SymInt: its value for a plain one, its SymNode's expression otherwise
// (kiln::Error for a symbolic SymInt whose node is not a SymNode).
SymExpr expr_of(const SymInt& s);
// The SymNode of a symbolic SymInt, or nullptr (a plain SymInt or another kind of node).
const SymNode* sym_node_of(const SymInt& s);

}  // namespace kiln::symbolic
