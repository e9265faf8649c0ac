#include "inductor/loop_ir.h"

#include <kiln/core/error.h>

#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <set>

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

namespace kiln::inductor {

Expr rewrite(const Expr& e, const std::function<Index(const Index&)>& index,
             const std::function<int(int)>& buffer) {
  return rewrite(e, index, buffer, -1, nullptr);
}

Expr rewrite(const Expr& e, const std::function<Index(const Index&)>& index,
             const std::function<int(int)>& buffer, int loads_of, const Index& at) {
  std::map<const ExprNode*, Expr> done;
  std::function<Expr(const Expr&)> visit = [&](const Expr& x) -> Expr {
    if (auto it = done.find(x.get()); it != done.end()) return it->second;
    ExprNode n = *x;
    if (n.kind == ExprNode::Kind::Load && n.buffer == loads_of) n.index = at;
    if (n.kind == ExprNode::Kind::Load || n.kind == ExprNode::Kind::IndexAsValue) {
      n.index = index(n.index);
    }
    if (n.kind == ExprNode::Kind::Load) n.buffer = buffer(n.buffer);
    for (Expr& a : n.args) a = visit(a);
    Expr out = std::make_shared<const ExprNode>(std::move(n));
    done[x.get()] = out;
    return out;
  };
  return visit(e);
}

void for_each_load(const Expr& e, const std::function<void(const ExprNode&)>& f) {
  std::set<const ExprNode*> seen;
  std::function<void(const Expr&)> visit = [&](const Expr& x) {
    if (!seen.insert(x.get()).second) return;
    if (x->kind == ExprNode::Kind::Load) f(*x);
    for (const Expr& a : x->args) visit(a);
  };
  visit(e);
}

}  // namespace kiln::inductor

namespace kiln::inductor {

const char* c_type_or_null(DType d) {
  switch (d) {
    case DType::Bool:
      return "bool";
    case DType::UInt8:
      return "uint8_t";
    case DType::Int8:
      return "int8_t";
    case DType::Int16:
      return "int16_t";
    case DType::Int32:
      return "int32_t";
    case DType::Int64:
      return "int64_t";
    case DType::Float32:
      return "float";
    case DType::Float64:
      return "double";
    default:
      return nullptr;
  }
}

const char* c_type(DType d) {
  const char* t = c_type_or_null(d);
  if (t == nullptr) throw Error(fmt::format("inductor: no C type for {}", dtype_name(d)));
  return t;
}

bool is_half_float(DType d) { return d == DType::Float16 || d == DType::BFloat16; }

DType widened(DType d) { return is_half_float(d) ? DType::Float32 : d; }

const char* cpp_value_type(DType d) { return c_type(widened(d)); }

std::string cpp_rounded_to(DType d, const std::string& value) {
  return fmt::format("kiln_round_{}({})", d == DType::Float16 ? "half" : "bf16", value);
}

const char* cpp_storage_type(DType d) {
  if (d == DType::Float16) return "kiln_half";
  if (d == DType::BFloat16) return "kiln_bf16";
  return c_type(d);
}

const std::vector<std::string>& unary_math_functions() {
  static const std::vector<std::string> names = {
      "sin",   "cos", "tan",  "asin",  "acos", "atan", "sinh",  "cosh",  "tanh", "asinh", "acosh",
      "atanh", "exp", "exp2", "expm1", "log",  "log2", "log10", "log1p", "erf",  "erfc"};
  return names;
}

const std::vector<std::string>& binary_math_functions() {
  static const std::vector<std::string> names = {"pow", "atan2"};
  return names;
}

bool is_math_function(const std::string& op) {
  const auto& u = unary_math_functions();
  const auto& b = binary_math_functions();
  return std::find(u.begin(), u.end(), op) != u.end() ||
         std::find(b.begin(), b.end(), op) != b.end();
}

std::vector<const LoopNest*> loop_nests(const Step& step) {
  if (const auto* nest = std::get_if<LoopNest>(&step)) return {nest};
  std::vector<const LoopNest*> nests;
  if (const auto* choice = std::get_if<ExternOrGenerated>(&step)) {
    for (const LoopNest& n : choice->generated) nests.push_back(&n);
  }
  return nests;
}

std::vector<LoopNest*> loop_nests(Step& step) {
  if (auto* nest = std::get_if<LoopNest>(&step)) return {nest};
  std::vector<LoopNest*> nests;
  if (auto* choice = std::get_if<ExternOrGenerated>(&step)) {
    for (LoopNest& n : choice->generated) nests.push_back(&n);
  }
  return nests;
}

const ExternCall* extern_call(const Step& step) {
  if (const auto* choice = std::get_if<ExternOrGenerated>(&step)) return &choice->extern_call;
  return std::get_if<ExternCall>(&step);
}

std::vector<int> buffers_read(const Step& step) {
  std::vector<int> read;
  for (const LoopNest* nest : loop_nests(step)) {
    for (const Kernel& k : nest->parts) {
      for_each_load(k.body, [&read](const ExprNode& l) { read.push_back(l.buffer); });
    }
  }
  if (const ExternCall* call = extern_call(step)) {
    for (const ExternCall::Input& in : call->inputs) read.push_back(in.buffer);
  }
  return read;
}

std::vector<NestArgument> nest_arguments(const Program& program, const LoopNest& nest) {
  std::map<int, DType> reads;
  std::set<int> written;
  for (const Kernel& k : nest.parts) {
    for_each_load(k.body, [&](const ExprNode& l) { reads[l.buffer] = l.dtype; });
    written.insert(k.output);
  }
  std::set<int> local;
  for (const LoopNest::LocalBuffer& l : nest.locals) local.insert(l.buffer);
  std::set<int> taken;
  for (const auto& [b, dtype] : reads) taken.insert(b);
  taken.insert(written.begin(), written.end());
  std::vector<NestArgument> arguments;
  for (int b : taken) {
    if (local.count(b)) continue;
    const bool writes = written.count(b) > 0;
    arguments.push_back(
        {b, writes ? program.buffers[static_cast<size_t>(b)].dtype : reads.at(b), writes});
  }
  return arguments;
}

}  // namespace kiln::inductor
