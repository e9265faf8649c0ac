#include "inductor/loop_ir.h"

namespace kiln::inductor {

namespace {
Expr make(ExprNode n) { return std::make_shared<const ExprNode>(std::move(n)); }
}  // namespace

static ExprNode node(ExprNode::Kind kind, DType dtype) {
  ExprNode n;
  n.kind = kind;
  n.dtype = dtype;
  return n;
}

Expr load(int buffer, Index index, DType dtype) {
  ExprNode n = node(ExprNode::Kind::Load, dtype);
  n.buffer = buffer;
  n.index = std::move(index);
  return make(std::move(n));
}

Expr constant_of(double value, DType dtype) {
  ExprNode n = node(ExprNode::Kind::Constant, dtype);
  n.number = value;
  return make(std::move(n));
}

Expr integer_constant(int64_t value, DType dtype) {
  ExprNode n = node(ExprNode::Kind::Constant, dtype);
  n.integer = value;
  n.number = static_cast<double>(value);
  n.is_integer_constant = true;
  return make(std::move(n));
}

Expr index_value(Index index) {
  ExprNode n = node(ExprNode::Kind::IndexAsValue, DType::Int64);
  n.index = std::move(index);
  return make(std::move(n));
}

Expr call(std::string op, std::vector<Expr> args, DType dtype) {
  ExprNode n = node(ExprNode::Kind::Call, dtype);
  n.op = std::move(op);
  n.args = std::move(args);
  return make(std::move(n));
}

Expr cast(Expr value, DType dtype) {
  if (value->dtype == dtype) return value;
  ExprNode n = node(ExprNode::Kind::Cast, dtype);
  n.args = {std::move(value)};
  return make(std::move(n));
}

}  // namespace kiln::inductor
